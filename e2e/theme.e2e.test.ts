import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { contrastRatio, luminance, parseColor } from '../test/helpers/contrast.js';
import { type Served, type WindowSession, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { screenText, typeIn } from './pageActions.js';

/**
 * Issue 20, finding 7: the window follows the system's colour scheme. In a light scheme the page and the
 * terminal are light; when the system turns dark, both turn dark at once, the terminal with no reload; in
 * each, text keeps a contrast of 4.5:1 or more on what it is drawn on. What is checked is what Chromium
 * painted (pixels of a screenshot), as well as the computed colours.
 */
const win = windowForFile();
let w: WindowSession;
let served: Served;
let page: Page;

beforeAll(() => {
  w = win.session;
  ({ served, page } = w);
});

/** The colour Chromium painted at (x, y) of the page, read from a 1×1 screenshot decoded in the page. */
async function paintedAt(x: number, y: number): Promise<string> {
  const png = await page.screenshot({ clip: { x, y, width: 1, height: 1 } });
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 1;
    const ctx = canvas.getContext('2d') as CanvasRenderingContext2D;
    ctx.drawImage(img, 0, 0);
    const [r, g, b] = ctx.getImageData(0, 0, 1, 1).data;
    return `rgb(${r}, ${g}, ${b})`;
  }, png.toString('base64'));
}

/** A text colour and the opaque background it is drawn on: the first ancestor with a background. */
function textAndBackground(selector: string): Promise<{ fg: string; bg: string }> {
  return page.evaluate((sel) => {
    const el = document.querySelector(sel);
    if (!el) throw new Error(`${sel} is not in the page`);
    let bg = 'rgb(255, 255, 255)';
    for (let e: Element | null = el; e; e = e.parentElement) {
      const c = getComputedStyle(e).backgroundColor;
      if (c && c !== 'transparent' && !/rgba\(.*,\s*0\)$/.test(c)) {
        bg = c;
        break;
      }
    }
    return { fg: getComputedStyle(el).color, bg };
  }, selector);
}

interface SchemeLook {
  page: string;
  terminal: string;
  terminalText: string;
  contrasts: Record<string, number>;
}

/** What the window looks like now: painted backgrounds of the page and the terminal, and text contrasts. */
async function look(agentId: string): Promise<SchemeLook> {
  // A scheme change fades backgrounds and colours in (`transition` in the stylesheets): measured mid-way, a tab
  // read 1.6:1. Wait for the page's colour transitions to end, not for a fixed time.
  await page.waitForFunction(() =>
    document.getAnimations().every((a) => !(a instanceof CSSTransition) || !/color|background/.test(a.transitionProperty)),
  );
  const main = (await page.getByTestId('main').boundingBox()) as { x: number; y: number; width: number; height: number };
  const term = (await page.getByTestId(`terminal-${agentId}`).boundingBox()) as { x: number; y: number; width: number; height: number };
  const contrasts: Record<string, number> = {};
  for (const [name, sel] of [
    ['body text', 'body'],
    ['card title', '[data-testid="card-T-1"] .card-title'],
    ['card id (muted)', '[data-testid="card-T-1"] .card-id'],
    ['folder (muted)', '.thread-folder'],
    ['tab name', '.tab.active .tab-name'],
    ['event log line', '[data-testid="log-entry"] .log-summary'],
  ] as const) {
    const { fg, bg } = await textAndBackground(sel);
    contrasts[name] = contrastRatio(fg, bg);
  }
  // The terminal's text: xterm's row colour on the background xterm paints.
  const xterm = await page.evaluate(() => ({
    fg: getComputedStyle(document.querySelector('.xterm-rows') as Element).color,
    bg: getComputedStyle(document.querySelector('.xterm-scrollable-element') as Element).backgroundColor,
  }));
  contrasts['terminal text'] = contrastRatio(xterm.fg, xterm.bg);
  return {
    // Inside the thread head's padding (the page's own background), and the terminal's bottom right corner
    // (below the shell's few lines, so only background there).
    page: await paintedAt(main.x + 4, main.y + 4),
    terminal: await paintedAt(term.x + term.width - 12, term.y + term.height - 6),
    terminalText: xterm.fg,
    contrasts,
  };
}

describe('light and dark themes following the system', () => {
  it('is light in a light scheme and turns dark with the system, terminal too, text readable in both', async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await page.getByTestId('add-task-title').fill('Port the parser');
    await page.getByTestId('add-task-submit').click();
    await page.getByTestId('card-T-1').waitFor();
    await page.getByTestId('launch-menu').click();
    await page.getByTestId('launch-shell').click();
    const tab = page.locator('[data-testid^="agent-tab-"]').first();
    await expect.poll(() => tab.getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
    const agent = ((await tab.getAttribute('data-testid')) as string).replace('agent-tab-', '');
    await typeIn(page, agent, 'echo theme-check');
    await expect.poll(() => screenText(page, agent), { timeout: 10_000 }).toMatch(/^theme-check$/m);

    const light = await look(agent);
    await w.shot('theme-light');
    expect(luminance(parseColor(light.page))).toBeGreaterThan(0.8);
    expect(luminance(parseColor(light.terminal))).toBeGreaterThan(0.8);
    for (const [what, ratio] of Object.entries(light.contrasts)) expect(ratio, `${what} (light)`).toBeGreaterThanOrEqual(4.5);

    // The system turns dark: no reload, the same terminal.
    await page.emulateMedia({ colorScheme: 'dark' });
    await expect.poll(() => page.evaluate(() => getComputedStyle(document.querySelector('.xterm-rows') as Element).color)).not.toBe(light.terminalText);
    const dark = await look(agent);
    await w.shot('theme-dark');
    expect(luminance(parseColor(dark.page))).toBeLessThan(0.05);
    expect(luminance(parseColor(dark.terminal))).toBeLessThan(0.05);
    for (const [what, ratio] of Object.entries(dark.contrasts)) expect(ratio, `${what} (dark)`).toBeGreaterThanOrEqual(4.5);
    expect(await screenText(page, agent)).toMatch(/^theme-check$/m);

    // And back: a scheme change is followed each time, not once.
    await page.emulateMedia({ colorScheme: 'light' });
    await expect.poll(() => page.evaluate(() => getComputedStyle(document.querySelector('.xterm-rows') as Element).color)).toBe(light.terminalText);
    expect(luminance(parseColor((await look(agent)).terminal))).toBeGreaterThan(0.8);
  }, 90_000);
});
