import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Served, type WindowSession, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { dragCard as drag, screenText as textOf, typeIn as type, confirmAfterDrop } from './pageActions.js';

const typeIn = (agentId: string, text: string) => type(page, agentId, text);
const dragCard = (taskId: string, target: string) => drag(page, taskId, target);
const screenText = (agentId: string) => textOf(page, agentId);

/**
 * The Thread window end to end: `forkbench serve` as a real process, Debian's Chromium, real ptys, agents
 * that use the real CLI. Each step saves a screenshot under test-results/e2e/.
 */
const win = windowForFile();
let w: WindowSession;
let served: Served;
let page: Page;

beforeAll(() => {
  w = win.session;
  ({ served, page } = w);
});

const shot = (name: string) => w.shot(name);
const card = (id: string) => page.getByTestId(`card-${id}`);

async function launchShell(): Promise<{ id: string; pid: number }> {
  const before = new Set(await page.locator('[data-testid^="agent-tab-"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-testid'))));
  await page.getByTestId('launch-menu').click();
  await page.getByTestId('launch-shell').click();
  const tab = page.locator('[data-testid^="agent-tab-"]').filter({ hasNot: page.locator('xxx') });
  await expect.poll(async () => (await tab.count()) > before.size).toBe(true);
  const ids = await tab.evaluateAll((els) => els.map((e) => e.getAttribute('data-testid') as string));
  const testId = ids.find((t) => !before.has(t)) as string;
  const pid = Number(await page.getByTestId(testId).getAttribute('data-pid'));
  return { id: testId.replace('agent-tab-', ''), pid };
}

describe('the Thread window in a real browser', () => {
  it('walks through a Thread: tasks, agents, claims, kill, drag, lapse, reload', async () => {
    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await page.getByTestId('thread-goal').waitFor();
    await shot('01-opened');

    for (const title of ['Write the parser', 'Add tests', 'Update the docs']) {
      await page.getByTestId('add-task-title').fill(title);
      await page.getByTestId('add-task-submit').click();
    }
    for (const id of ['T-1', 'T-2', 'T-3']) await expect.poll(() => card(id).getAttribute('data-state')).toBe('open');
    await shot('02-three-tasks');

    const a = await launchShell();
    const b = await launchShell();
    await shot('03-two-agents');

    // an agent claims through the CLI; the card shows a countdown
    await typeIn(a.id, 'forkbench claim T-1');
    await expect.poll(() => card('T-1').getAttribute('data-state'), { timeout: 10_000 }).toBe('claimed');
    expect(await card('T-1').getAttribute('data-holder')).toBe(a.id);
    const remaining = Number(await page.getByTestId('countdown-T-1').getAttribute('data-remaining-ms'));
    expect(remaining).toBeGreaterThan(100_000);
    expect(remaining).toBeLessThanOrEqual(120_000);
    await shot('04-claimed-countdown');

    // kill the agent's process: the card is back in the backlog within a second
    const killedAt = Date.now();
    process.kill(a.pid, 'SIGKILL');
    await expect.poll(() => card('T-1').getAttribute('data-state'), { timeout: 1000, interval: 25 }).toBe('open');
    console.log(`card back in the backlog ${Date.now() - killedAt} ms after kill -9`);
    await expect.poll(() => page.getByTestId(`agent-tab-${a.id}`).getAttribute('data-status')).toBe('exited');
    await shot('05-killed-card-back');

    // a fresh agent claims T-2; dragging T-2 onto B reassigns it, and A2's next write is refused and logged
    const a2 = await launchShell();
    await typeIn(a2.id, 'forkbench claim T-2');
    await expect.poll(() => card('T-2').getAttribute('data-holder'), { timeout: 10_000 }).toBe(a2.id);
    await dragCard('T-2', `agent-tab-${b.id}`);
    // T-2 is a2's work in progress: the drop asks first (issue 32, finding 6)
    await confirmAfterDrop(page);
    await expect.poll(() => card('T-2').getAttribute('data-holder'), { timeout: 5000 }).toBe(b.id);
    await typeIn(a2.id, 'forkbench note T-2 "still mine?"');
    const rejected = page.locator('[data-testid="log-entry"][data-kind="write-rejected"]');
    await expect.poll(() => rejected.count(), { timeout: 10_000 }).toBeGreaterThan(0);
    await shot('06-reassigned-write-rejected');

    // a short lease left to lapse: the card goes back with a "lapsed" mark
    await page.getByTestId('thread-settings').click();
    await page.getByTestId('settings-lease').fill('2');
    await page.getByTestId('settings-verify').fill('');
    await page.getByTestId('settings-save').click();
    await expect.poll(() => page.getByTestId('thread-settings').textContent()).toContain('lease 2 s');
    await page.getByTestId('release-T-2').click();
    await expect.poll(() => card('T-2').getAttribute('data-state')).toBe('open');
    await typeIn(b.id, 'forkbench claim T-3');
    await expect.poll(() => card('T-3').getAttribute('data-holder'), { timeout: 10_000 }).toBe(b.id);
    // B sits idle at its prompt: no output, no CPU, no board call — the lease runs out
    await page.getByTestId(`lapsed-T-3`).waitFor({ timeout: 15_000 });
    expect(await card('T-3').getAttribute('data-state')).toBe('open');
    await shot('07-lapsed');

    // reload: the board and the terminals come back from the host. The address names the shown Thread, so
    // the reloaded page asks for its snapshot with the Thread list rather than after it.
    const key = new URL(page.url()).searchParams.get('thread');
    expect(key).toMatch(/^[0-9a-f]{16}$/);
    await page.reload();
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await expect.poll(() => card('T-1').getAttribute('data-state')).toBe('open');
    expect(new URL(page.url()).searchParams.get('thread')).toBe(key);
    await page.getByTestId(`agent-tab-${b.id}`).click();
    await expect.poll(() => screenText(b.id), { timeout: 10_000 }).toContain('forkbench claim T-3');
    await shot('08-reloaded');
  }, 120_000);
});
