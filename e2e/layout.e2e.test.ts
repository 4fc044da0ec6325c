import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { TerminalSize } from '../src-shared/terminal/terminalSize.js';
import { type Served, type WindowSession, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { screenText, typeIn } from './pageActions.js';

/**
 * Issue 20, finding 1: the window at 800, 1024, 1280 and 1920 px wide. At each width the main area has the
 * width the side panels leave it, a card is in view and answers a click, the board's columns are readable
 * (or the board scrolls sideways), and the terminal is at least a usable size. One screenshot per width.
 */
const win = windowForFile();
let w: WindowSession;
let served: Served;
let page: Page;

beforeAll(() => {
  w = win.session;
  ({ served, page } = w);
});

/** A 38-character title: it wrapped to four lines in the six equal columns. */
const LONG_TITLE = 'Write the parser for the config files';

const box = async (testId: string) => {
  const b = await page.getByTestId(testId).boundingBox();
  if (!b) throw new Error(`${testId} is not on screen`);
  return b;
};

function terminalSize(agentId: string): Promise<{ cols: number; rows: number } | null> {
  return page.evaluate(
    (id) => (window as unknown as { __forkbenchDebug?: { terminalSize(id: string): { cols: number; rows: number } | null } }).__forkbenchDebug?.terminalSize(id) ?? null,
    agentId,
  );
}

async function launchShell(): Promise<string> {
  await page.getByTestId('launch-menu').click();
  await page.getByTestId('launch-shell').click();
  const tab = page.locator('[data-testid^="agent-tab-"]').first();
  await tab.waitFor();
  await expect.poll(() => tab.getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
  return ((await tab.getAttribute('data-testid')) as string).replace('agent-tab-', '');
}

/** Rows of text a wrapped element takes: its height over its line height. */
function linesOf(testId: string): Promise<number> {
  return page.getByTestId(testId).locator('.card-title').evaluate((el) => Math.round(el.getBoundingClientRect().height / parseFloat(getComputedStyle(el).lineHeight)));
}

describe('the window from 800 px up', () => {
  it('keeps the main area, a clickable card, readable columns and a usable terminal at every width', async () => {
    await page.setViewportSize({ width: 800, height: 700 });
    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await page.getByTestId('thread-goal').waitFor();
    for (const title of [LONG_TITLE, 'Add tests', 'Update the docs']) {
      await page.getByTestId('add-task-title').fill(title);
      await page.getByTestId('add-task-submit').click();
    }
    await expect.poll(() => page.getByTestId('card-T-3').getAttribute('data-state')).toBe('open');
    const agent = await launchShell();
    await typeIn(page, agent, 'forkbench claim T-2');
    await expect.poll(() => page.getByTestId('card-T-2').getAttribute('data-state'), { timeout: 10_000 }).toBe('claimed');

    for (const [width, height] of [
      [800, 700],
      [1024, 768],
      [1280, 800],
      [1920, 1080],
    ] as const) {
      await page.setViewportSize({ width, height });
      const narrow = width <= 1050;
      // The side panels: in the grid when wide, drawers behind toggles when narrow.
      await expect.poll(() => page.getByTestId('threads-panel').isVisible()).toBe(!narrow);
      expect(await page.getByTestId('log-panel').isVisible()).toBe(!narrow);
      expect(await page.getByTestId('toggle-threads').isVisible()).toBe(narrow);
      const main = await box('main');
      const side = narrow ? 0 : (await box('threads-panel')).width + (await box('log-panel')).width;
      expect(main.x).toBeGreaterThanOrEqual(0);
      expect(Math.round(main.x + main.width)).toBeLessThanOrEqual(width);
      expect(main.width).toBeGreaterThanOrEqual(width - side - 2);
      expect(main.width).toBeGreaterThan(width * 0.55);

      // A card wholly in view, and it answers a click: Edit opens its form, Escape closes it.
      const card = await box('card-T-1');
      expect(card.x).toBeGreaterThanOrEqual(main.x);
      expect(card.x + card.width).toBeLessThanOrEqual(main.x + main.width);
      expect(card.y + card.height).toBeLessThanOrEqual(height);
      await page.getByTestId('edit-T-1').click();
      await page.getByTestId('edit-title-T-1').waitFor();
      await page.keyboard.press('Escape');
      await page.getByTestId('edit-title-T-1').waitFor({ state: 'detached' });

      // Columns with cards are readable; empty ones fold; what does not fit scrolls sideways.
      const columns = await page.locator('.board .column').evaluateAll((els) =>
        els.map((el) => ({ empty: el.classList.contains('empty'), width: el.getBoundingClientRect().width })),
      );
      for (const c of columns) {
        if (c.empty) expect(c.width).toBeLessThanOrEqual(40);
        else expect(c.width).toBeGreaterThanOrEqual(199.5);
      }
      expect(columns.filter((c) => !c.empty)).toHaveLength(2);
      const board = await page.locator('.board').evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth, overflow: getComputedStyle(el).overflowX }));
      if (board.scroll > board.client) expect(board.overflow).toBe('auto');
      if (width >= 1280) expect(await linesOf('card-T-1')).toBeLessThanOrEqual(2);

      // The terminal: fitted to its box, and never narrower than usable.
      await expect.poll(async () => (await terminalSize(agent))?.cols ?? 0).toBeGreaterThanOrEqual(TerminalSize.usableCols);
      const term = await box(`terminal-${agent}`);
      expect(term.width).toBeGreaterThan(TerminalSize.usableCols * 6);
      await w.shot(`layout-${width}`);
    }

    // At 800 px the panels are one click away, and Escape puts them back.
    await page.setViewportSize({ width: 800, height: 700 });
    await page.getByTestId('toggle-threads').click();
    await expect.poll(() => page.locator('[data-testid^="thread-item-"]').first().isVisible()).toBe(true);
    await w.shot('layout-800-threads-drawer');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByTestId('threads-panel').isVisible()).toBe(false);
    await page.getByTestId('toggle-log').click();
    await expect.poll(() => page.locator('[data-testid="log-entry"]').first().isVisible()).toBe(true);
    await w.shot('layout-800-log-drawer');
    await page.getByTestId('toggle-log').click();
    await expect.poll(() => page.getByTestId('log-panel').isVisible()).toBe(false);

    // The pty is told the size the page shows: the shell itself says so.
    const size = (await terminalSize(agent)) as { cols: number; rows: number };
    await typeIn(page, agent, 'stty size');
    await expect.poll(() => screenText(page, agent), { timeout: 10_000 }).toContain(`${size.rows} ${size.cols}`);

    // Squeezed below what the layout supports, the terminal is clipped, not shrunk below usable. The box's
    // width per column at 800 px is at least a cell's width, so a box under usableCols of those is too narrow.
    const cellPx = (await box(`terminal-${agent}`)).width / size.cols;
    await page.setViewportSize({ width: 240, height: 400 });
    await expect.poll(async () => (await box(`terminal-${agent}`)).width).toBeLessThan(TerminalSize.usableCols * cellPx);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const squeezed = (await terminalSize(agent)) as { cols: number; rows: number };
    expect(squeezed.cols).toBeGreaterThanOrEqual(TerminalSize.usableCols);
    expect(squeezed.rows).toBeGreaterThanOrEqual(TerminalSize.usableRows);
    await w.shot('layout-240-terminal-clipped');
  }, 120_000);
});
