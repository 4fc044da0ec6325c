import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWindow, type Served, type WindowSession } from './harness.js';

/**
 * Issue 34, dependencies in the window: the details panel's "Waits on" field sets what a task waits on (and
 * clears it with none), a cycle is refused with the board's reason naming it, the card of a task that waits
 * says on what, and the panel says why no one holds it, as `forkbench why` does.
 */
let w: WindowSession;
let served: Served;
let page: Page;

beforeAll(async () => {
  w = await openWindow();
  ({ served, page } = w);
}, 60_000);

afterAll(() => w?.close());

const card = (id: string) => page.getByTestId(`card-${id}`);
const details = () => page.getByTestId('task-details');
const reasons = () => details().getByTestId('details-why-reason');

async function addTask(title: string, id: string): Promise<void> {
  await page.getByTestId('add-task-title').fill(title);
  await page.getByTestId('add-task-title').press('Enter');
  await card(id).waitFor();
}

async function openDetails(id: string): Promise<void> {
  await card(id).locator('.card-title').click();
  await details().waitFor();
  await expect.poll(() => details().getAttribute('data-task')).toBe(id);
}

async function closeDetails(): Promise<void> {
  await details().getByTestId('details-close').click();
  await details().waitFor({ state: 'detached' });
}

describe('what a task waits on, in the window', () => {
  it('is set and cleared in the details panel, shown on the card and explained; a cycle is refused naming it', async () => {
    await page.goto(served.url);
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await addTask('Schema', 'T-1');
    await addTask('Screens', 'T-2');

    await openDetails('T-2');
    expect(await reasons().getAttribute('data-code')).toBe('ready');
    await details().getByTestId('details-after-input').fill('t-1');
    await details().getByTestId('details-after-input').press('Enter');
    await expect.poll(() => card('T-2').getByTestId('card-waits-T-2').textContent()).toBe('waits on T-1');
    await expect.poll(() => reasons().getAttribute('data-code')).toBe('waiting-on');
    expect(await reasons().textContent()).toBe('T-2 waits on T-1, which is open');
    expect(await details().getByTestId('details-after-input').inputValue()).toBe('T-1');
    await w.shot('waits-01-card-and-why');
    await closeDetails();

    // T-1 waiting on T-2 would close a cycle: refused, with the cycle named, and nothing changed.
    await openDetails('T-1');
    await details().getByTestId('details-after-input').fill('T-2');
    await details().getByTestId('details-after-save').click();
    await expect.poll(() => page.getByTestId('error-banner').textContent()).toContain('T-1 cannot wait on T-2: that would close a cycle, T-1 → T-2 → T-1');
    expect(await card('T-1').getByTestId('card-waits-T-1').count()).toBe(0);
    // The draft stays for the person to fix; Escape puts the field back to what the board holds.
    expect(await details().getByTestId('details-after-input').inputValue()).toBe('T-2');
    await details().getByTestId('details-after-input').press('Escape');
    expect(await details().getByTestId('details-after-input').inputValue()).toBe('');
    await closeDetails();

    // none clears it: the card no longer waits, and T-2 is ready.
    await openDetails('T-2');
    await details().getByTestId('details-after-input').fill('none');
    await details().getByTestId('details-after-input').press('Enter');
    await expect.poll(() => card('T-2').getByTestId('card-waits-T-2').count()).toBe(0);
    await expect.poll(() => reasons().getAttribute('data-code')).toBe('ready');
    expect(await details().getByTestId('details-after-input').inputValue()).toBe('');
  });
});
