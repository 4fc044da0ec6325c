import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Served, type WindowSession, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { settleScheme } from './axe.js';
import { clippedBoxes, outsideViewport, poorContrast, visibleTexts } from './pageAudit.js';
import { typeIn } from './pageActions.js';
import type { WindowClient } from './windowClient.js';

/**
 * A new user's walk through the window (issue 20), at 800×700 and 1280×800, in the light and the dark
 * scheme: what a picky eye found, measured. Text readable (4.5:1) in the main area, the top bar, the log,
 * the palette; no box cutting its content off and no scrollbar in a one-line field; the first steps of a new
 * Thread wholly on screen; the Find button clear of the terminal's text; two agents' tabs fitting beside
 * the tab bar's buttons; the log's wrapped lines under one another; menus and the palette inside the
 * viewport; and, the host stopped, no agent state or lease time shown as if known, the log still readable.
 */
const win = windowForFile({ client: true });
let w: WindowSession;
let served: Served;
let page: Page;
let host: WindowClient;

beforeAll(() => {
  w = win.session;
  ({ served, page } = w);
  host = win.host;
});

const SCHEMES = ['light', 'dark'] as const;
const LONG_TITLE = 'Write the parser for the config files and make it handle comments, includes and environment variable expansion';

async function scheme(s: (typeof SCHEMES)[number]): Promise<void> {
  await settleScheme(page, s);
}

/** Every visible text under these roots below 4.5:1, after checking there is text to check. */
async function contrastProblems(...roots: string[]): Promise<string[]> {
  const problems: string[] = [];
  for (const root of roots) {
    const samples = await visibleTexts(page, root);
    expect(samples.length, `text in ${root}`).toBeGreaterThan(0);
    problems.push(...poorContrast(samples).map((p) => `${root} ${p}`));
  }
  return problems;
}

const box = async (testId: string) => {
  const b = await page.getByTestId(testId).boundingBox();
  if (!b) throw new Error(`${testId} is not on screen`);
  return b;
};

