import { describe, expect, it } from 'vitest';

import { lagPage } from './pageLag.js';
import { windowForFile } from './windowForFile.js';
/**
 * Issue 34, dependencies in the window: the details panel's "Waits on" field sets what a task waits on (and
 * clears it with none), a cycle is refused with the board's reason naming it, the card of a task that waits
 * says on what, and the panel says why no one holds it, as `forkbench why` does.
 */
const win = windowForFile();

const card = win.card;
const details = () => win.page.getByTestId('task-details');
const reasons = () => details().getByTestId('details-why-reason');
/** The first reason: a ready task's 'ready' is followed by why the board has not dispatched it (dispatch off). */
const firstReason = () => reasons().first();

async function addTask(title: string, id: string): Promise<void> {
  await win.page.getByTestId('add-task-title').fill(title);
  await win.page.getByTestId('add-task-title').press('Enter');
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
    await win.page.goto(win.served.url);
    await expect.poll(() => win.page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await addTask('Schema', 'T-1');
    await addTask('Screens', 'T-2');

    await openDetails('T-2');
    expect(await firstReason().getAttribute('data-code')).toBe('ready');
    await details().getByTestId('details-after-input').fill('t-1');
    await details().getByTestId('details-after-input').press('Enter');
    await expect.poll(() => card('T-2').getByTestId('card-waits-T-2').textContent()).toBe('waits on T-1');
    await expect.poll(() => firstReason().getAttribute('data-code')).toBe('waiting-on');
    expect(await reasons().textContent()).toBe('T-2 waits on T-1, which is open');
    expect(await details().getByTestId('details-after-input').inputValue()).toBe('T-1');
    await win.shot('waits-01-card-and-why');
    await closeDetails();

    // T-1 waiting on T-2 would close a cycle: refused, with the cycle named, and nothing changed.
    await openDetails('T-1');
    await details().getByTestId('details-after-input').fill('T-2');
    await details().getByTestId('details-after-save').click();
    await expect.poll(() => win.page.getByTestId('error-banner').textContent()).toContain('T-1 cannot wait on T-2: that would close a cycle, T-1 → T-2 → T-1');
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
    await expect.poll(() => firstReason().getAttribute('data-code')).toBe('ready');
    expect(await details().getByTestId('details-after-input').inputValue()).toBe('');
    await closeDetails();
  });

  it('giving a waiting task to an agent asks first, and once the person says yes the board grants it forced and notes it', async () => {
    // T-2 waits on T-1 again.
    await openDetails('T-2');
    await details().getByTestId('details-after-input').fill('T-1');
    await details().getByTestId('details-after-input').press('Enter');
    await card('T-2').getByTestId('card-waits-T-2').waitFor();
    await closeDetails();
    await win.page.getByTestId('launch-menu').click();
    await win.page.getByTestId('launch-shell').click();
    const tab = win.page.locator('[data-testid^="agent-tab-"]').first();
    await expect.poll(() => tab.getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
    const agent = ((await tab.getAttribute('data-testid')) as string).replace('agent-tab-', '');
    const name = (await tab.getAttribute('data-name')) as string;

    const assign = async () => {
      await win.page.getByTestId('assign-T-2').click();
      await win.page.getByTestId(`assign-T-2-to-${agent}`).click();
      await win.page.getByTestId('confirm-dialog').waitFor();
    };
    await assign();
    expect(await win.page.getByTestId('confirm-dialog').textContent()).toContain('Start T-2 before T-1 is done?');
    expect(await win.page.getByTestId('confirm-body').textContent()).toBe(`T-2 "Screens" waits on T-1 (open). Give it to ${name} anyway? The board notes that it was forced.`);
    // No: nothing is granted.
    await win.page.getByTestId('confirm-cancel').click();
    await win.page.getByTestId('confirm-dialog').waitFor({ state: 'detached' });
    expect(await card('T-2').getAttribute('data-state')).toBe('open');

    await assign();
    await win.page.getByTestId('confirm-ok').click();
    await expect.poll(() => card('T-2').getAttribute('data-state')).toBe('claimed');
    await openDetails('T-2');
    await expect.poll(() => details().getByTestId('note-text').first().textContent()).toBe(`claimed by ${agent} before T-1 was done, forced`);
    // Held now, and still waiting: both said.
    expect(await reasons().evaluateAll((els) => els.map((e) => e.getAttribute('data-code')))).toEqual(['held', 'waiting-on']);
    await win.shot('waits-02-forced');
  });

  it('a task opened with a click takes what is typed at once and saves it with Enter, on a loaded machine too', async () => {
    await closeDetails();
    await addTask('Docs', 'T-3');
    // The card's click is a press and release of dnd-kit's pointer sensor; what follows it comes before any
    // timer of the page runs, as under load.
    const undo = await lagPage(win.page);
    try {
      await openDetails('T-3');
      await details().getByTestId('details-after-input').fill('T-1');
      expect(await details().getByTestId('details-after-input').inputValue()).toBe('T-1');
      await details().getByTestId('details-after-input').press('Enter');
      await expect.poll(() => card('T-3').getByTestId('card-waits-T-3').textContent(), { timeout: 10_000 }).toBe('waits on T-1');
      // And a click right after it counts: × closes the panel.
      await details().getByTestId('details-close').click();
      await details().waitFor({ state: 'detached' });
    } finally {
      await undo();
    }
  });
});
