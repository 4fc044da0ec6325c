import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { startServe, type Served } from '../e2e/harness.js';
import { windowOn, type WindowClient } from '../e2e/windowClient.js';
import type { WindowPush } from '../src-shared/protocol/windowApi.js';
import { promptEnv, stateOverSocket } from './stateLatency.js';
import { median, percentileOf, type Row } from './table.js';

const ROOT = join(import.meta.dirname, '..');

/** Milliseconds from spawning a process to a line of its stdout matching `until` (or to its exit). */
function timeToOutput(args: string[], until: RegExp | null, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    let seenAt: number | null = null;
    p.stdout.on('data', (d) => {
      out += d;
      if (until && seenAt === null && until.test(out)) {
        seenAt = performance.now() - t0;
        p.kill('SIGINT');
      }
    });
    // Resolved once the process is gone, so the caller can remove its folders.
    p.on('exit', () => {
      if (!until) resolve(performance.now() - t0);
      else if (seenAt !== null) resolve(seenAt);
      else reject(new Error(`exited before printing ${until}: ${out}`));
    });
  });
}

/** The key of the one Thread a served host has open, opened in this window as a page opens it (its
 *  snapshot): serve sends a window the pushes of the Threads it has open only. */
async function threadKey(w: WindowClient): Promise<string> {
  const [t] = await w.call('threads.list', {});
  if (!t) throw new Error('serve has no Thread open');
  await w.call('thread.snapshot', { key: t.key });
  return t.key;
}

