import * as fs from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axeViolations, describeViolations } from './axe.js';
import { ensureRendererBuilt, SHOTS, type Served, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { agentTabIds } from './pageActions.js';
import { windowOn } from './windowClient.js';

/**
 * Issue 44, item 4: the agents the last run ended are one row, not a row each (twelve swallowed the
 * terminals). `forkbench serve` with five shell agents, Ctrl-C, serve again on the same folders: the page
 * shows "5 agents ended with the last run" folded, opened by its toggle to each agent and how it ended;
 * Relaunch all brings all five back as running tabs; after the next Ctrl-C, Dismiss all (asked first)
 * forgets them. Debian's Chromium, real ptys.
 */
const AGENTS = 5;
let browser: Browser | undefined;
const win = windowForFile({ page: false });

/** Five shells launched on a serve of `root` (a new one when absent), then that serve stopped by Ctrl-C. */
async function runAndStop(root?: string): Promise<Served> {
  const s = await win.serve(root ? { root } : {});
  const w = await windowOn(s);
  const [thread] = await w.call('threads.list', {});
  const key = thread!.key;
  for (let i = 0; i < AGENTS; i++) await w.call('agent.launch', { key, profile: 'custom', command: 'exec sh -i', cols: 80, rows: 24 });
  w.close();
  expect(await s.stop()).toBe(0);
  return s;
}

async function open(s: Served): Promise<Page> {
  browser ??= await win.chromium();
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(withQuery(s.url, 'debug=1'));
  await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state'), { timeout: 15_000 }).toBe('connected');
  return page;
}

describe('the agents the last run ended', () => {
  it('are one folded row with Relaunch all and Dismiss all', async () => {
    ensureRendererBuilt();
    fs.mkdirSync(SHOTS, { recursive: true });
    const first = await runAndStop();
    const second = await win.serve({ root: first.root });
    const page = await open(second);
    const toggle = page.getByTestId('ended-toggle');
    await expect.poll(() => toggle.textContent(), { timeout: 15_000 }).toContain(`${AGENTS} agents ended with the last run`);
    // Folded: one row, none of its agents listed until it is opened.
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(await page.locator('[data-testid^="ended-how-"]').count()).toBe(0);
    await toggle.click();
    await expect.poll(() => page.locator('[data-testid^="ended-how-"]').count()).toBe(AGENTS);
    expect(await page.locator('[data-testid^="ended-how-"]').allTextContents()).toEqual(Array(AGENTS).fill('ended when the host stopped'));
    expect(describeViolations(await axeViolations(page, '[data-testid="ended-agents"]'))).toBe('');
    await page.screenshot({ path: join(SHOTS, 'ended-agents-01-opened.png') });
    await toggle.click();
    expect(await page.locator('[data-testid^="ended-how-"]').count()).toBe(0);

    // Relaunch all: every one a running tab again, the row gone.
    await page.getByTestId('ended-relaunch-all').click();
    await expect.poll(async () => (await agentTabIds(page)).length, { timeout: 20_000 }).toBe(AGENTS);
    await expect.poll(() => page.locator('[role="tab"][data-status="running"]').count(), { timeout: 20_000 }).toBe(AGENTS);
    await expect.poll(() => page.getByTestId('ended-agents').count()).toBe(0);
    await page.close();
    expect(await second.stop()).toBe(0);

    // Ended again; Dismiss all asks, then forgets them all.
    const third = await win.serve({ root: first.root });
    const again = await open(third);
    await expect.poll(() => again.getByTestId('ended-toggle').textContent(), { timeout: 15_000 }).toContain(`${AGENTS} agents ended with the last run`);
    await again.getByTestId('ended-dismiss-all').click();
    await again.getByTestId('confirm-dialog').waitFor();
    expect(await again.getByTestId('confirm-body').textContent()).toContain('Their records go');
    await again.getByTestId('confirm-ok').click();
    await expect.poll(() => again.getByTestId('ended-agents').count(), { timeout: 15_000 }).toBe(0);
    expect(await agentTabIds(again)).toEqual([]);
  }, 150_000);

  it("tell each agent's own cause and what it held, titled as it was then", async () => {
    const s = await win.serve();
    const w = await windowOn(s);
    const [thread] = await w.call('threads.list', {});
    const key = thread!.key;
    await w.call('task.add', { key, title: 'Port the parser' });
    const launch = (command: string) => w.call('agent.launch', { key, profile: 'custom', command, cols: 80, rows: 24 });
    const killed = await launch('exec sh -i');
    const held = await launch('exec sh -i');
    await w.call('task.assign', { key, taskId: 'T-1', agentId: held.id });
    const exited = await launch('sleep 0.3; exit 3');
    process.kill(-killed.pid!, 'SIGKILL');
    // Both ended before the stop: the host says so (the agent list has them exited).
    const statusOf = async (ids: string[]) => {
      const { agents } = await w.call('thread.snapshot', { key });
      return ids.map((id) => agents.find((a) => a.id === id)?.status);
    };
    await expect.poll(() => statusOf([killed.id, exited.id]), { timeout: 15_000 }).toEqual(['exited', 'exited']);
    w.close();
    expect(await s.stop()).toBe(0);

    const next = await win.serve({ root: s.root });
    // The task is renamed on the board the next run has: the list names what the agent held as it was.
    const w2 = await windowOn(next);
    await w2.call('task.edit', { key, taskId: 'T-1', title: 'Renamed since' });
    w2.close();
    const page = await open(next);
    await expect.poll(() => page.locator('[data-testid^="ended-how-"]').count(), { timeout: 15_000 }).toBe(3);
    expect(await page.getByTestId(`ended-how-${killed.id}`).textContent()).toBe('killed by signal 9');
    expect(await page.getByTestId(`ended-how-${exited.id}`).textContent()).toBe('exited with code 3');
    expect(await page.getByTestId(`ended-how-${held.id}`).textContent()).toBe('ended when the host stopped');
    expect(await page.getByTestId(`ended-held-${held.id}`).textContent()).toBe('held T-1 "Port the parser"');
    await page.screenshot({ path: join(SHOTS, 'ended-agents-02-true-causes.png') });
    await page.close();
  }, 120_000);
});
