/**
 * Issue 18 in a real browser: restart `forkbench serve` with an agent running and its tab comes back with
 * its screen. serve runs with --keep-agents, so its Ctrl-C leaves the agent (a shell) in the pty host; the
 * shell prints a line while no serve runs at all, so that line can only reach the page through the screen
 * the next serve restores from the pty host. The open page (no reload) and then a reloaded page show the
 * same agent running with both lines, and typing into it still works; until it is typed into, its state is
 * "unknown", not the "working" a launch presumes (issue 44). Debian's Chromium, real ptys.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ensureRendererBuilt, SHOTS, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { screenText, typeIn } from './pageActions.js';
import { alive } from '../test/helpers/processes.js';

let browser: Browser | undefined;
const win = windowForFile({ page: false });
let agentPid = 0;
win.after(() => {
  if (agentPid) {
    try {
      process.kill(-agentPid, 'SIGKILL');
    } catch {
      // ended with its serve, as it should
    }
  }
});

const state = (page: Page) => page.getByTestId('connection-status').getAttribute('data-state');
const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`) });

/** Waits until a file exists: the shell's word that it did something while nobody watched. */
async function fileAppears(path: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fs.existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} never appeared`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('restarting serve with an agent running', () => {
  it('the tab comes back running with its screen, in the open page and after a reload, and takes typing', async () => {
    ensureRendererBuilt();
    fs.mkdirSync(SHOTS, { recursive: true });
    const first = await win.serve({ args: ['--keep-agents'] });
    browser = await win.chromium();
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(withQuery(first.url, 'debug=1'));
    await expect.poll(() => state(page)).toBe('connected');

    // A plain interactive sh (a login shell's start-up files are the machine's business, and slow here),
    // which prints a line of its own first. Quotes split the markers, so a command's echo never matches.
    await page.getByTestId('launch-menu').click();
    await page.getByTestId('launch-custom').click();
    await page.getByTestId('custom-command').fill('echo "FIRST"-LINE; exec sh -i');
    await page.getByTestId('custom-launch').click();
    const tab = page.locator('[data-testid^="agent-tab-"]');
    await expect.poll(() => tab.count()).toBe(1);
    const id = (await tab.first().getAttribute('data-testid'))!.replace('agent-tab-', '');
    await expect.poll(() => tab.first().getAttribute('data-status'), { timeout: 15_000 }).toBe('running');
    agentPid = Number(await tab.first().getAttribute('data-pid'));
    await expect.poll(() => screenText(page, id), { timeout: 15_000 }).toContain('FIRST-LINE');

    // The shell waits for a file, then prints a line and says so: it will do that while no serve runs.
    // Both files lie in the Thread folder: the sandbox's private /tmp hides the test's folder, and in a Thread
    // without git the Thread folder is where an agent writes.
    const go = join(first.folder, 'go');
    const done = join(first.folder, 'done');
    await typeIn(page, id, `while [ ! -e ${go} ]; do sleep 0.05; done; echo "WHILE"-DOWN; touch ${done}`);
    await shot(page, 'restart-01-before');

    // Ctrl-C with --keep-agents: serve goes, the agent stays in the pty host; the page says the host stopped.
    expect(await first.stop()).toBe(0);
    expect(first.stderr()).toContain('agents keep running in the pty host');
    await expect.poll(() => state(page), { timeout: 5_000 }).toBe('host-stopped');
    expect(alive(agentPid)).toBe(true);
    fs.writeFileSync(go, '');
    await fileAppears(done, 10_000);

    // A new serve on the same data folder: the open page reconnects by itself (same port and token).
    const second = await win.serve({ root: first.root });
    expect(second.port).toBe(first.port);
    await expect.poll(() => state(page), { timeout: 10_000 }).toBe('connected');
    const theTab = page.getByTestId(`agent-tab-${id}`);
    await expect.poll(() => theTab.getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
    expect(Number(await theTab.getAttribute('data-pid'))).toBe(agentPid);
    expect(await tab.count()).toBe(1);
    // Taken back, it is not presumed to be working: nothing is known of it until it is seen (issue 44).
    const badge = page.getByTestId(`agent-state-${id}`);
    expect(await badge.getAttribute('data-standing')).toBe('unknown');
    expect(await badge.locator('.standing-words').innerText()).toBe('unknown');
    expect(await page.getByRole('tab', { name: /unknown/ }).getAttribute('data-testid')).toBe(`agent-tab-${id}`);
    // The line printed while no serve ran is on the screen: the pane's screen came back from the pty host.
    await expect.poll(() => screenText(page, id), { timeout: 10_000 }).toContain('WHILE-DOWN');
    expect(await screenText(page, id)).toContain('FIRST-LINE');
    await typeIn(page, id, 'echo "AFTER"-RESTART');
    await expect.poll(() => screenText(page, id), { timeout: 10_000 }).toContain('AFTER-RESTART');
    // A command typed into it: seen, no longer unknown.
    await expect.poll(() => badge.getAttribute('data-standing'), { timeout: 10_000 }).not.toBe('unknown');
    await shot(page, 'restart-02-reconnected');

    // A reload: a new page gets the same agent and the whole screen from the host, and types into it.
    await page.reload();
    await expect.poll(() => state(page), { timeout: 10_000 }).toBe('connected');
    await expect.poll(() => page.getByTestId(`agent-tab-${id}`).getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
    await expect.poll(() => screenText(page, id), { timeout: 10_000 }).toContain('AFTER-RESTART');
    const text = await screenText(page, id);
    expect(text).toContain('FIRST-LINE');
    expect(text).toContain('WHILE-DOWN');
    await typeIn(page, id, 'echo "AFTER"-RELOAD');
    await expect.poll(() => screenText(page, id), { timeout: 10_000 }).toContain('AFTER-RELOAD');
    await shot(page, 'restart-03-reloaded');

    // This serve has no --keep-agents: its Ctrl-C ends the agent as before.
    expect(await second.stop()).toBe(0);
    await expect.poll(() => alive(agentPid), { timeout: 10_000 }).toBe(false);
  }, 120_000);
});
