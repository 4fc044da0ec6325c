import { describe, expect, it } from 'vitest';

import { windowForFile } from './windowForFile.js';
/**
 * Issue 34, dispatch in the window: the details panel's "Taken by" field names who may take a task (a name
 * that is no profile or label is refused with the board's reason), Thread settings turn dispatch on for the
 * Thread, and the panel's Why says, as `forkbench why` does, that dispatch is off, then that no idle agent
 * matches the task's labels.
 */
const win = windowForFile();

const card = win.card;
const details = () => win.page.getByTestId('task-details');
const codes = () => details().getByTestId('details-why-reason').evaluateAll((els) => els.map((e) => e.getAttribute('data-code')));

describe('dispatch, in the window', () => {
  it('who may take a task is set in its details; Thread settings turn dispatch on; Why follows', async () => {
    await win.page.goto(win.served.url);
    await expect.poll(() => win.page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await win.page.getByTestId('add-task-title').fill('Restyle the form');
    await win.page.getByTestId('add-task-title').press('Enter');
    await card('T-1').waitFor();
    await card('T-1').locator('.card-title').click();
    await details().waitFor();
    await expect.poll(codes).toEqual(['ready', 'dispatch-off']);

    const field = details().getByTestId('details-takers-input');
    await field.fill('label:fr@nt');
    await field.press('Enter');
    await expect.poll(() => win.page.getByTestId('error-banner').textContent()).toContain("'label:fr@nt' names no profile or label");
    expect(await field.inputValue()).toBe('label:fr@nt');
    await field.fill('Claude, label:frontend');
    await field.press('Enter');
    await expect.poll(() => field.inputValue()).toBe('claude, label:frontend');

    await win.page.getByTestId('thread-settings').click();
    await win.page.getByTestId('settings-dispatch').check();
    await win.page.getByTestId('settings-save').click();
    await expect.poll(() => win.page.getByTestId('thread-settings').textContent()).toContain('idle agents take the next ready task');
    await expect.poll(codes).toEqual(['ready', 'no-idle-match']);
    expect(await details().locator('[data-code="no-idle-match"]').textContent()).toBe(
      'no idle agent matches (claude, label:frontend): no agent that takes tasks when idle is running',
    );
    await win.shot('dispatch-01-taken-by-and-why');
  }, 60_000);
});
