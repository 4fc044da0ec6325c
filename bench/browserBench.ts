/**
 * The window in a real page: `forkbench serve` and Debian's Chromium (headless, no GPU, so every terminal is
 * on xterm's DOM renderer), measured inside the page rather than over a bare WebSocket (windowBench.ts).
 */
import type { Page } from 'playwright-core';
import { findChromium } from '../e2e/findChromium.js';
import { openWindow, type Served, withQuery } from '../e2e/harness.js';
import { claimEventTimings, clearEventTimings, INSTRUMENT_SOCKET, snapshotCalls, startLongTasks, stopLongTasks } from '../e2e/pageMeasures.js';
import { windowOn, type WindowClient } from '../e2e/windowClient.js';
import { throughput } from './browserThroughput.js';
import { promptEnv, stateInPage } from './stateLatency.js';
import { armParsed, type BenchWindow, closeInPage, f1, launchInPage, NAME_SHIM, p, probeResult, progress, type Probe, until, verdict } from './pageKit.js';
import type { Row } from './table.js';

const ECHO_KEYS = 100;
/** Runs of Ctrl-C under a flood: p99 of 20 is its worst, as in the window bench. */
const CTRL_C_RUNS = 20;
/** Assign/release pairs per board size. */
const CLAIM_ROUNDS = 15;
const DRAGS = 3;
const RELOADS = 5;
const SIZES = [1000, 5000];
/** Where the bench tells the page (across reloads) how many open tasks mean "the board is drawn". */
const DRAWN_KEY = 'forkbench-bench-tasks';

/** Each (re)load: once the open column shows the expected count and a card, note when (from navigation start). */
const DRAWN_PROBE = `(() => {
  const want = sessionStorage.getItem(${JSON.stringify(DRAWN_KEY)});
  if (!want) return;
  const tick = () => {
    const count = document.querySelector('[data-testid="column-open"] .count');
    if (count && count.textContent === want && document.querySelector('[data-testid="column-open"] [data-testid^="card-T-"]')) window.__drawnAt = performance.now();
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})();`;

/** A key typed in the focused terminal until the program's echo is parsed by that pane's xterm. */
async function echo(page: Page, rows: Row[]): Promise<void> {
  const id = await launchInPage(page, `stty raw -echo; printf ready; exec cat`);
  await until('the pane to say ready', () => page.evaluate((a) => (window as unknown as BenchWindow).__forkbenchDebug.terminalText(a), id), (t) => t.includes('ready'));
  const times: number[] = [];
  for (let i = 0; i < ECHO_KEYS; i++) {
    await armParsed(page, id, 1);
    await page.keyboard.press(String.fromCharCode(97 + (i % 26)));
    times.push(await probeResult(page, 'an echo'));
    // A person types ~10 keys a second at most; 20 ms apart keeps each echo its own batch.
    await new Promise((r) => setTimeout(r, 20));
  }
  await closeInPage(page, id);
  const note = `keydown → echo parsed by the pane's xterm, \`stty raw -echo; exec cat\` (the program echoes), ${ECHO_KEYS} keys`;
  rows.push({ name: 'keystroke echo in the page p50', value: p(times, 50), unit: 'ms', note });
  rows.push({
    name: 'keystroke echo in the page p99',
    value: p(times, 99),
    unit: 'ms',
    note: `goal < 5 ${verdict(p(times, 99) < 5)}; the goal is the WebSocket round trip's (window bench), this adds the key's way through the page`,
  });
}

/** Ctrl-C typed into a pane `yes` floods, until its tab shows the agent exited. */
async function ctrlC(page: Page, rows: Row[]): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < CTRL_C_RUNS; i++) {
    const id = await launchInPage(page, 'exec yes');
    await until('`yes` to flood the pane', () => page.evaluate((a) => (window as unknown as BenchWindow).__forkbenchDebug.parsedChars(a), id), (n) => n > 200_000, 30_000, 20);
    await page.evaluate((a) => {
      const w = window as unknown as BenchWindow;
      const probe = { t0: 0, first: 0 } as Probe;
      // From the keydown that types ^C, not the Control key's own keydown before it: a person may hold
      // Control for any time before pressing C.
      const onKey = (e: KeyboardEvent) => {
        if (!e.ctrlKey || e.key.toLowerCase() !== 'c') return;
        probe.t0 = e.timeStamp;
        window.removeEventListener('keydown', onKey, { capture: true });
      };
      window.addEventListener('keydown', onKey, { capture: true });
      const tab = document.querySelector(`[data-testid="agent-tab-${a}"]`) as HTMLElement;
      probe.result = new Promise<number>((resolve) => {
        const seen = new MutationObserver(() => {
          if (tab.getAttribute('data-status') !== 'exited') return;
          seen.disconnect();
          resolve(performance.now() - probe.t0);
        });
        seen.observe(tab, { attributes: true, attributeFilter: ['data-status'] });
      });
      w.__probe = probe;
    }, id);
    await page.keyboard.press('Control+c');
    times.push(await probeResult(page, 'the tab to show exited'));
    await closeInPage(page, id);
  }
  rows.push({ name: 'Ctrl-C under flood in the page p50', value: p(times, 50), unit: 'ms', note: `C's keydown (Control held) → tab shows exited, \`yes\` flooding the shown pane, ${CTRL_C_RUNS} runs` });
  rows.push({ name: 'Ctrl-C under flood in the page p99', value: p(times, 99), unit: 'ms', note: `goal < 100 ${verdict(p(times, 99) < 100)}` });
}

