import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { INSTALL_HINTS } from '../src-shared/agents/installHints.js';
import { findOnPath } from '../src-main/base/pathLookup.js';
import { type Served, type WindowSession, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { agentTabIds, newAgentTab } from './pageActions.js';

/**
 * Issue 20, findings 6 and 7: a first open explains what to do; the Launch menu works from the keyboard,
 * says "Shell", and shows how to install a CLI that is missing; a command palette runs the window's actions
 * from the keyboard and gives the focus back. Serve runs on a PATH of the system's folders only plus an
 * empty one, so which CLIs are "installed" is known here (the host looks them up the same way).
 */
let w: WindowSession;
let served: Served;
let page: Page;
const emptyBin = fs.mkdtempSync(join(tmpdir(), 'forkbench-e2e-bin-'));
const PATH = [emptyBin, '/usr/bin', '/bin'].join(':');
const CLIS = ['claude', 'codex', 'gemini', 'aider', 'opencode'] as const;
const MENU_ORDER = [...CLIS, 'shell', 'custom'];

const win = windowForFile({ serve: { env: { PATH } } });
win.after(() => fs.rmSync(emptyBin, { recursive: true, force: true }));

beforeAll(() => {
  w = win.session;
  ({ served, page } = w);
});

const focused = () => page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? null);
/** Whether the focus is in an agent's terminal (xterm's input is a textarea inside the pane's container). */
const focusInTerminal = (agentId: string) =>
  page.evaluate((id) => !!document.activeElement?.closest(`[data-testid="terminal-${id}"]`) && document.activeElement?.tagName === 'TEXTAREA', agentId);
const tabIds = () => agentTabIds(page);
const palette = () => page.getByTestId('command-palette');
const selected = () => palette().locator('[aria-selected="true"]').getAttribute('data-testid');

const newAgent = (before: string[]) => newAgentTab(page, before);

