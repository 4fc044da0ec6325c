import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { VerifyMailbox } from '../test/helpers/verifyMailbox.js';
import { axeViolations, describeViolations } from './axe.js';
import { type Served, type WindowSession, withQuery } from './harness.js';
import { agentTabIds } from './pageActions.js';
import type { WindowClient } from './windowClient.js';
import { windowForFile } from './windowForFile.js';

/**
 * Tabs that scale (issue 32): a dozen shell agents in `forkbench serve`, in Chromium at 800×600, 1440×900 and
 * 3840×2160. Every agent is reachable by the list at the strip's end and by Ctrl+PgDn / Ctrl+PgUp, each
 * selected tab is scrolled wholly into view with its controls inside it and uncovered, axe-core finds no
 * interactive element inside a tab, a card held at the strip's edge moves no tab (issue 44: they wrap), and the
 * tab's countdown stops when its agent says `done` (the task waits in review), as the card's does.
 */
const AGENTS = 12;
const SIZES = [
  { width: 800, height: 600 },
  { width: 1440, height: 900 },
  { width: 3840, height: 2160 },
] as const;
/** How long a card is held at the edge: dnd-kit's auto-scroll took 2.5 s to reach the end of 12 tabs. */
const HOLD_MS = 3000;
/** How often the held pointer twitches by a pixel. */
const JITTER_MS = 100;

const win = windowForFile({ client: true });
let w: WindowSession;
let served: Served;
let page: Page;
let host: WindowClient;
let key: string;
let ids: string[] = [];
/** The agent that claims T-1 says done once the test opens the gate `done` here: it runs contained (issue
 *  43), with a /tmp of its own, so it waits on the test's TCP gate rather than on a file the test writes. */
let box: VerifyMailbox;

beforeAll(async () => {
  box = await VerifyMailbox.open();
  win.after(() => box?.close());
  w = win.session;
  ({ served, page } = w);
  host = win.host;
  const [thread] = await host.call('threads.list', {});
  key = thread!.key;
  for (const title of ['Port the parser', 'Write the tests', 'Drag me over the tabs']) await host.call('task.add', { key, title });
  // Shell agents, launched as the Launch menu's custom command does; the first two hold tasks.
  const commands = [
    `forkbench claim T-1 && ${box.waitAt('done')} && forkbench done T-1; exec sh -i`,
    'forkbench claim T-2; exec sh -i',
  ];
  for (let i = 0; i < AGENTS; i++) await host.call('agent.launch', { key, profile: 'custom', command: commands[i] ?? 'exec sh -i', cols: 80, rows: 24 });
}, 90_000);

const selectedId = () => page.locator('[role="tab"][aria-selected="true"]').getAttribute('data-testid').then((t) => t?.slice('agent-tab-'.length));

interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/**
 * The tab's wrapper, the visible strip, and each control of the tab (the tab, its state badge, countdown
 * ring and ×), with whether the control's own centre is the element the page would hit there (not covered).
 */
function geometry(id: string) {
  return page.evaluate((agentId) => {
    const box = (el: Element): Box => {
      const r = el.getBoundingClientRect();
      return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
    };
    const tab = document.querySelector(`[data-testid="agent-tab-${agentId}"]`) as HTMLElement;
    const item = (tab.closest('[data-tab-item]') ?? tab) as HTMLElement;
    const strip = document.querySelector('[role="tablist"]') as HTMLElement;
    const controls = [tab, ...item.querySelectorAll('.agent-state, .countdown, .tab-close, .tab-button')].map((el) => {
      const b = box(el);
      const hit = document.elementFromPoint((b.left + b.right) / 2, (b.top + b.bottom) / 2);
      return { what: `${el.className}`, box: b, uncovered: !!hit && (el === hit || el.contains(hit)) };
    });
    return { item: box(item), strip: box(strip), controls };
  }, id);
}

const inside = (a: Box, b: Box) => a.left >= b.left - 0.5 && a.right <= b.right + 0.5 && a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5;

/** The selected agent's tab is wholly on screen in the strip, and every control of it inside it, uncovered. */
async function expectShownWhole(id: string): Promise<void> {
  await expect.poll(selectedId).toBe(id);
  await expect
    .poll(async () => {
      const g = await geometry(id);
      const bad = g.controls.filter((c) => !inside(c.box, g.item) || !c.uncovered).map((c) => c.what);
      return { inStrip: inside(g.item, g.strip), bad };
    })
    .toEqual({ inStrip: true, bad: [] });
}

