import * as fs from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS, ensureRendererBuilt, startServe, type Served } from './harness.js';

/**
 * The Thread window end to end: `forkbench serve` as a real process, Debian's Chromium, real ptys, agents
 * that use the real CLI. Each step saves a screenshot under test-results/e2e/.
 */
const SHOTS = join(import.meta.dirname, '..', 'test-results', 'e2e');
let served: Served;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ensureRendererBuilt();
  if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium (.ci/run does)`);
  fs.mkdirSync(SHOTS, { recursive: true });
  served = await startServe();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.on('pageerror', (e) => console.error('page error:', e.message));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  const code = await served?.stop();
  if (code !== 0) console.error(`serve exited ${code}: ${served?.stderr()}`);
  if (served) fs.rmSync(served.root, { recursive: true, force: true });
});

const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`) });
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

/**
 * Drag a card by its grip onto a drop target the way a hand does: press, move in steps, and let go only once
 * the target shows it is under the card (dnd-kit has seen the pointer there), not after a fixed delay.
 */
async function dragCard(taskId: string, targetTestId: string): Promise<void> {
  const center = async (testId: string) => {
    const box = await page.getByTestId(testId).boundingBox();
    if (!box) throw new Error(`${testId} is not on screen`);
    return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  };
  const from = await center(`drag-${taskId}`);
  const to = await center(targetTestId);
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(to.x, to.y, { steps: 12 });
  await expect.poll(() => page.getByTestId(targetTestId).getAttribute('class'), { timeout: 5000 }).toContain('drop-over');
  await page.mouse.up();
}

/** Type a command into an agent's terminal, as a person would. */
async function typeIn(agentId: string, text: string): Promise<void> {
  await page.getByTestId(`agent-tab-${agentId}`).click();
  await page.getByTestId(`terminal-${agentId}`).click();
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

describe('the Thread window in a real browser', () => {
  it('walks through a Thread: tasks, agents, claims, kill, drag, lapse, reload', async () => {
    await page.goto(`${served.url}&debug=1`);
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

    // reload: the board and the terminals come back from the host
    await page.reload();
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await expect.poll(() => card('T-1').getAttribute('data-state')).toBe('open');
    await page.getByTestId(`agent-tab-${b.id}`).click();
    const screenText = () => page.evaluate((id) => (window as unknown as { __forkbenchDebug?: { terminalText(id: string): string } }).__forkbenchDebug?.terminalText(id) ?? '', b.id);
    await expect.poll(screenText, { timeout: 10_000 }).toContain('forkbench claim T-3');
    await shot('08-reloaded');
  }, 120_000);
});
