import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Served, type WindowSession, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { dragCard } from './pageActions.js';
import type { WindowClient } from './windowClient.js';
import { claimEventTimings, clearEventTimings, INSTRUMENT_SOCKET, startLongTasks, stopLongTasks } from './pageMeasures.js';

/**
 * A big board in a real browser: `forkbench serve`, Debian's Chromium, FORKBENCH_BIG_TASKS tasks (5,000 unless
 * set). A card is dragged onto an agent's tab and the task is assigned. What a claim event costs the page and
 * the long tasks during the drag are logged, never asserted: timings belong in benches, not in tests.
 */
const TASKS = Number(process.env.FORKBENCH_BIG_TASKS ?? 5000);
/** Assign/release pairs pushed to the page to time how it takes a claim event. */
const CLAIM_ROUNDS = 15;

const win = windowForFile({ client: true });
let w: WindowSession;
let served: Served;
let page: Page;
/** A second window on the same serve, from node: the window API over its WebSocket, calls pipelined. */
let host: WindowClient;

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN;
  const f = (n: number) => n.toFixed(1);
  return `median ${f(q(0.5))} ms, p90 ${f(q(0.9))} ms, max ${f(s[s.length - 1] ?? NaN)} ms (n=${s.length})`;
};

beforeAll(() => {
  w = win.session;
  ({ served, page } = w);
  host = win.host;
});

describe(`a board of ${TASKS} tasks in a real browser`, () => {
  it('drags a task onto an agent tab and it is assigned; claim-event costs and long tasks are logged', async () => {
    const [thread] = await host.call('threads.list', {});
    expect(thread?.open).toBe(true);
    const key = thread!.key;

    // The tasks, before the page opens: at most 256 calls in flight, so the journal's group commit batches them.
    const t0 = Date.now();
    let next = 1;
    const adder = async () => {
      while (next <= TASKS) {
        const n = next++;
        await host.call('task.add', { key, title: `Task number ${n}`, ...(n % 7 === 0 ? { body: `Some detail about task ${n}.` } : {}) });
      }
    };
    await Promise.all(Array.from({ length: 256 }, adder));
    console.log(`added ${TASKS} tasks in ${Date.now() - t0} ms`);

    await page.addInitScript({ content: INSTRUMENT_SOCKET });
    const loadStart = Date.now();
    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await expect.poll(() => page.getByTestId('column-open').locator('.count').textContent(), { timeout: 30_000 }).toBe(String(TASKS));
    await page.getByTestId('card-T-1').waitFor();
    console.log(`board of ${TASKS} drawn ${Date.now() - loadStart} ms after navigation; ${await page.locator('[data-testid^="card-"]').count()} cards mounted`);

    await page.getByTestId('launch-menu').click();
    await page.getByTestId('launch-shell').click();
    const tab = page.locator('[data-testid^="agent-tab-"]');
    await expect.poll(() => tab.count()).toBe(1);
    const agentId = ((await tab.first().getAttribute('data-testid')) as string).replace('agent-tab-', '');
    await expect.poll(() => tab.first().getAttribute('data-status'), { timeout: 10_000 }).not.toBe('starting');
    // Headless Chromium has no GPU: its WebGL is SwiftShader, so the terminal keeps xterm's DOM renderer.
    const terminal = page.getByTestId(`terminal-${agentId}`);
    await terminal.locator('.xterm-rows').waitFor();
    expect(await terminal.locator('canvas').count()).toBe(0);

    // Claim events at this size: a person assigns a task (grant) and releases it (claim-ended), one at a time.
    // Each waits until the page has taken the previous one, so they are timed one at a time.
    const claimTimings = () => claimEventTimings(page);
    await clearEventTimings(page);
    for (let i = 0; i < CLAIM_ROUNDS; i++) {
      const taskId = `T-${TASKS - i * Math.floor(TASKS / CLAIM_ROUNDS)}`;
      await host.call('task.assign', { key, taskId, agentId });
      await expect.poll(async () => (await claimTimings()).length).toBe(2 * i + 1);
      await host.call('task.release', { key, taskId });
      await expect.poll(async () => (await claimTimings()).length).toBe(2 * i + 2);
    }
    const claimEvents = await claimTimings();
    console.log(`claim event at ${TASKS} tasks, handler + React: ${stats(claimEvents.map((t) => t.script))}`);
    console.log(`claim event at ${TASKS} tasks, with style + layout: ${stats(claimEvents.map((t) => t.layout))}`);

    // The drag, with every long task (> 50 ms) the main thread has meanwhile.
    await startLongTasks(page);
    await dragCard(page, 'T-1', `agent-tab-${agentId}`);
    await expect.poll(() => page.getByTestId('card-T-1').getAttribute('data-holder'), { timeout: 10_000 }).toBe(agentId);
    expect(await page.getByTestId('card-T-1').getAttribute('data-state')).toBe('claimed');
    const longTasks = await stopLongTasks(page);
    console.log(
      `drag at ${TASKS} tasks: ${longTasks.length} long task(s), max ${longTasks.length ? Math.max(...longTasks).toFixed(0) : 0} ms` +
        (longTasks.length ? ` [${longTasks.map((d) => d.toFixed(0)).join(', ')}]` : ''),
    );
    await w.shot('21-big-board-assigned');

    // Deep in the column: scrolled to its middle, the cards there are drawn, and one of them drags like any other.
    const openCards = page.getByTestId('column-open').locator('.column-cards');
    await openCards.evaluate((el) => (el.scrollTop = el.scrollHeight / 2));
    // A card near the middle, drawn and wholly in the column's viewport (cards are drawn as the scroll arrives).
    const middle = Math.round(TASKS / 2);
    const cardInView = () =>
      openCards.evaluate((el, [mid, spread]) => {
        const box = el.getBoundingClientRect();
        const card = [...el.querySelectorAll('[data-testid^="card-T-"]')].find((c) => {
          const r = c.getBoundingClientRect();
          return r.top >= box.top && r.bottom <= box.bottom && Math.abs(Number(c.getAttribute('data-testid')!.slice('card-T-'.length)) - mid!) < spread!;
        });
        return card?.getAttribute('data-testid')?.slice('card-'.length) ?? null;
      }, [middle, TASKS / 10]);
    await expect.poll(cardInView).not.toBeNull();
    const deepId = (await cardInView()) as string;
    await dragCard(page, deepId, `agent-tab-${agentId}`);
    await expect.poll(() => page.getByTestId(`card-${deepId}`).getAttribute('data-holder'), { timeout: 10_000 }).toBe(agentId);
    await expect.poll(() => page.getByTestId(`agent-tab-${agentId}`).getAttribute('data-claims')).toBe('2');
    console.log(`dragged ${deepId} from the middle of the open column; ${await page.locator('[data-testid^="card-"]').count()} cards mounted`);
    await w.shot('22-big-board-deep-card-assigned');
  }, 240_000);
});
