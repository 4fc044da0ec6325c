import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { VerifyMailbox } from '../test/helpers/verifyMailbox.js';
import { axeResult, describeViolations } from './axe.js';
import { type Served, type WindowSession } from './harness.js';
import { windowForFile } from './windowForFile.js';
import type { WindowClient } from './windowClient.js';

/**
 * Issue 32, finding 3 and finding 7's scrollable-region-focusable, in Chromium against `forkbench serve`:
 * after 2,011 task adds the event log said "300 of 302" and forgot the rest without a word, and a filter on
 * `T-2` showed T-2000…T-2011 but none of T-2's own claim, reassignment or refused write. Now the panel says
 * how much of the history it holds, reads older pages from the board's journal, and a task id in the filter
 * matches that task only, its oldest events included. The list of lines scrolls from the keyboard, and
 * axe-core finds nothing on the panel.
 */
/** Enough ids beginning with T-2 (T-20…T-29, T-200…, T-2000…T-2011) and more events than the host keeps. */
const TASKS = 2011;

const win = windowForFile({ client: true });
let w: WindowSession;
let served: Served;
let page: Page;
let host: WindowClient;
/** The first agent writes its late note once the test opens a gate here: it runs contained (issue 43), with a
 *  /tmp of its own, so it waits on the test's TCP gate rather than on a file the test writes. */
let box: VerifyMailbox;

beforeAll(async () => {
  box = await VerifyMailbox.open();
  win.after(() => box?.close());
  w = win.session;
  ({ served, page } = w);
  host = win.host;
}, 60_000);

const entries = () => page.locator('[data-testid="log-entry"]');
/** Each line's summary (its time and kind are in elements of their own, run together in its whole text). */
const entryTexts = () => page.locator('[data-testid="log-entry"] .log-summary').allTextContents();