async function addTasks(w: WindowClient, key: string, from: number, to: number): Promise<void> {
  let next = from;
  const adder = async () => {
    while (next <= to) await w.call('task.add', { key, title: `Task number ${next++}` });
  };
  // At most 256 in flight, so the journal's group commit batches them.
  await Promise.all(Array.from({ length: 256 }, adder));
}

/**
 * Reload until the board is drawn with `tasks` open, RELOADS times: the page's snapshot call, on the wire
 * (DevTools' WebSocket frame timestamps: request frame sent → answer frame received, so what the page's main
 * thread was busy with meanwhile is not in it) and to the page's socket handler, and the whole reload.
 */
async function snapshots(page: Page, s: Served, tasks: number, rows: Row[]): Promise<void> {
  await page.evaluate(([k, n]) => sessionStorage.setItem(k, String(n)), [DRAWN_KEY, tasks] as const);
  const cdp = await page.context().newCDPSession(page);
  const sentAt = new Map<string, number>();
  let onWire: number | null = null;
  const idOf = (payload: string) => /^\{"id":(\d+),/.exec(payload.slice(0, 32))?.[1];
  cdp.on('Network.webSocketFrameSent', (e) => {
    const id = idOf(e.response.payloadData);
    if (id && e.response.payloadData.includes('"method":"thread.snapshot"')) sentAt.set(`${e.requestId} ${id}`, e.timestamp);
  });
  cdp.on('Network.webSocketFrameReceived', (e) => {
    const sent = sentAt.get(`${e.requestId} ${idOf(e.response.payloadData)}`);
    if (sent !== undefined && onWire === null) onWire = (e.timestamp - sent) * 1000;
  });
  await cdp.send('Network.enable');
  const wire: number[] = [];
  const handler: number[] = [];
  const drawn: number[] = [];
  try {
    for (let i = 0; i < RELOADS; i++) {
      onWire = null;
      await page.reload();
      drawn.push(await until(`the board of ${tasks} to be drawn`, () => page.evaluate(() => (window as unknown as BenchWindow).__drawnAt ?? 0), (t) => t > 0));
      const [first] = await snapshotCalls(page);
      if (first?.answered === undefined || onWire === null) throw new Error('browser bench: no thread.snapshot call seen on reload');
      handler.push(first.answered - first.sent);
      wire.push(onWire);
    }
  } finally {
    await cdp.detach();
  }
  // The same call from the page once it is quiet, on a socket of its own: what the call costs without a
  // page load competing for this machine's two cores.
  const quiet = await page.evaluate(
    async (port) => {
      // the page's own cookie lets it in, as it lets the page's transport in
      const ws = new WebSocket(`ws://${location.host}/ws`);
      await new Promise((r) => (ws.onopen = r));
      const call = (id: number, method: string, params: unknown) =>
        new Promise<{ ms: number; data: string }>((resolve) => {
          const t0 = performance.now();
          ws.onmessage = (e) => String(e.data).startsWith(`{"id":${id},`) && resolve({ ms: performance.now() - t0, data: String(e.data) });
          ws.send(JSON.stringify({ id, method, params }));
        });
      const list = JSON.parse((await call(1, 'threads.list', {})).data) as { value: Array<{ key: string }> };
      const times: number[] = [];
      for (let i = 0; i < 5; i++) times.push((await call(i + 2, 'thread.snapshot', { key: list.value[0]?.key })).ms);
      ws.close();
      return times;
    },
    s.port,
  );
  const k = `${tasks / 1000}k`;
  rows.push({
    name: `snapshot call from the page at ${k} (median)`,
    value: p(wire, 50),
    unit: 'ms',
    note:
      `on reload, request frame sent → answer frame received, p90 ${f1(p(wire, 90))} ms, ${RELOADS} reloads; to the page's handler ${f1(p(handler, 50))} ms; ` +
      `from the quiet page ${f1(p(quiet, 50))} ms; goal ≤ 15 ${verdict(p(wire, 50) <= 15)}`,
  });
  rows.push({
    name: `reload → board drawn at ${k} (median)`,
    value: p(drawn, 50),
    unit: 'ms',
    note: `navigation start → open column shows ${tasks}: page load, WebSocket, threads.list, snapshot, render`,
  });
}

/** Claim events pushed while the page shows `tasks`, and drags onto an agent's tab with the long tasks meanwhile. */
async function claimsAndDrags(page: Page, w: WindowClient, key: string, agentId: string, tasks: number, rows: Row[]): Promise<void> {
  await clearEventTimings(page);
  for (let i = 0; i < CLAIM_ROUNDS; i++) {
    const taskId = `T-${tasks - i * Math.floor(tasks / CLAIM_ROUNDS)}`;
    await w.call('task.assign', { key, taskId, agentId });
    await until('the grant to reach the page', () => claimEventTimings(page), (t) => t.length === 2 * i + 1);
    await w.call('task.release', { key, taskId });
    await until('the release to reach the page', () => claimEventTimings(page), (t) => t.length === 2 * i + 2);
  }
  const events = await claimEventTimings(page);
  const layout = events.map((t) => t.layout);
  const script = events.map((t) => t.script);
  const k = `${tasks / 1000}k`;
  rows.push({
    name: `claim event render at ${k} (median)`,
    value: p(layout, 50),
    unit: 'ms',
    note: `push → handler, React, style and layout done; without style/layout ${f1(p(script, 50))} ms; ${events.length} grants/ends`,
  });
  rows.push({ name: `claim event render at ${k} p90`, value: p(layout, 90), unit: 'ms', note: `max ${f1(Math.max(...layout))} ms; goal ≤ 8 ${verdict(p(layout, 90) <= 8)}` });

  const longTasks: number[] = [];
  for (let i = 1; i <= DRAGS; i++) {
    const taskId = `T-${i}`;
    const center = async (testId: string) => {
      const box = await page.getByTestId(testId).boundingBox();
      if (!box) throw new Error(`browser bench: ${testId} is not on screen`);
      return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    };
    const from = await center(`drag-${taskId}`);
    const to = await center(`agent-tab-${agentId}`);
    await startLongTasks(page);
    // As a hand drags: press, move in steps, let go once the tab shows the card is over it.
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move(to.x, to.y, { steps: 12 });
    await until('the tab to show the card over it', () => page.getByTestId(`agent-tab-${agentId}`).getAttribute('class'), (c) => !!c?.includes('drop-over'), 5000, 10);
    await page.mouse.up();
    await until(`${taskId} to show its holder`, () => page.getByTestId(`card-${taskId}`).getAttribute('data-holder'), (h) => h === agentId, 10_000, 10);
    longTasks.push(...(await stopLongTasks(page)));
    await w.call('task.release', { key, taskId });
    await until(`${taskId} to be open again`, () => page.getByTestId('column-open').locator('.count').textContent(), (c) => c === String(tasks));
  }
  const worst = longTasks.length ? Math.max(...longTasks) : 0;
  rows.push({
    name: `long tasks during a drag at ${k}`,
    value: longTasks.length,
    unit: 'tasks',
    note: `over ${DRAGS} drags onto an agent's tab, press → card shows its holder; max ${worst.toFixed(0)} ms; goal none over 50 ${verdict(longTasks.length === 0)}`,
  });
}

/**
 * The browser section of `npm run bench`: pty → page throughput beside the in-page parse ceiling, keystroke
 * echo and Ctrl-C under flood as the page sees them, claim-event render time and drag long tasks at 1k and
 * 5k tasks, the page's snapshot call and reload, and a prompt → the agent's state on its tab.
 */
export async function browserBench(): Promise<Row[]> {
  const chromium = findChromium();
  if (!chromium.found) return [{ name: 'browser section skipped', value: NaN, unit: '', note: chromium.problem }];
  const rows: Row[] = [];
  const prompts = promptEnv();
  const s = await openWindow({ env: prompts.env });
  let w: WindowClient | null = null;
  try {
    const { page } = s;
    await page.addInitScript({ content: NAME_SHIM });
    await page.addInitScript({ content: INSTRUMENT_SOCKET });
    await page.addInitScript({ content: DRAWN_PROBE });
    await page.goto(withQuery(s.served.url, 'debug=1'));
    await until('the page to connect', () => page.getByTestId('connection-status').getAttribute('data-state'), (st) => st === 'connected');
    await page.getByTestId('column-open').waitFor();

    // The terminal measures first, with no other window on serve: every window gets every push.
    progress('pty → page throughput');
    await throughput(s, rows);
    progress('echo');
    await echo(page, rows);
    progress('Ctrl-C under flood');
    await ctrlC(page, rows);

    w = await windowOn(s.served);
    const [thread] = await w.call('threads.list', {});
    if (!thread) throw new Error('browser bench: serve has no Thread open');
    const key = thread.key;
    progress('prompt → state');
    await stateInPage(page, w, key, rows);
    const target = await launchInPage(page, 'exec sleep 600');
    let have = 0;
    for (const tasks of SIZES) {
      progress(`board at ${tasks} tasks`);
      await addTasks(w, key, have + 1, tasks);
      have = tasks;
      await snapshots(page, s.served, tasks, rows);
      await claimsAndDrags(page, w, key, target, tasks, rows);
    }
  } finally {
    w?.close();
    await s.close();
    prompts.dispose();
  }
  return rows;
}
