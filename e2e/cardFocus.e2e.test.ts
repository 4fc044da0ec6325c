import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, describeViolations } from './axe.js';
import { openWindow, type Served, type WindowSession, withQuery } from './harness.js';
import { windowOn, type WindowClient } from './windowClient.js';

/**
 * Issue 44, item 5, in `forkbench serve` and Chromium with a real shell agent: the keyboard's place on the
 * board survives an action that moves a card. After Assign the focus is on the card's Assign button in
 * Claimed; after Approve on the card in Done; after Reject on the card where it went. Up / Down and j / k
 * move between cards. Each is done from the keyboard, as a person without a mouse does it.
 */
let w: WindowSession;
let served: Served;
let page: Page;
let host: WindowClient;
let key: string;
let agent: string;

beforeAll(async () => {
  w = await openWindow();
  ({ served, page } = w);
  host = await windowOn(served);
  const [thread] = await host.call('threads.list', {});
  key = thread!.key;
  for (const title of ['Assign me', 'Approve me', 'Reject me', 'First of two', 'Second of two']) await host.call('task.add', { key, title });
  // T-2 and T-3 are done by the agent, so they wait for review.
  agent = (await host.call('agent.launch', { key, profile: 'custom', command: 'forkbench claim T-2 && forkbench done T-2 && forkbench claim T-3 && forkbench done T-3; exec sh -i', cols: 80, rows: 24 })).id;
}, 60_000);

afterAll(async () => {
  host?.close();
  await w?.close();
});

const focused = () => page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? document.activeElement?.tagName);

/** Tab from the card to one of its controls, as the keyboard reaches it. */
async function tabTo(card: string, control: string): Promise<void> {
  await page.getByTestId(card).focus();
  for (let i = 0; i < 6 && (await focused()) !== control; i++) await page.keyboard.press('Tab');
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
      await page.emulateMedia({ colorScheme: s });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      await page.waitForFunction(() =>
        document.getAnimations().every((a) => !(a instanceof CSSTransition) || a.playState !== 'running' || !/color|background|border/.test(a.transitionProperty)),
      );
      expect(describeViolations(await axeViolations(page, '.board')), s).toBe('');
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }, 60_000);
});
