/**
 * The window in a real page: `forkbench serve` and Debian's Chromium (headless, no GPU, so every terminal is
 * on xterm's DOM renderer), measured inside the page rather than over a bare WebSocket (windowBench.ts).
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { findChromium } from '../e2e/findChromium.js';
import { openWindow, type Served, type WindowSession, withQuery } from '../e2e/harness.js';
import { claimEventTimings, clearEventTimings, INSTRUMENT_SOCKET, snapshotCalls, startLongTasks, stopLongTasks } from '../e2e/pageMeasures.js';
import { windowOn, type WindowClient } from '../e2e/windowClient.js';
import { OutputBatcherConstants } from '../src-main/pty/outputBatcher.js';
import { cpuBetween, cpuShareAvailable, describeCpu, sampleCpu, type CpuSpent } from './cpuShare.js';
import { percentileOf, type Row } from './table.js';

/** 250,000 lines of 80 chars: 20,000,000 bytes, ~3 s through the page here and ~1 s for the ceiling. Not
 *  50 MB: the ceiling queues all of it into xterm at once, and xterm drops writes beyond 50 MB queued. */
const FLOOD_LINES = 250_000;
const LINE_CHARS = 80;
/** Printable ASCII twice over, for the lines' text. */
const ALPHABET = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('').repeat(2);
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

const p = percentileOf;
const verdict = (ok: boolean) => (ok ? '(met)' : '(NOT met)');
const f1 = (n: number) => n.toFixed(1);
const progress = (what: string) => process.stderr.write(`  browser: ${what}…\n`);

/** What the bench reaches in the page through the debug hook (`?debug=1`, src-renderer/main.tsx). */
interface PageDebug {
  terminalText(agentId: string): string;
  parsedChars(agentId: string): number;
  onParsed(agentId: string, fn: ((total: number) => void) | null): boolean;
  detachedPane(container: HTMLElement): { feed: { data(data: string): void; onParsed: ((total: number) => void) | null }; dispose(): void };
}
/** The bench's own state in the page, one measurement at a time. */
interface Probe {
  t0: number;
  first: number;
  result: Promise<number>;
}
type BenchWindow = { __forkbenchDebug: PageDebug; __probe: Probe; __drawnAt?: number; __benchText?: string };

/**
 * tsx (the bench runs under it) names functions with an `__name` helper that exists only in Node; the page
 * functions handed to page.evaluate may carry a call to it.
 */
const NAME_SHIM = 'globalThis.__name ??= (f) => f;';

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

