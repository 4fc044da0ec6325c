import * as fs from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Served, type WindowSession, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { launchFromMenu, screenText, typeIn } from './pageActions.js';

/**
 * Agent states in the window (issue 19), end to end: `forkbench serve`, Debian's Chromium, real ptys. An
 * agent (a shell pane) reports through the real `forkbench status` that it waits for the person: its tab and
 * its task's card say "waiting for you" with an icon, the header counts it, a desktop notification is raised
 * through the page's own Notification constructor (observed here), and clicking it selects that tab.
 */
const win = windowForFile();
let w: WindowSession;
let served: Served;
let page: Page;

beforeAll(async () => {
  w = win.session;
  ({ served, page } = w);
  // The page's Notification, granted and recorded: each construction is kept with its title, body and the
  // onclick the page sets, which the test then calls as a click on the notification would.
  await page.addInitScript(() => {
    const made: Array<{ title: string; body: string; n: { onclick: null | (() => void) } }> = [];
    (window as unknown as { __notes: typeof made }).__notes = made;
    class Recorded {
      static permission = 'granted';
      static requestPermission = async () => 'granted';
      onclick: null | (() => void) = null;
      constructor(title: string, o: { body?: string } = {}) {
        made.push({ title, body: o.body ?? '', n: this });
      }
      close() {}
    }
    (window as unknown as { Notification: unknown }).Notification = Recorded;
  });
}, 60_000);

const notes = () => page.evaluate(() => (window as unknown as { __notes: Array<{ title: string; body: string }> }).__notes.map((n) => ({ title: n.title, body: n.body })));

// A plain interactive sh, not the login shell: a login shell's start-up files are the machine's business
// (here they take seconds), and this test is about the window.
const launchShell = () => launchFromMenu(page, 'exec sh -i');

