import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { VerifyMailbox } from '../test/helpers/verifyMailbox.js';
import { axeViolations, describeViolations, type AxeViolation, settleScheme } from './axe.js';
import { printedWorktree } from './gitThread.js';
import { type Served, type WindowSession, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { launchFromMenu, screenText, typeIn } from './pageActions.js';
import type { WindowClient } from './windowClient.js';

/**
 * Issue 32, finding 7, in Chromium against `forkbench serve` on a git Thread: axe-core (4.14.1, its shipped
 * rule set, no rule or element left out) finds nothing on the board, a task's details, the diff of a task in
 * review, the Thread settings, the command palette and the shortcut list, in the light and the dark scheme,
 * with a task in every column and a claimed one. And a person who cannot see the countdown turn amber hears
 * it: the window's one polite live region says when a held lease enters its last quarter, and when it is
 * renewed after that warning.
 */
const win = windowForFile({ repo: true, client: true });
let w: WindowSession;
let served: Served;
let page: Page;
let host: WindowClient;
let key: string;
/** The shell that holds T-3 after the first test. */
let agent: string;
/** Where the shell waits to renew: it runs contained (issue 43), with a /tmp of its own, so it waits at the
 *  test's TCP gate rather than on a FIFO the test makes. */
let box: VerifyMailbox;

beforeAll(async () => {
  box = await VerifyMailbox.open();
  win.after(() => box?.close());
  w = win.session;
  ({ served, page } = w);
  host = win.host;
}, 60_000);

const SCHEMES = ['light', 'dark'] as const;
const card = (id: string) => page.getByTestId(`card-${id}`);

async function scheme(s: (typeof SCHEMES)[number]): Promise<void> {
  await settleScheme(page, s);
}

/** A task taken to review by the shell `agent`: claimed, a commit in the worktree its claim printed, done. */
async function toReview(agent: string, taskId: string, file: string): Promise<void> {
  const worktreeOf = async () => printedWorktree(await screenText(page, agent), served, agent, taskId);
  await typeIn(page, agent, `forkbench claim ${taskId}`);
  await expect.poll(worktreeOf, { timeout: 10_000 }).toBeTruthy();
  const worktree = (await worktreeOf()) as string;
  await typeIn(page, agent, `cd '${worktree}' && echo 'changed' > ${file} && git add ${file} && git commit -qm '${taskId}' && forkbench done ${taskId} --note "done"; cd '${served.folder}'`);
  await expect.poll(() => card(taskId).getAttribute('data-state'), { timeout: 10_000 }).toBe('review');
}

/** The window opened from serve's link, on its one Thread, live; once for the file. */
async function openThread(): Promise<void> {
  if (key) return;
  await page.goto(withQuery(served.url, 'debug=1'));
  await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
  key = (await host.call('threads.list', {}))[0]!.key;
}

/** Every violation axe finds in the page as it is now, by view and scheme ('' when none). */
async function violationsIn(view: string, s: string): Promise<string> {
  const v = describeViolations(await axeViolations(page));
  return v ? `${view}, ${s}:\n${v}` : '';
}

describe('accessibility of the window', () => {
  it('axe finds no violation on a new Thread’s first steps, light and dark', async () => {
    await openThread();
    await page.getByTestId('first-steps').waitFor();
    const found: string[] = [];
    for (const s of SCHEMES) {
      await scheme(s);
      found.push(await violationsIn('first open', s));
    }
    expect(found.filter(Boolean).join('\n\n')).toBe('');
  }, 60_000);

  it('axe finds no violation on the board, details, diff, settings, palette and shortcuts, light and dark', async () => {
    await openThread();
    const found: string[] = [];
    const check = async (view: string, s: string) => {
      const v = await violationsIn(view, s);
      if (v) found.push(v);
    };
    for (const title of ['Write the parser', 'Review the notes', 'Port the lexer', 'Tidy the readme', 'Wait on the API', 'Flaky migration'])
      await host.call('task.add', { key, title });
    await card('T-6').waitFor();
    agent = await launchFromMenu(page);

    // A task in every column: open T-1, review T-2 (a diff to read), claimed T-3, done T-4, blocked T-5,
    // needs-attention T-6 (three agents whose process exited holding it: the poison limit).
    await toReview(agent, 'T-2', 'review.txt');
    await toReview(agent, 'T-4', 'done.txt');
    await host.call('task.approve', { key, taskId: 'T-4' });
    await expect.poll(() => card('T-4').getAttribute('data-state'), { timeout: 10_000 }).toBe('done');
    await host.call('task.block', { key, taskId: 'T-5', reason: 'waiting on the API team' });
    for (let i = 0; i < 3; i++) {
      const quitter = await host.call('agent.launch', { key, profile: 'custom', command: 'forkbench claim T-6', cols: 80, rows: 24 });
      await expect.poll(() => page.getByTestId(`agent-tab-${quitter.id}`).getAttribute('data-status'), { timeout: 10_000 }).toBe('exited');
      await host.call('agent.close', { key, agentId: quitter.id });
    }
    await expect.poll(() => card('T-6').getAttribute('data-state'), { timeout: 10_000 }).toBe('needs-attention');
    await typeIn(page, agent, 'forkbench claim T-3');
    await expect.poll(() => card('T-3').getAttribute('data-state'), { timeout: 10_000 }).toBe('claimed');
    await page.getByTestId(`agent-tab-${agent}`).click();

    for (const s of SCHEMES) {
      await scheme(s);
      await check('board', s);
      await w.shot(`a11y-board-${s}`);

      await page.getByTestId('card-title-T-3').click();
      await page.getByTestId('task-details').waitFor();
      await expect.poll(() => page.getByTestId('details-history').textContent()).toContain('claimed');
      await check('details', s);
      await w.shot(`a11y-details-${s}`);
      await page.keyboard.press('Escape');
      await page.getByTestId('task-details').waitFor({ state: 'detached' });

      await page.getByTestId('approve-T-2').click();
      await expect.poll(() => page.getByTestId('diff-patch').textContent()).toContain('+changed');
      await check('diff', s);
      await w.shot(`a11y-diff-${s}`);
      await page.getByTestId('diff-close').click();
      await page.getByTestId('diff-view').waitFor({ state: 'detached' });

      await page.getByTestId('thread-settings').click();
      await page.getByTestId('settings-lease').waitFor();
      await check('settings', s);
      await w.shot(`a11y-settings-${s}`);
      await page.getByTestId('settings-lease').press('Escape');
      await page.getByTestId('settings-lease').waitFor({ state: 'detached' });

      await page.locator('.brand').click();
      await page.keyboard.press('Control+Shift+P');
      await page.getByTestId('command-palette').waitFor();
      await check('palette', s);
      await w.shot(`a11y-palette-${s}`);
      await page.keyboard.press('Escape');
      await page.getByTestId('command-palette').waitFor({ state: 'detached' });

      await page.locator('.brand').click();
      await page.keyboard.press('?');
      await page.getByTestId('shortcut-help').waitFor();
      await check('shortcuts', s);
      await w.shot(`a11y-shortcuts-${s}`);
      await page.keyboard.press('Escape');
      await page.getByTestId('shortcut-help').waitFor({ state: 'detached' });
    }
    // A card picked up from the keyboard (Space), as the shortcut list teaches.
    await card('T-1').focus();
    await page.keyboard.press('Space');
    await expect.poll(() => card('T-1').getAttribute('class')).toContain('dragging');
    await page.locator('.card-preview').waitFor();
    // Left out, with its reason: the contrast of the card left in its column while its copy (the drag
    // preview, drawn at full contrast and checked with the rest) moves between drop targets. That ghost is
    // faded on purpose to say "it was here"; its text is part of no control one can use during the drag,
    // which WCAG 1.4.3 leaves out (incidental text). Every other rule, and its other elements, still count.
    const ghost = async (target: string) => page.evaluate((sel) => document.querySelector(sel)?.closest('.card.dragging') != null, target);
    const duringDrag: AxeViolation[] = [];
    for (const v of await axeViolations(page)) {
      const targets = v.id === 'color-contrast' ? (await Promise.all(v.targets.map(async (t) => ((await ghost(t)) ? null : t)))).filter((t): t is string => t !== null) : v.targets;
      if (targets.length > 0) duringDrag.push({ ...v, targets });
    }
    if (duringDrag.length > 0) found.push(`keyboard drag, dark:\n${describeViolations(duringDrag)}`);
    await page.keyboard.press('Escape');
    await expect.poll(() => card('T-1').getAttribute('class')).not.toContain('dragging');
    // A narrow window: the side panels become drawers (styles/narrow.css), the folder leaves the top bar.
    await page.setViewportSize({ width: 800, height: 600 });
    for (const s of SCHEMES) {
      await scheme(s);
      await check('board at 800×600', s);
      await page.getByTestId('toggle-threads').click();
      await expect.poll(() => page.getByTestId('threads-panel').isVisible()).toBe(true);
      await check('Threads drawer at 800×600', s);
      await w.shot(`a11y-threads-drawer-${s}`);
      await page.getByTestId('toggle-threads').click();
      await expect.poll(() => page.getByTestId('threads-panel').isVisible()).toBe(false);
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    expect(found.join('\n\n')).toBe('');
  }, 180_000);

  it('the one polite live region says when a held lease enters its last quarter, and when it is renewed after that', async () => {
    const region = page.getByTestId('lease-announcer');
    expect(await page.locator('[aria-live]').evaluateAll((els) => els.filter((e) => e.getAttribute('data-testid') === 'lease-announcer').map((e) => [e.getAttribute('aria-live'), e.getAttribute('role')]))).toEqual([['polite', 'status']]);
    // T-3's claim has only ever been far from its end: nothing was said of it.
    expect(await region.textContent()).toBe('');
    await host.call('task.release', { key, taskId: 'T-3' });
    await expect.poll(() => card('T-3').getAttribute('data-state')).toBe('open');
    // A 12 s lease: its last quarter is 3 s. The shell claims T-1 and waits, idle (no CPU, no output), at a
    // TCP gate the test opens once the warning is heard; then it renews. Idle, its lease is renewed by the
    // liveness check for one lease's length, then left to run down.
    const LEASE_MS = 12_000;
    await host.call('board.setSettings', { key, patch: { leaseMs: LEASE_MS } });
    await expect.poll(() => page.getByTestId('thread-settings').textContent()).toContain('lease 12 s');
    await typeIn(page, agent, `forkbench claim T-1; (${box.waitAt('renew-now')}; forkbench renew T-1) &`);
    await expect.poll(() => card('T-1').getAttribute('data-holder'), { timeout: 10_000 }).toBe(agent);
    const name = (await page.getByTestId(`agent-tab-${agent}`).getAttribute('data-name')) as string;
    expect(await region.textContent()).toBe('');

    const warnedAt = Date.now();
    await expect.poll(() => region.textContent(), { timeout: 60_000, interval: 50 }).toMatch(new RegExp(`^T-1's lease for ${name} ends in 0:0[1-3]$`));
    console.log(`warned after ${Date.now() - warnedAt} ms: "${await region.textContent()}"`);
    // Heard as the countdown enters its last quarter: the countdown redraws four times a second (its
    // data-remaining-ms with it), so it shows under a quarter left within a quarter second. (Its amber
    // came earlier here: the idle shell was judged stalled, which turns it amber too.)
    await expect
      .poll(async () => Number(await page.getByTestId('countdown-T-1').getAttribute('data-remaining-ms')), { timeout: 500, interval: 20 })
      .toBeLessThan(LEASE_MS / 4);
    await w.shot('a11y-lease-warned');

    // The agent renews (its gate opened: the shell's read of it ends).
    box.openGate('renew-now');
    await expect.poll(() => region.textContent(), { timeout: 10_000, interval: 50 }).toBe(`T-1's lease for ${name} renewed`);
    expect(Number(await page.getByTestId('countdown-T-1').getAttribute('data-remaining-ms'))).toBeGreaterThan(LEASE_MS / 4);
    expect(await card('T-1').getAttribute('data-state')).toBe('claimed');
    // One live region in the window for leases, not one per card.
    expect(await page.locator('.card [aria-live]').count()).toBe(0);
  }, 120_000);
});
