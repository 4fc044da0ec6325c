import { describe, expect, it } from 'vitest';
import { axeViolations, describeViolations, settleScheme } from './axe.js';
import { windowOn } from './windowClient.js';

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

  it('dispatch turned on for a plain shell says so, and its tab and list entry show that the board dispatches to it', async () => {
    const { page } = win;
    const host = await windowOn(win.served);
    const [thread] = await host.call('threads.list', {});
    const key = thread!.key;
    // The Thread's default back off (the test above turned it on): only the agent's own setting counts here.
    await host.call('board.setSettings', { key, patch: { dispatch: false } });
    const first = (await host.call('agent.launch', { key, profile: 'shell', cols: 80, rows: 24 })).id;
    const tab = page.getByTestId(`agent-tab-${first}`);
    await expect.poll(() => tab.getAttribute('data-status'), { timeout: 15_000 }).toBe('running');
    const name = (await tab.getAttribute('data-name'))!;
    expect(await page.getByTestId(`agent-dispatch-${first}`).count()).toBe(0);
    const words = `${name} is a plain shell: it does not pick work by itself. A task the board gives it is only shown in its terminal, for you to act on.`;

    // From the palette, as a person turns it on: the command says it first, a notice after.
    await page.getByTestId('launch-menu').focus();
    await page.keyboard.press('Control+Shift+P');
    await page.getByTestId('command-palette').waitFor();
    await page.keyboard.type(`dispatch to ${name}: on`);
    const item = page.getByTestId(`palette-item-agent-dispatch-on-${first}`);
    expect(await item.textContent()).toContain(words);
    await page.keyboard.press('Enter');
    await page.getByTestId('command-palette').waitFor({ state: 'detached' });
    const toast = page.getByTestId('toast').filter({ hasText: `Dispatch to ${name} is on` });
    await expect.poll(() => toast.count(), { timeout: 10_000 }).toBe(1);
    expect(await toast.textContent()).toContain(words);

    // Its tab carries the mark, named for a screen reader; another shell, which the board does not dispatch to, none.
    await page.getByTestId(`agent-dispatch-${first}`).waitFor();
    expect(await page.getByRole('tab', { name: /dispatch: the board gives it the next ready task when it is idle \(a plain shell: it does not pick work by itself\)/ }).getAttribute('data-testid')).toBe(
      `agent-tab-${first}`,
    );
    const second = (await host.call('agent.launch', { key, profile: 'shell', cols: 80, rows: 24 })).id;
    await expect.poll(() => page.getByTestId(`agent-tab-${second}`).getAttribute('data-status'), { timeout: 15_000 }).toBe('running');
    expect(await page.getByTestId(`agent-dispatch-${second}`).count()).toBe(0);
    const secondName = (await page.getByTestId(`agent-tab-${second}`).getAttribute('data-name'))!;
    // So does its entry in the agent list.
    await page.getByTestId('agent-list-button').click();
    await page.getByTestId(`agent-list-dispatch-${first}`).waitFor();
    expect(await page.getByTestId(`agent-list-dispatch-${second}`).count()).toBe(0);
    await win.shot('dispatch-02-plain-shell-marked');
    await page.keyboard.press('Escape');

    // Thread settings: ticking the default names the shell that follows it (the first has its own setting).
    await page.getByTestId('thread-settings').click();
    await page.getByTestId('settings-dispatch').check();
    expect(await page.getByTestId('settings-dispatch-shells').textContent()).toBe(
      `${secondName} is a plain shell: it does not pick work by itself. A task the board gives it is only shown in its terminal, for you to act on.`,
    );
    await win.shot('dispatch-03-settings-plain-shell');
    await page.getByTestId('settings-dispatch').uncheck();
    expect(await page.getByTestId('settings-dispatch-shells').count()).toBe(0);
    await page.getByRole('button', { name: 'Cancel' }).click();

    for (const scheme of ['light', 'dark'] as const) {
      await settleScheme(page, scheme);
      expect(describeViolations(await axeViolations(page, '.tabbar')), scheme).toBe('');
    }
    await page.emulateMedia({ colorScheme: 'light' });
    host.close();
  }, 90_000);
});
