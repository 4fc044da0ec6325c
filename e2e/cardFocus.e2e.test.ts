import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, describeViolations, settleScheme } from './axe.js';
import { type Served, type WindowSession, withQuery } from './harness.js';
import type { WindowClient } from './windowClient.js';
import { windowForFile } from './windowForFile.js';

/**
 * Issue 44, item 5, in `forkbench serve` and Chromium with a real shell agent: the keyboard's place on the
 * board survives an action that moves a card. After Assign the focus is on the card's Assign button in
 * Claimed; after Approve on the card in Done; after Reject on the card where it went. Up / Down and j / k
 * move between cards. Each is done from the keyboard, as a person without a mouse does it.
 */
const win = windowForFile({ client: true });
let w: WindowSession;
let served: Served;
let page: Page;
let host: WindowClient;
let key: string;
let agent: string;

beforeAll(async () => {
  w = win.session;
  ({ served, page } = w);
  host = win.host;
  const [thread] = await host.call('threads.list', {});
  key = thread!.key;
  for (const title of ['Assign me', 'Approve me', 'Reject me', 'First of two', 'Second of two']) await host.call('task.add', { key, title });
  // T-2 and T-3 are done by the agent, so they wait for review.
  agent = (await host.call('agent.launch', { key, profile: 'custom', command: 'forkbench claim T-2 && forkbench done T-2 && forkbench claim T-3 && forkbench done T-3; exec sh -i', cols: 80, rows: 24 })).id;
}, 60_000);

const focused = () => page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? document.activeElement?.tagName);

/** From the card to one of its controls, as the keyboard reaches it: the card is one Tab stop, and Right
 *  walks its actions (the toolbar inside it). */
async function tabTo(card: string, control: string): Promise<void> {
  await page.getByTestId(card).focus();
  for (let i = 0; i < 6 && (await focused()) !== control; i++) await page.keyboard.press('ArrowRight');
  expect(await focused()).toBe(control);
}

describe('the focus after an action on a card', () => {
  it('after Assign it is on the card, in its new column', async () => {
    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await expect.poll(() => page.getByTestId('card-T-3').getAttribute('data-state'), { timeout: 15_000 }).toBe('review');
    await tabTo('card-T-1', 'assign-T-1');
    await page.keyboard.press('Enter');
    await expect.poll(focused).toBe(`assign-T-1-to-${agent}`);
    // The menu says what each agent is doing, in its tab's words: this one's work waits for review.
    expect(await page.getByTestId(`assign-T-1-state-${agent}`).getAttribute('data-standing')).toBe('waiting-for-review');
    expect(await page.getByRole('menuitem', { name: /waiting for your review of T-2, T-3/ }).getAttribute('data-testid')).toBe(`assign-T-1-to-${agent}`);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('card-T-1').getAttribute('data-state'), { timeout: 10_000 }).toBe('claimed');
    await expect.poll(focused).toBe('assign-T-1');
    expect(await page.evaluate(() => !!document.activeElement?.closest('[data-testid="column-claimed"]'))).toBe(true);
  }, 60_000);

  it('after Approve it is on the card in Done', async () => {
    await tabTo('card-T-2', 'approve-T-2');
    await page.keyboard.press('Enter');
    await page.getByTestId('confirm-dialog').waitFor();
    await page.getByTestId('confirm-ok').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('card-T-2').getAttribute('data-state'), { timeout: 10_000 }).toBe('done');
    await expect.poll(focused).toBe('card-T-2');
  }, 60_000);

  it('after Reject it is on the card where it went', async () => {
    await tabTo('card-T-3', 'reject-T-3');
    await page.keyboard.press('Enter');
    await page.getByTestId('prompt-input').waitFor();
    await page.keyboard.type('The tests do not cover the error path');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('card-T-3').getAttribute('data-state'), { timeout: 10_000 }).not.toBe('review');
    await expect.poll(focused).toBe('card-T-3');
    await w.shot('card-focus-01-after-reject');
  }, 60_000);

  it('Up / Down and j / k move between cards, down a column and on to the next', async () => {
    await page.getByTestId('card-T-4').focus();
    await page.keyboard.press('ArrowDown');
    expect(await focused()).toBe('card-T-5');
    await page.keyboard.press('k');
    expect(await focused()).toBe('card-T-4');
    await page.keyboard.press('j');
    expect(await focused()).toBe('card-T-5');
    // Past the end of Open: the first card of the next column with cards.
    await page.keyboard.press('ArrowDown');
    const next = await focused();
    expect(next).toMatch(/^card-T-\d+$/);
    expect(await page.evaluate(() => document.activeElement?.closest('[data-testid^="column-"]')?.getAttribute('data-testid'))).not.toBe('column-open');
    await page.keyboard.press('ArrowUp');
    expect(await focused()).toBe('card-T-5');
    for (const s of ['light', 'dark'] as const) {
      await settleScheme(page, s);
      expect(describeViolations(await axeViolations(page, '.board')), s).toBe('');
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }, 60_000);
});

/** Both colour schemes settled (no colour transition running), then axe on `scope`. */
async function axeBothSchemes(scope: string): Promise<void> {
  for (const s of ['light', 'dark'] as const) {
    await settleScheme(page, s);
    expect(describeViolations(await axeViolations(page, scope)), s).toBe('');
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

const cardIds = () => page.locator('.board article[data-testid^="card-"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')));