async function until<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000, everyMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await get();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`browser bench: timed out waiting for ${what} (last: ${JSON.stringify(v)?.slice(0, 200)})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const agentTabIds = (page: Page) =>
  page.locator('[data-testid^="agent-tab-"]').evaluateAll((els) => els.map((e) => (e.getAttribute('data-testid') as string).slice('agent-tab-'.length)));

/** Launch a custom command from the page's Launch menu, as a person does; its tab is selected and its pane shown. */
async function launchInPage(page: Page, command: string): Promise<string> {
  const before = new Set(await agentTabIds(page));
  await page.getByTestId('launch-menu').click();
  await page.getByTestId('launch-custom').click();
  await page.getByTestId('custom-command').fill(command);
  await page.getByTestId('custom-launch').click();
  const ids = await until(`the tab of "${command}"`, () => agentTabIds(page), (xs) => xs.some((x) => !before.has(x)));
  const id = ids.find((x) => !before.has(x)) as string;
  await until(`"${command}" to start`, () => page.getByTestId(`agent-tab-${id}`).getAttribute('data-status'), (s) => s !== 'starting');
  await page.getByTestId(`terminal-${id}`).locator('.xterm-rows').waitFor();
  await page.getByTestId(`terminal-${id}`).click();
  return id;
}

async function closeInPage(page: Page, id: string): Promise<void> {
  await page.getByTestId(`close-${id}`).click();
  // A running agent's tab asks first (issue 20); one that exited closes at once.
  const tab = page.getByTestId(`agent-tab-${id}`);
  await Promise.race([page.getByTestId('confirm-dialog').waitFor(), tab.waitFor({ state: 'detached' })]);
  if ((await page.getByTestId('confirm-dialog').count()) > 0) await page.getByTestId('confirm-ok').click();
  await tab.waitFor({ state: 'detached' });
}

/** The probe's result: ms, as the page measured it. */
async function probeResult(page: Page, what: string, timeoutMs = 30_000): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`browser bench: no result for ${what} in ${timeoutMs} ms`)), timeoutMs)));
  try {
    return await Promise.race([page.evaluate(() => (window as unknown as BenchWindow).__probe.result), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Arm the probe for one key: t0 is the keydown's timestamp as the page got it; the result is the ms from it
 * until the pane has parsed `more` chars of live output beyond what it has parsed now.
 */
function armParsed(page: Page, agentId: string, more: number): Promise<void> {
  return page.evaluate(
    ([id, n]) => {
      const w = window as unknown as BenchWindow;
      const dbg = w.__forkbenchDebug;
      const base = dbg.parsedChars(id);
      const want = base + n;
      const probe = { t0: 0, first: 0 } as Probe;
      window.addEventListener('keydown', (e) => (probe.t0 = probe.t0 || e.timeStamp), { capture: true, once: true });
      probe.result = new Promise<number>((resolve) => {
        dbg.onParsed(id, (total) => {
          if (!probe.first && total > base) probe.first = performance.now();
          if (total < want) return;
          dbg.onParsed(id, null);
          resolve(performance.now() - probe.t0);
        });
      });
      w.__probe = probe;
    },
    [agentId, more] as const,
  );
}

/** pty → page: `cat` of a file into a pane shown in the page, against the same bytes parsed from memory. */
async function throughput(s: WindowSession, rows: Row[]): Promise<void> {
  const { page } = s;
  const line = (i: number) => `${String(i).padStart(8, '0')} ${ALPHABET.slice(i % 23, (i % 23) + LINE_CHARS - 10)}\n`;
  const text = Array.from({ length: FLOOD_LINES }, (_, i) => line(i)).join('');
  const file = join(s.served.root, 'flood.txt');
  fs.writeFileSync(file, text);
  const bytes = Buffer.byteLength(text);
  // The pty's line discipline sends every \n as \r\n (onlcr): that is what the pane parses.
  const sent = bytes + FLOOD_LINES;

  // Held until a key arrives, so nothing of it is sent before the pane is attached and shown.
  const id = await launchInPage(page, `stty -echo -icanon min 1; printf 'ready\\n'; head -c1 >/dev/null; cat '${file}'; exec sleep 600`);
  await until('the pane to say ready', () => page.evaluate((a) => (window as unknown as BenchWindow).__forkbenchDebug.terminalText(a), id), (t) => t.includes('ready'));
  await armParsed(page, id, sent);
  const servePid = s.served.proc.pid as number;
  const cpuBefore = cpuShareAvailable ? await sampleCpu(servePid) : null;
  await page.keyboard.press('x');
  const paneMs = await probeResult(page, 'the flood to be parsed', 120_000);
  const paneCpu = cpuBefore ? cpuBetween(cpuBefore, await sampleCpu(servePid)) : null;
  const firstMs = await page.evaluate(() => (window as unknown as BenchWindow).__probe.first - (window as unknown as BenchWindow).__probe.t0);
  const terminalBox = await page.getByTestId(`terminal-${id}`).boundingBox();
  await closeInPage(page, id);

  // The ceiling: the same chars, in the pty's batch size, into a pane terminal made as the app makes one
  // and laid over the same spot, straight from memory: no pty, host or WebSocket.
  await page.evaluate((t) => ((window as unknown as BenchWindow).__benchText = t.replace(/\n/g, '\r\n')), text);
  const ceilingBefore = cpuShareAvailable ? await sampleCpu(servePid) : null;
  const ceilingMs = await page.evaluate(
    async ([box, chunk]) => {
      const w = window as unknown as BenchWindow;
      const data = w.__benchText as string;
      const el = document.createElement('div');
      el.style.cssText = `position:fixed;left:${box.x}px;top:${box.y}px;width:${box.width}px;height:${box.height}px;z-index:1000;overflow:hidden`;
      document.body.appendChild(el);
      const pane = w.__forkbenchDebug.detachedPane(el);
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      const done = new Promise<number>((resolve) => {
        pane.feed.onParsed = (total) => {
          if (total >= data.length) resolve(performance.now());
        };
      });
      const t0 = performance.now();
      for (let i = 0; i < data.length; i += chunk) pane.feed.data(data.slice(i, i + chunk));
      const ms = (await done) - t0;
      pane.dispose();
      el.remove();
      delete w.__benchText;
      return ms;
    },
    [terminalBox ?? { x: 0, y: 0, width: 800, height: 600 }, OutputBatcherConstants.maxBatchChars] as const,
  );
  const ceilingCpu = ceilingBefore ? cpuBetween(ceilingBefore, await sampleCpu(servePid)) : null;
  const mbs = (ms: number) => bytes / 1e6 / (ms / 1000);
  const ratio = mbs(paneMs) / mbs(ceilingMs);
  const mb = `${(bytes / 1e6).toFixed(0)} MB`;
  rows.push({
    name: 'pty → page throughput',
    value: mbs(paneMs),
    unit: 'MB/s',
    note: `\`cat\` of ${mb} (${FLOOD_LINES / 1000}k lines), key → last char parsed by the shown pane's xterm (DOM renderer) ${(paneMs / 1000).toFixed(1)} s, first after ${f1(firstMs)} ms`,
  });
  rows.push({ name: 'in-page parse ceiling', value: mbs(ceilingMs), unit: 'MB/s', note: `the same chars (\\n as \\r\\n, as the pty sends) from memory into a pane terminal as the app makes one, ${OutputBatcherConstants.maxBatchChars / 1000}k-char writes, to the last callback; ${mb}: xterm drops writes beyond 50 MB queued` });
  rows.push({ name: 'page throughput / ceiling', value: ratio, unit: 'x', note: `goal ≥ 0.8 ${verdict(ratio >= 0.8)}` });
  if (paneCpu && ceilingCpu) cpuRows(rows, paneCpu, ceilingCpu);
}