async function launchShellFromKeys(): Promise<string> {
  const before = await page.locator('[data-testid^="agent-tab-"]').count();
  await page.getByTestId('launch-menu').focus();
  await page.keyboard.press('ArrowDown');
  await page.getByTestId('launch-menu-list').waitFor();
  expect(await outsideViewport(page, '[data-testid="launch-menu-list"]'), 'the Launch menu leaves the viewport').toBe(0);
  await page.getByTestId('launch-shell').click();
  const tab = page.locator('[data-testid^="agent-tab-"]').nth(before);
  await expect.poll(() => tab.getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
  return ((await tab.getAttribute('data-testid')) as string).replace('agent-tab-', '');
}

describe('a new user walks through the window', () => {
  it('finds every state readable, uncut and on screen at 800 and 1280 px, light and dark', async () => {
    await page.setViewportSize({ width: 800, height: 700 });
    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');

    // A new Thread at 800×700: the three steps wholly on screen, none of them scrolled out of sight.
    const steps = page.getByTestId('first-steps');
    await steps.waitFor();
    const fit = await steps.evaluate((el) => ({ scroll: el.scrollHeight, client: el.clientHeight, bottom: el.getBoundingClientRect().bottom }));
    expect(fit.scroll, 'the first steps scroll inside their box').toBeLessThanOrEqual(fit.client);
    expect(fit.bottom).toBeLessThanOrEqual(700);
    for (const s of SCHEMES) {
      await scheme(s);
      expect(await contrastProblems('.topbar', '[data-testid="main"]'), `first open, ${s}`).toEqual([]);
      await w.shot(`walk-first-open-800-${s}`);
    }

    // A board with a long title, a note, and two shells, one holding a task.
    const [thread] = await host.call('threads.list', {});
    const key = thread!.key;
    await host.call('task.add', { key, title: LONG_TITLE });
    await host.call('task.add', { key, title: 'Add tests', body: 'Cover the parser with table tests.\nOne case per config feature.' });
    await host.call('task.add', { key, title: 'Update the docs' });
    await host.call('task.note', { key, taskId: 'T-1', text: 'Comments and includes first; environment expansion needs a decision on escaping.' });
    await page.getByTestId('card-T-3').waitFor();
    const first = await launchShellFromKeys();
    await launchShellFromKeys();
    await typeIn(page, first, 'forkbench claim T-2');
    await expect.poll(() => page.getByTestId('card-T-2').getAttribute('data-state'), { timeout: 10_000 }).toBe('claimed');
    await page.getByTestId(`agent-countdown-${first}`).waitFor();

    for (const [width, height] of [
      [800, 700],
      [1280, 800],
    ] as const) {
      await page.setViewportSize({ width, height });
      const wide = width > 1050;
      const roots = ['.topbar', '[data-testid="main"]', ...(wide ? ['[data-testid="log-panel"]'] : [])];
      for (const s of SCHEMES) {
        await scheme(s);
        expect(await contrastProblems(...roots), `board at ${width}, ${s}`).toEqual([]);
        await w.shot(`walk-board-${width}-${s}`);
      }
      expect(await clippedBoxes(page, '[data-testid="main"]'), `cut-off boxes at ${width}`).toEqual([]);
      if (wide) expect(await clippedBoxes(page, '[data-testid="log-panel"]'), `cut-off boxes in the log at ${width}`).toEqual([]);

      // The Details field is one line as tall as the title field beside it.
      const title = await box('add-task-title');
      const body = await box('add-task-body');
      expect(Math.abs(body.height - title.height), 'Details and title fields of one height').toBeLessThanOrEqual(1);

      // Find is beside the tabs, not over the terminal's text.
      const find = await box('terminal-find-hint');
      const term = await box(`terminal-${first}`);
      const overlaps = find.x < term.x + term.width && term.x < find.x + find.width && find.y < term.y + term.height && term.y < find.y + find.height;
      expect(overlaps, 'the Find button covers the terminal').toBe(false);

      // Two agents' tabs fit beside the bar's buttons: neither is scrolled out of sight.
      const tabs = await page.locator('.tabs').evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
      expect(tabs.scroll, `the tab strip at ${width} px`).toBeLessThanOrEqual(tabs.client);

      // The palette and its active row: inside the viewport, readable in both schemes.
      for (const s of SCHEMES) {
        await scheme(s);
        await page.locator('.brand').click();
        await page.keyboard.press('Control+Shift+P');
        await page.getByTestId('command-palette').waitFor();
        expect(await outsideViewport(page, '[data-testid="command-palette"]'), 'the palette leaves the viewport').toBe(0);
        expect(await contrastProblems('[data-testid="command-palette"]'), `palette at ${width}, ${s}`).toEqual([]);
        await w.shot(`walk-palette-${width}-${s}`);
        await page.keyboard.press('Escape');
        await page.getByTestId('command-palette').waitFor({ state: 'detached' });
      }
    }

    // The log at 1280 px: wrapped lines start under one another (a hanging indent after the time), and
    // the renewals box sits on its label's line.
    const starts = await page.locator('[data-testid="log-entry"]').evaluateAll((els) =>
      els.flatMap((el) => {
        const range = document.createRange();
        range.selectNodeContents(el);
        const rects = [...range.getClientRects()].filter((r) => r.width > 0);
        const firstTop = rects[0]?.top ?? 0;
        const later = rects.filter((r) => r.top > firstTop + 2);
        return later.length ? [Math.round(Math.min(...later.map((r) => r.left)) - el.getBoundingClientRect().left)] : [];
      }),
    );
    expect(starts.length, 'log entries that wrap').toBeGreaterThanOrEqual(2);
    expect(new Set(starts).size, `where wrapped log lines start: ${starts.join(', ')}`).toBe(1);
    const renewals = await page.locator('.log-renewals').evaluate((label) => {
      const box = (label.querySelector('input') as HTMLInputElement).getBoundingClientRect();
      const range = document.createRange();
      range.selectNodeContents(label.lastChild as Node);
      const text = range.getBoundingClientRect();
      return Math.abs(box.top + box.height / 2 - (text.top + text.height / 2));
    });
    expect(renewals, 'the renewals box off its label’s line (px)').toBeLessThanOrEqual(1.5);

    // Thread settings at 800 px: every field wide enough for what it says.
    await page.setViewportSize({ width: 800, height: 700 });
    await page.getByTestId('thread-settings').click();
    await page.getByTestId('settings-lease').waitFor();
    expect(await clippedBoxes(page, '.thread-settings'), 'settings at 800').toEqual([]);
    await w.shot('walk-settings-800');
    await page.getByTestId('settings-lease').press('Escape');

    // The host stops: no agent state or lease time shown as if known; the log grey but readable.
    await page.setViewportSize({ width: 1280, height: 800 });
    await served.stop();
    await expect.poll(() => page.getByTestId('layout').getAttribute('data-offline'), { timeout: 5000 }).toBe('true');
    expect(await page.locator('.layout .agent-state:visible, .layout .countdown:visible').count(), 'states and countdowns shown').toBe(0);
    for (const s of SCHEMES) {
      await scheme(s);
      expect(await contrastProblems('.topbar', '[data-testid="log-panel"]'), `host stopped, ${s}`).toEqual([]);
      await w.shot(`walk-host-stopped-1280-${s}`);
    }
  }, 90_000);
});