/** Tab presses from the board's first card to its last, and where each landed. */
async function tabAcrossCards(): Promise<{ cards: number; presses: number; landed: string[] }> {
  const ids = await cardIds();
  await page.getByTestId(ids[0]!).focus();
  const landed: string[] = [];
  let presses = 0;
  while (presses < ids.length * 6 && (await focused()) !== ids[ids.length - 1]) {
    await page.keyboard.press('Tab');
    presses++;
    landed.push(String(await focused()));
  }
  return { cards: ids.length, presses, landed };
}

describe('one Tab stop per card, its actions inside', () => {
  it('Tab goes from card to card, comfortable and compact', async () => {
    await page.mouse.move(0, 0);
    for (const density of ['comfortable', 'compact'] as const) {
      if ((await page.getByTestId('density-toggle').getAttribute('aria-pressed')) !== String(density === 'compact')) await page.getByTestId('density-toggle').click();
      await expect.poll(() => page.locator('.board.compact').count()).toBe(density === 'compact' ? 1 : 0);
      const { cards, presses, landed } = await tabAcrossCards();
      expect(cards, density).toBeGreaterThanOrEqual(5);
      // One press per card: every stop on the way is a card, none is one of its buttons.
      expect({ density, presses, landed: landed.filter((t) => !/^card-T-\d+$/.test(t)) }).toEqual({ density, presses: cards - 1, landed: [] });
    }
  }, 60_000);

  it('Right reaches the actions, Left / Home / End move along them, Escape and Left go back to the card, Tab goes on', async () => {
    await page.getByTestId('card-T-4').focus();
    // A screen reader is told how, on the card: its description is dnd-kit's instructions.
    expect(
      await page.getByTestId('card-T-4').evaluate((el) => document.getElementById(el.getAttribute('aria-describedby') ?? '')?.textContent ?? ''),
    ).toContain('Right arrow reaches its buttons');
    await page.keyboard.press('ArrowRight');
    expect(await focused()).toBe('edit-T-4');
    expect(await page.getByTestId('card-actions-T-4').getAttribute('role')).toBe('toolbar');
    await page.keyboard.press('ArrowRight');
    expect(await focused()).toBe('assign-T-4');
    await page.keyboard.press('End');
    expect(await focused()).toBe('block-T-4');
    await page.keyboard.press('Home');
    expect(await focused()).toBe('edit-T-4');
    await page.keyboard.press('ArrowLeft');
    expect(await focused()).toBe('card-T-4');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Escape');
    expect(await focused()).toBe('card-T-4');
    // From inside a card's actions Tab goes to the next card; Shift+Tab back to the card they are in.
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('card-T-5');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('card-T-5');
    // The menu of Assign keeps its own keys: Down opens it, Escape closes it back onto its button.
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    expect(await focused()).toBe('assign-T-5');
    await page.keyboard.press('ArrowDown');
    await expect.poll(focused).toBe(`assign-T-5-to-${agent}`);
    await page.keyboard.press('Escape');
    expect(await focused()).toBe('assign-T-5');
    // Up / Down still move between cards from a focused card.
    await page.keyboard.press('Escape');
    await page.keyboard.press('ArrowUp');
    expect(await focused()).toBe('card-T-4');
  }, 60_000);

  it("a compact card's buttons, shown on hover or focus, cover none of its title", async () => {
    await host.call('task.add', { key, title: 'A long title that runs on past the end of a compact card, so the buttons have to find room beside it' });
    const card = page.getByTestId('card-T-6');
    await card.waitFor();
    if ((await page.getByTestId('density-toggle').getAttribute('aria-pressed')) !== 'true') await page.getByTestId('density-toggle').click();
    await expect.poll(() => page.locator('.board.compact').count()).toBe(1);
    await page.mouse.move(0, 0);
    const height = (await card.boundingBox())!.height;
    const actions = card.locator('.card-actions');
    for (const how of ['hover', 'focus'] as const) {
      // The pointer on the card's start (its grip and id), clear of wherever the buttons show.
      if (how === 'hover') {
        await card.scrollIntoViewIfNeeded();
        const box = (await card.boundingBox())!;
        await page.mouse.move(box.x + 6, box.y + 6);
      }
      else {
        await page.mouse.move(0, 0);
        await card.focus();
      }
      await expect.poll(() => actions.evaluate((el) => getComputedStyle(el).opacity), { message: how }).toBe('1');
      const covered = await page.getByTestId('card-title-T-6').evaluate((title) => {
        const r = title.getBoundingClientRect();
        const out: string[] = [];
        // Along the middle of its line, from its start to its end (where the buttons floated before).
        for (const f of [0.05, 0.25, 0.5, 0.75, 0.95, 0.99]) {
          const x = r.left + r.width * f;
          const y = r.top + r.height / 2;
          const at = document.elementFromPoint(x, y);
          if (!at || !title.contains(at)) out.push(`${Math.round(x)},${Math.round(y)}: ${at?.getAttribute('data-testid') ?? at?.tagName}`);
        }
        return out;
      });
      expect(covered, how).toEqual([]);
      // The buttons are all on the card, beside the title, and showing them moved nothing.
      const [t, a, c] = await Promise.all([page.getByTestId('card-title-T-6').boundingBox(), actions.boundingBox(), card.boundingBox()]);
      expect(a!.x, how).toBeGreaterThanOrEqual(t!.x + t!.width - 0.5);
      expect(a!.x + a!.width, how).toBeLessThanOrEqual(c!.x + c!.width);
      expect(Math.abs(c!.height - height), how).toBeLessThan(1);
    }
    await w.shot('card-focus-02-compact-actions-beside-the-title');
    // The board with a card's actions shown, both schemes.
    await axeBothSchemes('.board');
  }, 60_000);
});
