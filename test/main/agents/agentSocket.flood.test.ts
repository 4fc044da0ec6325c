/**
 * Issue 29, finding 3: at a common desktop fd limit (1024), 1,100 idle connections to the agents' socket
 * made other agents' calls fail; an accept's EMFILE became an uncaught exception, so serve stopped and ended
 * every agent. 2,000 connections each holding an unfinished line took serve from 70 MB to 2.05 GB. Here the
 * real `serve` (its fd limit set to 1024:1024 while it runs), a real agent in a pane calling the board in a
 * loop, and 2,000 idle plus 2,000 half-line connections from outside.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { socketPathFor } from '../../../src-main/agents/agentSocket.js';
import { runtimeDir } from '../../../src-main/agents/runtimeDir.js';
import { ensureRendererBuilt, startServe, type Served } from '../../../e2e/harness.js';
import { windowOn } from '../../../e2e/windowClient.js';

const IDLE = 2_000;
const HALF_LINE = 2_000;
/** Each half line: just under the 1 MiB frame limit, as in the issue (70 MB -> 2.05 GB); the host now
 *  closes a connection past 192 KiB before it authenticates, so the line's size no longer counts. */
const HALF_LINE_BYTES = 1024 * 1024 - 64;
/** The stated bound: serve's peak resident memory grows by at most this much under the whole flood. The
 *  waiting pool holds at most 64 × 192 KiB; the rest is garbage of connections read and closed, which V8
 *  collects late (measured 130-140 MB on a 2-core box). */
const PEAK_GROWTH_BOUND_MB = 200;
/** The agent's board calls that must succeed while the flood is held. */
const CALLS_DURING_FLOOD = 3;

let served: Served | undefined;
const clients: net.Socket[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  await served?.stop();
  if (served) fs.rmSync(served.root, { recursive: true, force: true });
  served = undefined;
});

/** A value from /proc/<pid>/status, in MB (VmRSS now, VmHWM the peak so far). */
function memMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1]) / 1024;
}

/** Connections opened at once: fewer than the listen backlog (511), so every one is taken in by the host
 *  rather than refused by the kernel, as a patient flooder's are. */
const WAVE = 200;

/** Opens a connection; with `bytes`, writes that much of a request line that never ends. Resolves once the
 *  connection is open and its bytes are handed to the kernel, or it was closed (the host refused it). */
async function flood(path: string, n: number, bytes: number): Promise<void> {
  for (let i = 0; i < n; i += WAVE) await Promise.all(Array.from({ length: Math.min(WAVE, n - i) }, () => flooder(path, bytes)));
}

function flooder(path: string, bytes: number): Promise<void> {
  return new Promise((resolve) => {
    const c = net.createConnection(path);
    clients.push(c);
    c.on('error', () => resolve());
    c.on('close', () => resolve());
    c.on('connect', () => {
      if (bytes === 0) return resolve();
      const head = '{"jsonrpc":"2.0","id":1,"method":"board","params":{"x":"';
      c.write(head + 'y'.repeat(bytes - head.length), () => resolve());
    });
  });
}

const lines = (file: string): string[] => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

describe('the agents’ socket under a connection flood, at fd limit 1024', () => {
  it('2,000 idle and 2,000 half-line connections: memory stays bounded, the agent’s calls are answered, the window works, no agent ends', async () => {
    ensureRendererBuilt();
    const s = await startServe();
    served = s;
    const pid = s.proc.pid as number;
    const w = await windowOn(s);
    const key = (await w.call('threads.list', {}))[0]?.key as string;
    // In the Thread folder, which a contained agent writes in a Thread without git (its private /tmp would
    // hide a log in the test's tmp root).
    const log = join(s.folder, 'calls.log');
    // The agent calls the board from its own pane, over and over, and logs each outcome.
    const agent = await w.call('agent.launch', {
      key,
      profile: 'custom',
      command: `while :; do if out=$(forkbench board --json 2>&1); then echo ok >> ${log}; else echo "fail $(echo "$out" | tr '\\n' ' ' | head -c 300)" >> ${log}; fi; sleep 0.2; done`,
      cols: 80,
      rows: 24,
    });
    await expect.poll(() => lines(log).length, { timeout: 20_000 }).toBeGreaterThan(0);
    expect(lines(log).filter((l) => l.startsWith('fail'))).toEqual([]);
    const path = socketPathFor(runtimeDir(join(s.root, 'run')), key);
    /** The agent's calls go on being answered while a flood is held, and none fails. */
    const agentAnswered = async () => {
      const at = lines(log).length;
      await expect.poll(() => lines(log).length, { timeout: 30_000 }).toBeGreaterThanOrEqual(at + CALLS_DURING_FLOOD);
      expect(lines(log).slice(at).filter((l) => l.startsWith('fail'))).toEqual([]);
    };

    // 1. At serve's own fd limit: 2,000 half lines. What the host holds for them is bounded.
    const baselineRss = memMb(pid, 'VmRSS');
    const baselinePeak = memMb(pid, 'VmHWM');
    await flood(path, HALF_LINE, HALF_LINE_BYTES);
    await agentAnswered();
    const peak = memMb(pid, 'VmHWM');
    console.log(`serve RSS ${baselineRss.toFixed(0)} MB before the flood (peak ${baselinePeak.toFixed(0)} MB), peak ${peak.toFixed(0)} MB under 2,000 half lines`);
    expect(peak - Math.max(baselinePeak, baselineRss), `peak growth under the flood, MB (peak ${peak.toFixed(0)}, baseline ${baselineRss.toFixed(0)})`).toBeLessThan(PEAK_GROWTH_BOUND_MB);

    // 2. A common desktop's limit, soft and hard, on the running serve (Node raised its own soft limit to
    // the hard one at start: here there is nothing left to raise to), and 2,000 idle connections on top.
    execFileSync('prlimit', ['--pid', String(pid), '--nofile=1024:1024']);
    expect(fs.readFileSync(`/proc/${pid}/limits`, 'utf8')).toMatch(/Max open files\s+1024\s+1024/);
    await flood(path, IDLE, 0);
    await agentAnswered();
    // The window works.
    expect((await w.call('thread.snapshot', { key })).board).toBeDefined();
    // Nothing ended an agent, and serve is serving.
    expect(() => process.kill(agent.pid as number, 0)).not.toThrow();
    expect(s.proc.exitCode).toBeNull();
    expect(s.stderr()).not.toMatch(/uncaught|stopping/);
    w.close();
  }, 120_000);
});
