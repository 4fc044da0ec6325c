import * as fs from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, describeViolations, settleScheme } from './axe.js';
import { SHOTS, type Served, type WindowSession, withQuery } from './harness.js';
import { agentTabIds, dragCard, screenText, typeIn } from './pageActions.js';
import type { WindowClient } from './windowClient.js';
import { windowForFile } from './windowForFile.js';

/**
 * Issue 44, items 2 and 4, in `forkbench serve` and Chromium with real shells: every agent shows who owes
 * whom in one set of words (a shell holding a claim at its prompt is "idle holding T-1", not a finished
 * turn; an agent whose work waits for review is "waiting for your review", counted as waiting for the
 * person and reached by Alt+Shift+N), and twelve agents are all on screen at 1440×900 and each one a drop
 * target at 800×600, where it stands, with no scrolling first. axe-core finds nothing, light and dark. And
 * `forkbench board` piped into a reader that stops early ends without a stack trace.
 */
const AGENTS = 12;

const win = windowForFile({ client: true });
let w: WindowSession;
let served: Served;
let page: Page;
let host: WindowClient;
let key: string;
let shell: string;
let reviewer: string;
let ids: string[] = [];

beforeAll(async () => {
  w = win.session;
  ({ served, page } = w);
  host = win.host;
  const [thread] = await host.call('threads.list', {});
  key = thread!.key;
  for (let i = 1; i <= AGENTS + 2; i++) await host.call('task.add', { key, title: `Task number ${i}` });
}, 60_000);

/** The README's tour shows the window as this test leaves it: each of these shots is copied to docs/images. */
const DOCS_IMAGES = join(import.meta.dirname, '..', 'docs', 'images');
async function tourShot(name: string): Promise<void> {
  await w.shot(name);
  fs.mkdirSync(DOCS_IMAGES, { recursive: true });
  fs.copyFileSync(join(SHOTS, `${name}.png`), join(DOCS_IMAGES, `${name}.png`));
}

/** The standing's words and kind on an element that shows one (AgentStateBadge). */
const standing = (testId: string) =>
  page.getByTestId(testId).evaluate((el) => ({ kind: el.getAttribute('data-standing'), words: (el.querySelector('.standing-words') as HTMLElement).innerText.replace(/\s+/g, ' ').trim() }));

/** The chips that are not wholly inside the window and the strip's visible box, or not the element the page
 *  would hit at their centre (covered, clipped), or whose parts cover each other. */
function allShown(): Promise<string[]> {
  return page.evaluate(() => {
    const strip = document.querySelector('[role="tablist"]') as HTMLElement;
    const s = strip.getBoundingClientRect();
    const bad: string[] = [];
    for (const tab of document.querySelectorAll<HTMLElement>('[role="tab"]')) {
      const r = tab.getBoundingClientRect();
      const inside = r.left >= Math.max(0, s.left) - 0.5 && r.right <= Math.min(innerWidth, s.right) + 0.5 && r.top >= Math.max(0, s.top) - 0.5 && r.bottom <= Math.min(innerHeight, s.bottom) + 0.5;
      const hit = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
      if (!inside || !hit || !tab.contains(hit)) bad.push(tab.dataset.name ?? tab.id);
      // Its parts side by side: each one's own centre is itself (the ring never over the icon, nor the × over the time).
      const item = tab.closest('[data-tab-item]') as HTMLElement;
      for (const part of item.querySelectorAll<HTMLElement>('.tab-name, .agent-state-icon, .countdown, .tab-close')) {
        const p = part.getBoundingClientRect();
        const at = document.elementFromPoint((p.left + p.right) / 2, (p.top + p.bottom) / 2);
        if (!at || !(part === at || part.contains(at))) bad.push(`${tab.dataset.name}: ${part.className}`);
      }
    }
    return bad;
  });
}

async function scheme(s: 'light' | 'dark'): Promise<void> {
  await settleScheme(page, s);
}