/** The first push `match` accepts; a bench that waits on one fails after 10 s instead of hanging. */
function nextPush(w: WindowClient, what: string, match: (p: WindowPush) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`window bench: no ${what} in 10 s`));
    }, 10_000);
    const off = w.onPush((p) => {
      if (!match(p)) return;
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

/** Add tasks all at once: the board's group commit takes them in a few hundred fsyncs. */
async function addTasks(w: WindowClient, key: string, n: number): Promise<void> {
  const BATCH = 500;
  for (let i = 0; i < n; i += BATCH) await Promise.all(Array.from({ length: Math.min(BATCH, n - i) }, (_, j) => w.call('task.add', { key, title: `task ${i + j}` })));
}

/** A pane attached to this client as a window attaches: its output is pushed here and paced by our acks. */
async function attachedPane(w: WindowClient, key: string, command: string): Promise<string> {
  const a = await w.call('agent.launch', { key, profile: 'custom', command, cols: 120, rows: 40 });
  await w.call('agent.screen', { key, agentId: a.id });
  return a.id;
}

function ackAll(w: WindowClient, key: string): () => void {
  return w.onPush((p) => {
    if (p.type === 'pane-data') void w.call('agent.ack', { key, agentId: p.agentId, chars: p.data.length }).catch(() => undefined);
  });
}

/**
 * The window's side of the host, over serve's WebSocket as a page uses it: serve's start, a snapshot at
 * 1k and 5k tasks, keystroke echo, Ctrl-C under an output flood, and a prompt → the agent's state.
 */
export async function windowBench(): Promise<Row[]> {
  const rows: Row[] = [];
  // serve start → URL against a bare node start: what a person waits for after `npm run serve`.
  const bare: number[] = [];
  const serveStart: number[] = [];
  for (let i = 0; i < 5; i++) {
    bare.push(await timeToOutput(['-e', ''], null));
    const s = await startServe();
    await s.stop();
    serveStart.push(await timeToOutput([join(ROOT, 'bin', 'forkbench.cjs'), 'serve', s.folder], /Open http/, { ...process.env, FORKBENCH_DATA_DIR: join(s.root, 'data2'), XDG_RUNTIME_DIR: join(s.root, 'run2') }));
    fs.rmSync(s.root, { recursive: true, force: true });
  }
  rows.push({ name: 'serve start → URL (median)', value: median(serveStart), unit: 'ms', note: `bare node ${median(bare).toFixed(0)} ms, ratio ${(median(serveStart) / median(bare)).toFixed(2)}` });

  let served: Served | null = null;
  const prompts = promptEnv();
  try {
    served = await startServe({ env: prompts.env });
    const w = await windowOn(served);
    const key = await threadKey(w);
    const stopAcks = ackAll(w, key);

    // Keystroke echo: one character into `cat` (the pty echoes it) until it comes back as pane data.
    const cat = await attachedPane(w, key, 'exec cat');
    const echo: number[] = [];
    for (let i = 0; i < 200; i++) {
      const ch = String.fromCharCode(97 + (i % 26));
      const back = nextPush(w, `the echo of '${ch}'`, (p) => p.type === 'pane-data' && p.agentId === cat && p.data.includes(ch));
      const t0 = performance.now();
      await w.call('agent.input', { key, agentId: cat, data: ch });
      await back;
      echo.push(performance.now() - t0);
      // A person types ~10 keys a second at most; 20 ms apart keeps each echo its own batch.
      await new Promise((r) => setTimeout(r, 20));
      if (i % 26 === 25) await w.call('agent.input', { key, agentId: cat, data: '\r' });
    }
    rows.push({ name: 'keystroke echo p50', value: percentileOf(echo, 50), unit: 'ms', note: 'agent.input → pane-data over the WebSocket, 200 keys' });
    rows.push({ name: 'keystroke echo p99', value: percentileOf(echo, 99), unit: 'ms', note: `goal < 5 ${percentileOf(echo, 99) < 5 ? '(met)' : '(NOT met)'}` });

    // Ctrl-C under a flood: `yes` fills the pane while this client acks like a window; then ^C.
    const ctrlC: number[] = [];
    for (let i = 0; i < 20; i++) {
      const yes = await attachedPane(w, key, 'exec yes');
      await nextPush(w, "`yes`'s output", (p) => p.type === 'pane-data' && p.agentId === yes);
      await new Promise((r) => setTimeout(r, 200)); // flooding for a while, flow control engaged
      const exited = nextPush(w, '`yes` to exit after ^C', (p) => p.type === 'agents' && p.agents.some((a) => a.id === yes && a.status === 'exited'));
      const t0 = performance.now();
      await w.call('agent.input', { key, agentId: yes, data: '\x03' });
      await exited;
      ctrlC.push(performance.now() - t0);
      await w.call('agent.close', { key, agentId: yes });
    }
    rows.push({ name: 'Ctrl-C under flood p50', value: percentileOf(ctrlC, 50), unit: 'ms', note: '^C → agent exited, `yes` flooding, 20 runs' });
    rows.push({ name: 'Ctrl-C under flood p99', value: percentileOf(ctrlC, 99), unit: 'ms', note: `goal < 100 ${percentileOf(ctrlC, 99) < 100 ? '(met)' : '(NOT met)'}` });

    // Prompt on screen → the agent's state pushed to the window (issue 19).
    await stateOverSocket(w, key, rows);

    // thread.snapshot at 1k and 5k tasks: what a window waits for when it opens or reloads.
    let have = 0;
    for (const n of [1000, 5000]) {
      await addTasks(w, key, n - have);
      have = n;
      const times: number[] = [];
      for (let i = 0; i < 20; i++) {
        const t0 = performance.now();
        await w.call('thread.snapshot', { key });
        times.push(performance.now() - t0);
      }
      rows.push({ name: `snapshot at ${n / 1000}k tasks (median)`, value: median(times), unit: 'ms', note: `p90 ${percentileOf(times, 90).toFixed(1)} ms, round trip with JSON; goal ≤ 15` });
    }
    stopAcks();
    w.close();
  } finally {
    await served?.stop();
    if (served) fs.rmSync(served.root, { recursive: true, force: true });
    prompts.dispose();
  }
  return rows;
}