describe('the window from the keyboard', () => {
  it('explains a new Thread, launches from the Launch menu and runs commands from the palette, keyboard only', async () => {
    const missing = CLIS.filter((id) => findOnPath(id, { PATH }) === null);
    // The install hints are what this test reads; on a PATH where every CLI is found it could not.
    expect(missing.length).toBeGreaterThan(0);

    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');

    // First open: the three steps and the shortcuts, where the terminals will be.
    const steps = page.getByTestId('first-steps');
    await steps.waitFor();
    const text = (await steps.textContent()) ?? '';
    for (const words of ['Add tasks', 'Launch an agent', 'Agents claim tasks', 'drag its card onto the agent’s tab', '?', 'Ctrl+K', 'Ctrl+Shift+P', 'Ctrl+F']) {
      expect(text).toContain(words);
    }
    await w.shot('keyboard-01-first-steps');

    // The Launch menu from the keyboard: Enter opens it on the first choice; End, Home, arrows move (wrapping).
    await page.getByTestId('launch-menu').focus();
    await page.keyboard.press('Enter');
    await expect.poll(focused).toBe(`launch-${MENU_ORDER[0]}`);
    expect(await page.getByTestId('launch-shell').textContent()).toBe('Shell');
    for (const id of missing) {
      expect(await page.getByTestId(`launch-${id}`).getAttribute('data-available')).toBe('false');
      expect(await page.getByTestId(`install-hint-${id}`).textContent()).toBe(`not installed: ${INSTALL_HINTS[id]}`);
    }
    await w.shot('keyboard-02-launch-menu');
    await page.keyboard.press('End');
    expect(await focused()).toBe('launch-custom');
    await page.keyboard.press('ArrowDown');
    expect(await focused()).toBe(`launch-${MENU_ORDER[0]}`);
    await page.keyboard.press('ArrowUp');
    expect(await focused()).toBe('launch-custom');
    await page.keyboard.press('Home');
    expect(await focused()).toBe(`launch-${MENU_ORDER[0]}`);
    // Escape closes it, the focus back on the button.
    await page.keyboard.press('Escape');
    await page.getByTestId('launch-menu-list').waitFor({ state: 'detached' });
    expect(await focused()).toBe('launch-menu');
    // Opened by a click, the focus stays on the button, and Escape still closes it.
    await page.getByTestId('launch-menu').click();
    await page.getByTestId('launch-menu-list').waitFor();
    expect(await focused()).toBe('launch-menu');
    await page.keyboard.press('Escape');
    await page.getByTestId('launch-menu-list').waitFor({ state: 'detached' });
    expect(await focused()).toBe('launch-menu');
    // ArrowDown opens it too; arrows to Shell, Enter launches, and the new terminal has the focus.
    await page.keyboard.press('ArrowDown');
    await expect.poll(focused).toBe(`launch-${MENU_ORDER[0]}`);
    for (let i = 0; i < MENU_ORDER.indexOf('shell'); i++) await page.keyboard.press('ArrowDown');
    expect(await focused()).toBe('launch-shell');
    await page.keyboard.press('Enter');
    const first = await newAgent([]);
    await expect.poll(() => focusInTerminal(first)).toBe(true);
    expect(await steps.count()).toBe(0);

    // The terminal says Ctrl+F finds in it; the hint does it for a pointer too.
    const hint = page.getByTestId('terminal-find-hint');
    expect(await hint.isVisible()).toBe(true);
    expect(await hint.textContent()).toContain('Ctrl+F');
    await hint.click();
    await page.getByTestId('terminal-search').waitFor();
    await page.keyboard.press('Escape');
    await page.getByTestId('terminal-search').waitFor({ state: 'detached' });
    await expect.poll(() => focusInTerminal(first)).toBe(true);

    // In a terminal Ctrl+K is the shell's (kill-line): no palette. Its own key, Ctrl+Shift+P, opens it there.
    await page.keyboard.press('Control+k');
    expect(await palette().count()).toBe(0);
    await page.keyboard.press('Control+Shift+P');
    await palette().waitFor();
    expect(await focused()).toBe('palette-input');
    await page.keyboard.press('Escape');
    await palette().waitFor({ state: 'detached' });
    await expect.poll(() => focusInTerminal(first)).toBe(true);

    // Type to filter, run with Enter: "launch" lists the launch commands with the CLIs that are missing
    // shown but skipped by the arrows; "launch sh" leaves Shell alone, and Enter launches a second agent.
    await page.getByTestId('launch-menu').focus();
    await page.keyboard.press('Control+k');
    await palette().waitFor();
    await page.keyboard.type('launch');
    for (const id of missing) {
      expect(await palette().getByTestId(`palette-item-launch-${id}`).getAttribute('aria-disabled')).toBe('true');
      expect(await palette().getByTestId(`palette-item-launch-${id}`).textContent()).toContain(INSTALL_HINTS[id]);
    }
    const runnable = MENU_ORDER.filter((id) => !(missing as readonly string[]).includes(id));
    for (let i = 0; i <= runnable.length; i++) {
      expect(await selected()).toBe(`palette-item-launch-${runnable[i % runnable.length]}`);
      await page.keyboard.press('ArrowDown');
    }
    await w.shot('keyboard-03-palette-launch');
    await page.keyboard.type(' sh');
    await expect.poll(() => palette().locator('[role="option"]').count()).toBe(1);
    const before = await tabIds();
    await page.keyboard.press('Enter');
    await palette().waitFor({ state: 'detached' });
    const second = await newAgent(before);
    await expect.poll(() => page.getByTestId(`agent-tab-${second}`).getAttribute('aria-selected')).toBe('true');

    // "go to agent 1": what a click on the first tab does.
    await page.keyboard.press('Control+Shift+P');
    await page.keyboard.type('agent 1');
    expect(await selected()).toBe('palette-item-agent-tab-1');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId(`agent-tab-${first}`).getAttribute('aria-selected')).toBe('true');

    // Add a task from the palette ("add " and a title), then open it by its id: the details panel, and
    // Escape there gives the focus back where the person was before the palette.
    await page.getByTestId('launch-menu').focus();
    await page.keyboard.press('Control+k');
    await page.keyboard.type('add Write the changelog');
    expect(await selected()).toBe('palette-item-add-task-titled');
    await page.keyboard.press('Enter');
    await page.getByTestId('card-T-1').waitFor();
    expect(await page.getByTestId('card-T-1').locator('.card-title').textContent()).toBe('Write the changelog');
    expect(await focused()).toBe('launch-menu');
    await page.keyboard.press('Control+k');
    await page.keyboard.type('t1');
    expect(await selected()).toBe('palette-item-open-task-T-1');
    await page.keyboard.press('Enter');
    await page.getByTestId('task-details').waitFor();
    expect(await page.getByTestId('task-details').textContent()).toContain('Write the changelog');
    await page.keyboard.press('Escape');
    await page.getByTestId('task-details').waitFor({ state: 'detached' });
    await expect.poll(focused).toBe('launch-menu');

    // A command that moves the focus moves it from where it was: "search" focuses the board search.
    await page.keyboard.press('Control+k');
    await page.keyboard.type('search');
    expect(await selected()).toBe('palette-item-focus-search');
    await page.keyboard.press('Enter');
    expect(await focused()).toBe('board-search');
    // Ctrl+K in a field is the field's; Escape clears the search, and the focus is still there.
    await page.keyboard.press('Control+k');
    expect(await palette().count()).toBe(0);

    // Thread settings and the shortcut list, each opened from the palette; the list names the palette.
    await page.getByTestId('launch-menu').focus();
    await page.keyboard.press('Control+k');
    await page.keyboard.type('settings');
    await page.keyboard.press('Enter');
    await page.getByTestId('settings-lease').waitFor();
    await page.getByTestId('settings-lease').press('Escape');
    await expect.poll(focused).toBe('thread-settings');
    await page.keyboard.press('Control+k');
    await page.keyboard.type('shortcuts');
    await page.keyboard.press('Enter');
    await page.getByTestId('shortcut-help').waitFor();
    const list = (await page.getByTestId('shortcut-help').textContent()) ?? '';
    expect(list).toContain('Ctrl+Shift+P / Ctrl+K');
    expect(list).toContain('Command palette');
    await page.keyboard.press('Escape');
    await page.getByTestId('shortcut-help').waitFor({ state: 'detached' });
    expect(await focused()).toBe('thread-settings');

    // Nothing matches: the list says so, and Enter does nothing but leave the palette open.
    await page.keyboard.press('Control+k');
    await page.keyboard.type('zzz no such thing');
    expect(await palette().textContent()).toContain('Nothing matches');
    await page.keyboard.press('Enter');
    expect(await palette().count()).toBe(1);
    await page.keyboard.press('Escape');
    await palette().waitFor({ state: 'detached' });
    expect(await focused()).toBe('thread-settings');
  }, 120_000);
});