/** axe-core on the tab strip, the given rules only. */
async function axeOnStrip(rules: string[]): Promise<string> {
  return describeViolations(await axeViolations(page, '.tabbar', { rules }));
}

describe(`${AGENTS} agents' tabs`, () => {
  it(`opens on ${AGENTS} running shells, two of them holding a task`, async () => {
    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await expect.poll(async () => (await agentTabIds(page)).length, { timeout: 20_000 }).toBe(AGENTS);
    ids = await agentTabIds(page);
    await expect.poll(() => page.locator('[role="tab"][data-status="running"]').count(), { timeout: 20_000 }).toBe(AGENTS);
    await expect.poll(() => page.getByTestId('card-T-1').getAttribute('data-holder'), { timeout: 20_000 }).toBe(ids[0]);
    await expect.poll(() => page.getByTestId('card-T-2').getAttribute('data-holder'), { timeout: 20_000 }).toBe(ids[1]);
  }, 60_000);

  for (const size of SIZES) {
    it(`at ${size.width}×${size.height}: no tab's control is cut off, and a clicked tab is whole on screen`, async () => {
      await page.setViewportSize(size);
      // Every tab's controls lie inside it, whether or not it is scrolled into view now.
      for (const id of ids) {
        const g = await geometry(id);
        expect(g.controls.filter((c) => !inside(c.box, g.item)).map((c) => c.what), id).toEqual([]);
      }
      // Each tab clicked (the browser brings a partly hidden one in to click it): wholly in the strip,
      // its controls inside it and uncovered (the third tab's × was under its ring).
      for (const id of ids) {
        await page.getByTestId(`agent-tab-${id}`).click({ position: { x: 8, y: 8 } });
        await expectShownWhole(id);
      }
      await page.getByTestId(`agent-tab-${ids[0]}`).click({ position: { x: 8, y: 8 } });
      await expectShownWhole(ids[0]!);
      await w.shot(`agent-tabs-${size.width}-01-strip`);
    }, 60_000);

    it(`at ${size.width}×${size.height}: axe-core finds no interactive element inside a tab`, async () => {
      await page.setViewportSize(size);
      // The × and Relaunch are the tab's siblings, hidden from the tablist's reading (Delete closes a tab).
      expect(await axeOnStrip(['nested-interactive', 'aria-required-children', 'aria-required-parent'])).toBe('');
    });

    it(`at ${size.width}×${size.height}: every agent by the list and by the keys, each tab whole when selected`, async () => {
      await page.setViewportSize(size);
      await page.getByTestId(`agent-tab-${ids[0]}`).click({ position: { x: 8, y: 8 } });
      await expectShownWhole(ids[0]!);

      // The list: every agent, its state, its claims with their countdowns.
      await page.getByTestId('agent-list-button').click();
      const list = page.getByTestId('agent-list');
      await list.waitFor();
      expect(await list.locator('[role="menuitemradio"]').count()).toBe(AGENTS);
      expect(await page.getByTestId(`agent-list-item-${ids[0]}`).getAttribute('aria-checked')).toBe('true');
      expect(await page.getByTestId(`agent-list-item-${ids[1]}`).innerText()).toContain('T-2 Write the tests');
      await page.getByTestId('agent-list-countdown-T-2').waitFor();
      await w.shot(`agent-tabs-${size.width}-02-list`);
      await page.keyboard.press('Escape');
      await list.waitFor({ state: 'detached' });

      // Each agent chosen from the list by a click: selected, its tab scrolled into view.
      for (const id of [...ids].reverse()) {
        await page.getByTestId('agent-list-button').click();
        await page.getByTestId(`agent-list-item-${id}`).click();
        await expectShownWhole(id);
      }
      // And from the keyboard, from a terminal: Alt+Shift+A opens it on the selected agent (the first now),
      // End goes to the last, Enter goes there; Escape closes it and gives the focus back.
      await page.getByTestId(`terminal-${ids[0]}`).click();
      await page.keyboard.press('Alt+Shift+KeyA');
      await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe(`agent-list-item-${ids[0]}`);
      await page.keyboard.press('Escape');
      await list.waitFor({ state: 'detached' });
      await expect.poll(() => page.evaluate(() => !!document.activeElement?.closest(`.pane-view`))).toBe(true);
      await page.keyboard.press('Alt+Shift+KeyA');
      await page.keyboard.press('End');
      await page.keyboard.press('Enter');
      await expectShownWhole(ids[AGENTS - 1]!);

      // Ctrl+PgDn through all of them, wrapping to the first; Ctrl+PgUp back round to the first, from a terminal.
      await page.getByTestId(`agent-tab-${ids[0]}`).click();
      for (let i = 1; i <= AGENTS; i++) {
        await page.keyboard.press('Control+PageDown');
        await expectShownWhole(ids[i % AGENTS]!);
      }
      for (let i = AGENTS - 1; i >= 0; i--) {
        await page.keyboard.press('Control+PageUp');
        await expectShownWhole(ids[(i + AGENTS) % AGENTS]!);
      }
      // As a click on a tab does, each key showed its agent's terminal, which has the focus.
      expect(await page.evaluate(() => document.activeElement?.closest('[data-testid^="terminal-"]')?.getAttribute('data-testid'))).toBe(`terminal-${ids[0]}`);
      await w.shot(`agent-tabs-${size.width}-03-keys`);
    }, 120_000);
  }

  it('the shortcut list and the palette name the keys', async () => {
    await page.setViewportSize(SIZES[1]);
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('?');
    const help = await page.getByTestId('shortcut-help').innerText();
    for (const k of ['Ctrl+PgDn', 'Ctrl+PgUp', 'Alt+Shift+A', 'Delete']) expect(help).toContain(k);
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+Shift+KeyP');
    await page.getByTestId('palette-input').fill('agent tab');
    expect(await page.getByTestId('palette-item-agent-next').innerText()).toContain('Ctrl+PgDn');
    await page.keyboard.press('Escape');
  });

  it('a card held at the strip’s end leaves every tab where it stands, and the tab under it takes it', async () => {
    // Issue 32 stepped a scrolling strip one tab at a time, so a held card did not overshoot the tab it was
    // aimed at; the chips now wrap (issue 44), all twelve on screen: a held card must move nothing at all.
    await page.setViewportSize(SIZES[1]);
    const strip = page.locator('[role="tablist"]');
    const where = () =>
      page.locator('[role="tab"]').evaluateAll((els) => els.map((e) => `${Math.round(e.getBoundingClientRect().left)},${Math.round(e.getBoundingClientRect().top)}`));
    const before = await where();
    const s = (await strip.boundingBox())!;
    const grip = (await page.getByTestId('drag-T-3').boundingBox())!;
    await page.mouse.move(grip.x + grip.width / 2, grip.y + grip.height / 2);
    await page.mouse.down();
    const end = { x: s.x + s.width - 12, y: s.y + s.height / 2 };
    await page.mouse.move(end.x, end.y, { steps: 12 });
    // Held there as a hand holds, a pixel this way and that, as long as 12 tabs once took to scroll by.
    for (let t = 0; t < HOLD_MS; t += JITTER_MS) {
      await page.mouse.move(end.x + ((t / JITTER_MS) % 2), end.y);
      await page.evaluate((ms) => new Promise((r) => setTimeout(r, ms)), JITTER_MS);
    }
    expect(await where()).toEqual(before);
    expect(await strip.evaluate((el) => [el.scrollLeft, el.scrollTop])).toEqual([0, 0]);
    // The last agent's tab, where it stood: under the card, it is the drop target.
    const last = (await page.getByTestId(`agent-tab-${ids[AGENTS - 1]}`).boundingBox())!;
    await page.mouse.move(last.x + last.width / 2, last.y + last.height / 2, { steps: 8 });
    await expect.poll(() => page.getByTestId(`agent-tab-${ids[AGENTS - 1]}`).getAttribute('class')).toContain('drop-over');
    await w.shot('agent-tabs-1440-04-drag-hover-end');
    // Let go nowhere: the drag is put back, nothing assigned.
    await page.keyboard.press('Escape');
    await page.mouse.up();
    expect(await page.getByTestId('card-T-3').getAttribute('data-state')).toBe('open');
  }, 60_000);

  it('the tab’s countdown stops when its agent says done, as its card’s does', async () => {
    await page.setViewportSize(SIZES[1]);
    const a = ids[0]!;
    await page.getByTestId(`agent-tab-${a}`).click();
    await page.getByTestId(`agent-countdown-${a}`).waitFor();
    await page.getByTestId('countdown-T-1').waitFor();
    box.openGate('done');
    await expect.poll(() => page.getByTestId('card-T-1').getAttribute('data-state'), { timeout: 15_000 }).toBe('review');
    await expect.poll(() => page.getByTestId('countdown-T-1').count()).toBe(0);
    await expect.poll(() => page.getByTestId(`agent-countdown-${a}`).count()).toBe(0);
    // The agent still holds T-1 in review (a reject would give it back), and its ring stays gone.
    expect(await page.getByTestId(`agent-tab-${a}`).getAttribute('data-claims')).toBe('1');
    await page.getByTestId('agent-list-button').click();
    expect(await page.getByTestId('agent-list-claim-T-1').innerText()).toContain('in review');
    expect(await page.getByTestId('agent-list-countdown-T-1').count()).toBe(0);
    await page.keyboard.press('Escape');
    await w.shot('agent-tabs-1440-05-done-ring-stopped');
    // The other agent's ring goes on: T-2 is still worked on.
    await page.getByTestId(`agent-countdown-${ids[1]}`).waitFor();
  }, 60_000);

  it('arrows move among the tabs; Delete on a tab closes its agent (asking first); an exited agent’s Relaunch is the palette’s too, no control inside its tab', async () => {
    await page.setViewportSize(SIZES[1]);
    const last = ids[AGENTS - 1]!;
    // One tab stop for the strip, the selected tab; arrows move the focus among the tabs (wrapping), Home
    // and End to the ends, Enter selects.
    await page.getByTestId(`agent-tab-${ids[1]}`).click({ position: { x: 8, y: 8 } });
    await expect.poll(() => page.locator('[role="tab"][tabindex="0"]').getAttribute('data-testid')).toBe(`agent-tab-${ids[1]}`);
    expect(await page.locator('[role="tab"][tabindex="-1"]').count()).toBe(AGENTS - 1);
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('data-testid'));
    await page.getByTestId(`agent-tab-${ids[1]}`).focus();
    await page.keyboard.press('ArrowLeft');
    expect(await focused()).toBe(`agent-tab-${ids[0]}`);
    await page.keyboard.press('ArrowLeft');
    expect(await focused()).toBe(`agent-tab-${last}`);
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowRight');
    expect(await focused()).toBe(`agent-tab-${ids[1]}`);
    await page.keyboard.press('End');
    expect(await focused()).toBe(`agent-tab-${last}`);
    await page.keyboard.press('Enter');
    await expectShownWhole(last);
    // The WAI-ARIA tabs pattern's key for a tab that can be closed: it asks, as the × does.
    await page.getByTestId(`agent-tab-${last}`).focus();
    await page.keyboard.press('Delete');
    await page.getByTestId('confirm-dialog').waitFor({ timeout: 10_000 });
    expect(await page.getByTestId('confirm-body').textContent()).toContain('is running');
    await page.keyboard.press('Escape');
    await page.getByTestId('confirm-dialog').waitFor({ state: 'detached', timeout: 10_000 });
    expect(await agentTabIds(page)).toContain(last);

    // Its shell ends: the tab says exited and offers Relaunch beside it (for the pointer), and the palette
    // offers it from the keyboard; the strip still has no control inside a tab, none beside the tabs.
    await host.call('agent.input', { key, agentId: last, data: 'exit\r' });
    await expect.poll(() => page.getByTestId(`agent-tab-${last}`).getAttribute('data-status'), { timeout: 10_000 }).toBe('exited');
    await page.getByTestId(`relaunch-${last}`).waitFor({ timeout: 10_000 });
    expect(await axeOnStrip(['nested-interactive', 'aria-required-children', 'aria-required-parent'])).toBe('');
    const name = (await page.getByTestId(`agent-tab-${last}`).getAttribute('data-name')) as string;
    await page.keyboard.press('Control+Shift+KeyP');
    await page.getByTestId('palette-input').fill(`relaunch ${name}`);
    await page.getByTestId(`palette-item-agent-relaunch-${last}`).click({ timeout: 10_000 });
    // Relaunched in its place: a new agent (new id), running.
    await expect.poll(async () => (await agentTabIds(page)).includes(last)).toBe(false);
    const relaunched = (await agentTabIds(page))[AGENTS - 1]!;
    await expect.poll(() => page.getByTestId(`agent-tab-${relaunched}`).getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
    ids[AGENTS - 1] = relaunched;
    await w.shot('agent-tabs-1440-06-relaunched');
  }, 60_000);
});