/**
 * Where the CPU went in both runs, and what that bounds. The pty path needs, for the same bytes, the page's
 * work (renderer and GPU process, as in the ceiling) plus the host's and the browser's; on `cores` cores
 * it cannot finish before all of it, spread perfectly, is done: that sets the best ratio this machine allows.
 */
function cpuRows(rows: Row[], pane: CpuSpent, ceiling: CpuSpent): void {
  rows.push({ name: 'CPU during the pty → page flood', value: pane.coresBusy, unit: 'cores', note: describeCpu(pane) });
  rows.push({ name: 'CPU during the in-page ceiling', value: ceiling.coresBusy, unit: 'cores', note: describeCpu(ceiling) });
  // The ceiling's page work, plus what only the pty path needs: serve (pty read, the host's xterm mirror,
  // JSON, WebSocket) and the rest of Chromium (the socket's bytes through the browser process).
  const needMs = ceiling.ms.renderer + ceiling.ms.gpu + pane.ms.serve + pane.ms.chromium;
  const floorMs = Math.max(ceiling.wallMs, needMs / pane.cores);
  rows.push({
    name: 'best ratio these cores allow',
    value: ceiling.wallMs / floorMs,
    unit: 'x',
    note: `the ceiling's page CPU + the flood's serve and browser CPU = ${(needMs / 1000).toFixed(2)} s, over ${pane.cores} cores at best ${(floorMs / 1000).toFixed(2)} s against the ceiling's ${(ceiling.wallMs / 1000).toFixed(2)} s`,
  });
}

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
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
      await new Promise((r) => (ws.onopen = r));
      const call = (id: number, method: string, params: unknown) =>
        new Promise<{ ms: number; data: string }>((resolve) => {
          const t0 = performance.now();
          ws.onmessage = (e) => String(e.data).startsWith(`{"id":${id},`) && resolve({ ms: performance.now() - t0, data: String(e.data) });
          ws.send(JSON.stringify({ id, method, params }));
        });
      const list = JSON.parse((await call(1, 'threads.list', {})).data) as { result: Array<{ key: string }> };
      const times: number[] = [];
      for (let i = 0; i < 5; i++) times.push((await call(i + 2, 'thread.snapshot', { key: list.result[0]?.key })).ms);
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
 * 5k tasks, and the page's snapshot call and reload.
 */
export async function browserBench(): Promise<Row[]> {
  const chromium = findChromium();
  if (!chromium.found) return [{ name: 'browser section skipped', value: NaN, unit: '', note: chromium.problem }];
  const rows: Row[] = [];
  const s = await openWindow();
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
  }
  return rows;
}