describe('agent states in the window', () => {
  it('the tab and card show "waiting for you", the header counts it, a notification is raised and its click selects the tab', async () => {
    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await page.getByTestId('add-task-title').fill('Migrate the database');
    await page.getByTestId('add-task-submit').click();
    const a = await launchShell();
    const b = await launchShell();
    await page.getByTestId('notify-agents').click();
    await expect.poll(() => page.getByTestId('notify-agents').isChecked()).toBe(true);

    // A's shell takes typing once its prompt is on the page's terminal. Read from the terminal's text, not
    // from how much live output it parsed: a prompt printed before the page made the pane arrives in the
    // restored screen (paneFeed.ts), which the live count leaves out, so that count could stay 0 for good.
    await page.getByTestId(`agent-tab-${a}`).click();
    await expect.poll(() => screenText(page, a), { timeout: 45_000 }).toMatch(/[#$]\s*$/);
    // A claims T-1, then asks the person (an ESC sequence in the question, to be shown as text) once the
    // test says go: only then is the person surely looking at B, so A's notification is for a tab they are
    // not looking at. (Asked at once, it could beat the click on B, and rightly raise no notification.)
    // The signal lies in the Thread folder: A's sandbox has a private /tmp, where a file of the test's is not.
    const go = join(served.folder, 'go');
    await typeIn(page, a, `forkbench claim T-1 && while [ ! -e ${go} ]; do sleep 0.05; done && forkbench status needs-input --text "$(printf 'Run the migration?\\033[2J')"`);
    await expect.poll(() => page.getByTestId('card-T-1').getAttribute('data-holder'), { timeout: 30_000 }).toBe(a).catch(async (err) => {
      throw new Error(`${(err as Error).message}\npane: ${await screenText(page, a)}`);
    });
    await page.getByTestId(`agent-tab-${b}`).click();
    await expect.poll(() => page.getByTestId(`agent-tab-${b}`).getAttribute('aria-selected')).toBe('true');
    fs.writeFileSync(go, '');
    await expect.poll(() => page.getByTestId(`agent-tab-${a}`).getAttribute('data-state'), { timeout: 10_000 }).toBe('needs-input');
    const badge = page.getByTestId(`agent-state-${a}`);
    expect(await badge.innerText()).toMatch(/✋\s*waiting for you/);
    expect(await badge.getAttribute('data-source')).toBe('hook');
    expect(await badge.getAttribute('title')).toContain('Run the migration?\\x1b[2J');
    expect(await page.getByTestId('card-agent-state-T-1').innerText()).toMatch(/waiting for you/);
    await expect.poll(() => page.getByTestId('waiting-count').getAttribute('data-count')).toBe('1');
    expect(await page.getByTestId('waiting-count').innerText()).toContain('1 waiting for you');
    await w.shot('agent-state-01-waiting');

    await expect.poll(() => notes().then((n) => n.length), { timeout: 5_000 }).toBeGreaterThan(0);
    const [note] = await notes();
    expect(note!.title).toMatch(/is waiting for you$/);
    expect(note!.body).toContain('T-1 "Migrate the database"');
    expect(note!.body).toContain('Run the migration?\\x1b[2J');
    expect(await page.getByTestId(`agent-tab-${a}`).getAttribute('aria-selected')).toBe('false');
    await page.evaluate(() => (window as unknown as { __notes: Array<{ n: { onclick: () => void } }> }).__notes[0]!.n.onclick());
    await expect.poll(() => page.getByTestId(`agent-tab-${a}`).getAttribute('aria-selected')).toBe('true');

    // The shortcut: from B, Alt+Shift+N goes to the waiting agent.
    await page.getByTestId(`agent-tab-${b}`).click();
    await page.keyboard.press('Alt+Shift+KeyN');
    await expect.poll(() => page.getByTestId(`agent-tab-${a}`).getAttribute('aria-selected')).toBe('true');

    // Its turn goes on: working, the count goes away. No notification for the tab being looked at.
    const before = (await notes()).length;
    await typeIn(page, a, 'forkbench status working');
    await expect.poll(() => page.getByTestId(`agent-tab-${a}`).getAttribute('data-state'), { timeout: 10_000 }).toBe('working');
    await expect.poll(() => page.getByTestId('waiting-count').count()).toBe(0);
    await typeIn(page, a, 'forkbench status idle');
    await expect.poll(() => page.getByTestId(`agent-tab-${a}`).getAttribute('data-state'), { timeout: 10_000 }).toBe('idle');
    expect((await notes()).length).toBe(before);
    await w.shot('agent-state-02-idle');
  }, 90_000);

  it("the Thread's wait hold is a settings field in minutes, checked against its bounds before it is sent", async () => {
    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    const line = page.getByTestId('thread-settings');
    await expect.poll(() => line.textContent()).toContain('held while waiting for you: 30 min');
    await line.click();
    const hold = page.getByTestId('settings-wait-hold');
    expect(await hold.inputValue()).toBe('30');
    // Under the board's floor (2 s): named beside the field, nothing sent, the form stays open.
    await hold.fill('0.01');
    await page.getByTestId('settings-save').click();
    await expect.poll(() => page.getByTestId('settings-wait-hold-error').textContent()).toBe('the wait hold must be at least 2 s');
    expect(await hold.getAttribute('aria-invalid')).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('settings-wait-hold');
    await hold.fill('1441');
    expect(await page.getByTestId('settings-wait-hold-error').count()).toBe(0);
    await page.getByTestId('settings-save').click();
    await expect.poll(() => page.getByTestId('settings-wait-hold-error').textContent()).toBe('the wait hold must be at most 24 h');
    // In bounds: saved, and the line says so.
    await hold.fill('45');
    await page.getByTestId('settings-save').click();
    await expect.poll(() => line.textContent()).toContain('held while waiting for you: 45 min');
    await line.click();
    expect(await page.getByTestId('settings-wait-hold').inputValue()).toBe('45');
    await page.getByTestId('settings-wait-hold').press('Escape');
    await w.shot('agent-state-03-wait-hold');
  }, 60_000);
});