describe('the event log over a long day', () => {
  it('filters T-2 to T-2 only, its add included; reaches T-1 by paging back; scrolls from the keyboard; axe finds nothing', async () => {
    const [thread] = await host.call('threads.list', {});
    const key = thread!.key;
    // The tasks, at most 64 calls in flight so the journal's group commit batches them.
    let next = 1;
    const adder = async () => {
      while (next <= TASKS) await host.call('task.add', { key, title: `task number ${next++}` });
    };
    await Promise.all(Array.from({ length: 64 }, adder));

    // T-2's day: claimed by one agent, given to another by the person, and the first agent's late note refused.
    const a = await host.call('agent.launch', { key, profile: 'custom', command: `forkbench claim T-2 && ${box.waitAt('go')}; forkbench note T-2 still on it; exec sleep 600`, cols: 80, rows: 24 });
    const b = await host.call('agent.launch', { key, profile: 'custom', command: 'exec sleep 600', cols: 80, rows: 24 });
    const t2 = async () => (await host.call('thread.snapshot', { key })).board.tasks.find((t) => t.id === 'T-2');
    await expect.poll(async () => (await t2())?.claim?.agentId, { timeout: 15_000 }).toBe(a.id);
    await host.call('task.assign', { key, taskId: 'T-2', agentId: b.id });
    box.openGate('go');
    await expect
      .poll(() => host.pushes.some((p) => p.type === 'board-event' && p.event.kind === 'write-rejected' && p.event.taskId === 'T-2'), { timeout: 15_000 })
      .toBe(true);
    const head = (await host.call('thread.snapshot', { key })).board.seq;
    expect(head).toBeGreaterThan(2000);

    await page.goto(served.url);
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await expect.poll(() => entries().count(), { timeout: 15_000 }).toBeGreaterThan(0);
    // The filter on T-2: T-2's events only, its add (long before the newest 300) included; no T-20, T-2000….
    await page.getByTestId('log-filter').fill('T-2');
    await expect.poll(async () => (await entryTexts()).some((t) => t.includes('T-2 claimed by')), { timeout: 10_000 }).toBe(true);
    expect((await entryTexts()).filter((t) => /T-2\d/.test(t))).toEqual([]);
    await expect.poll(async () => (await entryTexts()).some((t) => t.includes('T-2 added by you')), { timeout: 10_000 }).toBe(true);
    const t2Lines = await entryTexts();
    expect(t2Lines.filter((t) => /T-2\d/.test(t))).toEqual([]);
    expect(t2Lines.every((t) => /(?<![\w-])T-2(?!\d)/.test(t))).toBe(true);
    const kinds = await entries().evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')));
    expect(kinds).toEqual(expect.arrayContaining(['task-added', 'grant', 'reassign', 'write-rejected']));
    expect(t2Lines.find((t) => t.includes('reassigned'))).toMatch(/T-2 reassigned from .* to .* by you/);
    expect(await page.getByTestId('log-task-history').textContent()).toMatch(/^T-2: \d+ events read from the board, all it keeps\./);
    await w.shot('event-history-01-filter-T-2');

    // Without a filter, it says what it holds of the history, and that more exists.
    await page.getByTestId('log-filter').fill('');
    const coverage = page.getByTestId('log-coverage');
    // (Renewals and agent states go on meanwhile: the counts are read, not assumed.)
    const counts = async () => {
      const m = /^Read the ([\d,]+) newest of ([\d,]+) events(?:; [\d,]+ hidden by the (?:filter|renewals box))?\.$/.exec((await coverage.textContent()) ?? '');
      return m ? { shown: Number(m[1]!.replace(/,/g, '')), of: Number(m[2]!.replace(/,/g, '')) } : null;
    };
    await expect.poll(counts).toMatchObject({ shown: expect.any(Number) });
    expect((await counts())!.shown).toBeGreaterThanOrEqual(300);
    expect((await counts())!.shown).toBeLessThan(head);
    expect((await counts())!.of).toBeGreaterThanOrEqual(head);
    expect(await page.getByTestId('log-load-older').isVisible()).toBe(true);
    await w.shot('event-history-02-newest-of-all');

    // T-1's add, from before the newest 300: scrolled to the top, the panel reads the next older page; the
    // Load older button reads the rest.
    const held = (await counts())!.shown;
    const scroller = page.getByTestId('log-scroll');
    await scroller.evaluate((el) => el.scrollTo({ top: -el.scrollHeight }));
    await expect.poll(async () => (await counts())?.shown, { timeout: 10_000 }).toBeGreaterThanOrEqual(held + 500);
    const t1Added = entries().filter({ hasText: 'T-1 added by you' });
    for (let i = 0; i < 6 && (await t1Added.count()) === 0; i++) {
      const more = page.getByTestId('log-load-older');
      await more.click();
      await expect.poll(() => more.isDisabled().catch(() => false)).toBe(false);
    }
    await expect.poll(() => t1Added.count()).toBe(1);
    await expect.poll(() => coverage.textContent()).toMatch(/^Read all [\d,]+ events(?:; [\d,]+ hidden by the (?:filter|renewals box))?\.$/);
    expect(await page.getByTestId('log-load-older').count()).toBe(0);
    await t1Added.scrollIntoViewIfNeeded();
    expect(await t1Added.isVisible()).toBe(true);
    await w.shot('event-history-03-T-1-reached');

    // The lines scroll from the keyboard: the list takes focus by Tab from the filter's row, and End/Home move it.
    await page.getByTestId('log-show-renewals').focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('log-scroll');
    expect(await scroller.getAttribute('aria-label')).toBeTruthy();
    const top = () => scroller.evaluate((el) => Math.round(el.scrollTop));
    const before = await top();
    await page.keyboard.press('End');
    await expect.poll(top).not.toBe(before);
    const atEnd = await top();
    await page.keyboard.press('PageUp');
    await expect.poll(top).not.toBe(atEnd);

    // axe-core on the panel: nothing, and in particular no scrollable region that the keyboard cannot reach.
    const result = await axeResult(page, '[data-testid="event-log"]');
    expect(describeViolations(result.violations)).toBe('');
    expect(result.passes).toContain('scrollable-region-focusable');
  }, 240_000);
});
