import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Served, type WindowSession, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import type { WindowClient } from './windowClient.js';

/**
 * Issue 20, finding 5: a big board can be searched. Among 5,000 tasks (virtualized columns: the card sought
 * is not in the page at first), `/` and a few words find it, and the keyboard alone assigns it to an agent
 * through the card's "Assign to…" menu.
 */
const TASKS = 5000;
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

const focused = () => page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? null);

describe(`search over a board of ${TASKS} tasks`, () => {
  it('finds a task deep in a virtualized column and assigns it with the keyboard only', async () => {
    const [thread] = await host.call('threads.list', {});
    const key = thread!.key;
    let next = 1;
    const adder = async () => {
      while (next <= TASKS) {
        const n = next++;
        await host.call('task.add', { key, title: n === 4321 ? 'Migrate the billing exports' : `Task number ${n}` });
      }
    };
    // 256 calls in flight, so the journal's group commit batches them (as bigBoard does)
    await Promise.all(Array.from({ length: 256 }, adder));
    const agent = await host.call('agent.launch', { key, profile: 'shell', cols: 80, rows: 24 });

    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('column-open').locator('.count').textContent(), { timeout: 30_000 }).toBe(String(TASKS));
    await expect.poll(() => page.getByTestId(`agent-tab-${agent.id}`).getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
    expect(await page.getByTestId('card-T-4321').count()).toBe(0); // deep in the column: not in the page

    // `/` from the page, a few words: the one task that matches is drawn.
    // (the new agent's terminal has the focus, where `/` is the shell's: the page's own focus first)
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.keyboard.press('/');
    expect(await focused()).toBe('board-search');
    await page.keyboard.type('billing export');
    await expect.poll(() => page.getByTestId('card-T-4321').count()).toBe(1);
    expect(await page.locator('.board [data-testid^="card-T-"]').count()).toBe(1);
    await w.shot('search-01-found-among-5000');

    // Enter goes to the match; Right to its "Assign to…" (the card is one Tab stop, its buttons a toolbar in
    // it); Enter opens the menu on the first agent; Enter assigns.
    await page.keyboard.press('Enter');
    expect(await focused()).toBe('card-T-4321');
    for (let i = 0; i < 5 && (await focused()) !== 'assign-T-4321'; i++) await page.keyboard.press('ArrowRight');
    expect(await focused()).toBe('assign-T-4321');
    await page.keyboard.press('Enter');
    await page.getByTestId('assign-menu-T-4321').waitFor();
    expect(await focused()).toBe(`assign-T-4321-to-${agent.id}`);
    await w.shot('search-02-assign-menu');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('card-T-4321').getAttribute('data-holder'), { timeout: 10_000 }).toBe(agent.id);
    expect(await page.getByTestId('card-T-4321').getAttribute('data-state')).toBe('claimed');
    // the card moved to the Claimed column; the focus went with it
    await expect.poll(focused).toBe('assign-T-4321');

    // Searching by state or holder works the same way; Escape shows the whole board again.
    await page.getByTestId('board-search').focus();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByTestId('column-open').locator('.count').textContent()).toBe(String(TASKS - 1));
    await page.keyboard.type(`claimed ${agent.name}`);
    await expect.poll(() => page.locator('.board [data-testid^="card-T-"]').count()).toBe(1);
    await w.shot('search-03-by-holder');
  }, 180_000);
});
