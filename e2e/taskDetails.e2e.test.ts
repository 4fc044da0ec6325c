import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Served, type WindowSession, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { typeIn } from './pageActions.js';

/**
 * Issue 20, finding 4: what agents wrote can be read in the window. A click or Enter on a card opens its
 * details: the notes an agent wrote through the CLI (author and time), holder and token, attempts, the done
 * note, the reason a person rejected it, and the history from the board's journal.
 */
const win = windowForFile();
let w: WindowSession;
let served: Served;
let page: Page;

beforeAll(() => {
  w = win.session;
  ({ served, page } = w);
});

const card = (id: string) => page.getByTestId(`card-${id}`);
const details = () => page.getByTestId('task-details');
const focused = () => page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? null);

describe('the task details panel', () => {
  it("shows the notes an agent wrote, its holder and token, the done note, a reject reason and the history", async () => {
    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    // Focus stays where the person was: after adding a task (Ctrl+Enter in Details), after the goal
    // (Enter), after Thread settings (Escape).
    await page.getByTestId('add-task-title').fill('Parse the config');
    await page.getByTestId('add-task-body').fill('the YAML one');
    await page.getByTestId('add-task-body').press('Control+Enter');
    await card('T-1').waitFor();
    expect(await focused()).toBe('add-task-title');
    await page.getByTestId('thread-goal').focus();
    await page.keyboard.press('Enter');
    await page.keyboard.type('Ship the config loader');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('thread-goal').textContent()).toBe('Ship the config loader');
    await expect.poll(focused).toBe('thread-goal');
    await page.getByTestId('thread-settings').click();
    // Opened, the form takes the focus in its first field (the line that opened it is gone).
    await expect.poll(focused).toBe('settings-lease');
    await page.keyboard.press('Escape');
    await expect.poll(focused).toBe('thread-settings');
    await page.getByTestId('launch-menu').click();
    await page.getByTestId('launch-shell').click();
    const tab = page.locator('[data-testid^="agent-tab-"]').first();
    await expect.poll(() => tab.getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
    const agent = ((await tab.getAttribute('data-testid')) as string).replace('agent-tab-', '');
    const name = (await tab.getAttribute('data-name')) as string;

    await typeIn(page, agent, 'forkbench claim T-1 && forkbench note T-1 "parser half done, tests next" --token 1');
    await expect.poll(() => card('T-1').locator('.card-meta').textContent(), { timeout: 10_000 }).toContain('notes 1');

    // A click on the card opens the details.
    await card('T-1').locator('.card-title').click();
    await details().waitFor();
    await expect.poll(() => details().getByTestId('details-note').count()).toBe(1);
    expect(await details().getByTestId('note-text').textContent()).toBe('parser half done, tests next');
    expect(await details().getByTestId('note-author').textContent()).toBe(name);
    expect(await details().getByTestId('details-holder').textContent()).toContain(name);
    expect(await details().getByTestId('details-token').textContent()).toBe('1');
    expect(await details().getByTestId('details-attempts').textContent()).toBe('1');
    await expect.poll(() => details().getByTestId('details-history').textContent()).toContain(`T-1 claimed by ${name} (token 1)`);
    await w.shot('details-01-note');
    await page.keyboard.press('Escape');
    await details().waitFor({ state: 'detached' });

    // The keyboard: Enter on the focused card opens them too, and Escape gives the focus back to the card.
    await card('T-1').focus();
    await page.keyboard.press('Enter');
    await details().waitFor();
    expect(await focused()).toBe('task-details');
    await page.keyboard.press('Escape');
    await details().waitFor({ state: 'detached' });
    expect(await focused()).toBe('card-T-1');
    expect(await card('T-1').getAttribute('data-state')).toBe('claimed'); // Enter did not pick the card up

    // done with a note, then a person rejects it with a reason: both are in the details.
    await typeIn(page, agent, 'forkbench done T-1 --token 1 --note "all tests pass"');
    await expect.poll(() => card('T-1').getAttribute('data-state'), { timeout: 10_000 }).toBe('review');
    await page.getByTestId('reject-T-1').click();
    await page.getByTestId('prompt-input').fill('the tests do not cover empty files');
    await page.getByTestId('prompt-ok').click();
    await expect.poll(() => card('T-1').getAttribute('data-state'), { timeout: 10_000 }).not.toBe('review');
    await card('T-1').locator('.card-title').click();
    await details().waitFor();
    await expect.poll(() => details().getByTestId('details-done-note').textContent()).toContain('all tests pass');
    expect(await details().getByTestId('details-done-note').getByTestId('note-author').textContent()).toBe(name);
    await expect.poll(() => details().getByTestId('details-reasons').textContent()).toContain('the tests do not cover empty files');
    expect(await details().getByTestId('details-reasons').textContent()).toContain('rejected by you');
    await w.shot('details-02-done-note-and-reject-reason');
    await page.keyboard.press('Escape');

    // The event log filters too: only T-1's notes.
    const entries = page.locator('[data-testid="log-entry"]');
    const all = await entries.count();
    await page.getByTestId('log-filter').fill('T-1 note by');
    await expect.poll(() => entries.count()).toBeLessThan(all);
    expect(await entries.evaluateAll((els) => [...new Set(els.map((e) => e.getAttribute('data-kind')))])).toEqual(['note']);
    expect(await entries.count()).toBe(3);
  }, 120_000);
});