describe('who owes whom, and twelve agents at a glance', () => {
  it('a shell holding a claim at its prompt is "idle holding", and one whose work waits for review is "waiting for your review"', async () => {
    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    // The login shell: its prompt marks (OSC 133) say when it is back at its prompt.
    shell = (await host.call('agent.launch', { key, profile: 'shell', cols: 80, rows: 24 })).id;
    reviewer = (await host.call('agent.launch', { key, profile: 'custom', command: `forkbench claim T-${AGENTS + 2} && forkbench done T-${AGENTS + 2}; exec sh -i`, cols: 80, rows: 24 })).id;
    await expect.poll(() => screenText(page, shell), { timeout: 45_000 }).toMatch(/[#$]\s*$/);
    await typeIn(page, shell, `forkbench claim T-${AGENTS + 1}`);
    await expect.poll(() => page.getByTestId(`card-T-${AGENTS + 1}`).getAttribute('data-holder'), { timeout: 15_000 }).toBe(shell);
    // The same words on the tab and on the card, and in the tab's accessible name.
    await expect.poll(() => standing(`agent-state-${shell}`), { timeout: 15_000 }).toEqual({ kind: 'idle-holding', words: `idle holding T-${AGENTS + 1}` });
    expect(await standing(`card-agent-state-T-${AGENTS + 1}`)).toEqual({ kind: 'idle-holding', words: `idle holding T-${AGENTS + 1}` });
    expect(await page.getByRole('tab', { name: new RegExp(`idle holding T-${AGENTS + 1}`) }).getAttribute('data-testid')).toBe(`agent-tab-${shell}`);

    await expect.poll(() => page.getByTestId(`card-T-${AGENTS + 2}`).getAttribute('data-state'), { timeout: 15_000 }).toBe('review');
    const review = { kind: 'waiting-for-review', words: `waiting for your review of T-${AGENTS + 2}` };
    await expect.poll(() => standing(`agent-state-${reviewer}`), { timeout: 15_000 }).toEqual(review);
    expect(await standing(`card-agent-state-T-${AGENTS + 2}`)).toEqual(review);
    // Not a stall: no red card.
    expect(await page.getByTestId(`card-T-${AGENTS + 2}`).getAttribute('class')).not.toContain('stalled');
    // The person owes it: the header counts it, and Alt+Shift+N goes to it.
    await expect.poll(() => page.getByTestId('waiting-count').getAttribute('data-count')).toBe('1');
    await page.getByTestId(`agent-tab-${shell}`).click();
    await page.keyboard.press('Alt+Shift+KeyN');
    await expect.poll(() => page.getByTestId(`agent-tab-${reviewer}`).getAttribute('aria-selected')).toBe('true');
    // The agent list says the same.
    await page.getByTestId('agent-list-button').click();
    expect(await standing(`agent-list-state-${reviewer}`)).toEqual(review);
    expect(await standing(`agent-list-state-${shell}`)).toEqual({ kind: 'idle-holding', words: `idle holding T-${AGENTS + 1}` });
    await page.keyboard.press('Escape');
    await tourShot('tour-2-review');
  }, 90_000);

  it('`forkbench board | head -1` (or `| true`) ends quietly: no stack trace, exit 0', async () => {
    // The shell runs contained (issue 43): its /tmp is its own, and of the test's folders it writes only the
    // Thread folder (a Thread without git, where agents have no other place). The files go there.
    const d = served.folder;
    // Each run's stderr and exit status into files; `true` closes the pipe before the CLI writes at all.
    await typeIn(
      page,
      shell,
      `{ forkbench board 2>${d}/err-head; echo $? >${d}/code-head; } | head -1; { forkbench board 2>${d}/err-true; echo $? >${d}/code-true; } | true; touch ${d}/piped`,
    );
    await expect.poll(() => fs.existsSync(join(d, 'piped')), { timeout: 20_000 }).toBe(true);
    for (const how of ['head', 'true']) {
      expect(fs.readFileSync(join(d, `err-${how}`), 'utf8'), how).toBe('');
      expect(fs.readFileSync(join(d, `code-${how}`), 'utf8').trim(), how).toBe('0');
    }
  }, 60_000);

  it(`${AGENTS} agents are all on screen at 1440×900, and the page has no axe violations, light and dark`, async () => {
    const before = await agentTabIds(page);
    for (let i = before.length; i < AGENTS; i++) await host.call('agent.launch', { key, profile: 'custom', command: 'exec sh -i', cols: 80, rows: 24 });
    await expect.poll(async () => (await agentTabIds(page)).length, { timeout: 20_000 }).toBe(AGENTS);
    await expect.poll(() => page.locator('[role="tab"][data-status="running"]').count(), { timeout: 20_000 }).toBe(AGENTS);
    ids = await agentTabIds(page);
    await page.setViewportSize({ width: 1440, height: 900 });
    await expect.poll(allShown).toEqual([]);
    for (const s of ['light', 'dark'] as const) {
      await scheme(s);
      expect(describeViolations(await axeViolations(page)), s).toBe('');
    }
    await scheme('light');
    for (const [width, height] of [
      [800, 600],
      [1440, 900],
      [2560, 1440],
    ] as const) {
      await page.setViewportSize({ width, height });
      await expect.poll(allShown).toEqual([]);
      await w.shot(`glance-agents-${width}x${height}`);
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    await tourShot('tour-1-thread');
    // Thread settings: a control that says so, and a form under its heading; no axe violations there either.
    await page.getByRole('button', { name: /^Settings/ }).click();
    await page.getByRole('heading', { name: 'Thread settings' }).waitFor();
    for (const s of ['light', 'dark'] as const) {
      await scheme(s);
      expect(describeViolations(await axeViolations(page, '.thread-settings-panel')), `settings, ${s}`).toBe('');
    }
    await scheme('light');
    await tourShot('tour-3-settings');
    await page.getByTestId('settings-lease').press('Escape');
    await page.getByRole('heading', { name: 'Thread settings' }).waitFor({ state: 'detached' });
  }, 90_000);

  it(`at 800×600 every one of the ${AGENTS} agents takes a task dropped on it where it stands`, async () => {
    await page.setViewportSize({ width: 800, height: 600 });
    await expect.poll(allShown).toEqual([]);
    const claimsBefore = await Promise.all(ids.map(async (id) => Number(await page.getByTestId(`agent-tab-${id}`).getAttribute('data-claims'))));
    for (const [i, id] of ids.entries()) {
      const task = `T-${i + 1}`;
      // Each drop lands on the agent's chip as it stands: no scrolling of the strip first.
      const scrolled = await page.getByTestId('agent-strip').evaluate((el) => el.scrollTop);
      await dragCard(page, task, `agent-tab-${id}`);
      // Its tab counts the claim (the Claimed column draws only the cards in its view).
      await expect.poll(() => page.getByTestId(`agent-tab-${id}`).getAttribute('data-claims'), { timeout: 10_000 }).toBe(String(claimsBefore[i]! + 1));
      expect(await page.getByTestId('agent-strip').evaluate((el) => el.scrollTop)).toBe(scrolled);
    }
    await w.shot('glance-02-dropped-800');
  }, 120_000);
});
