import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { ensureRendererBuilt } from '../../e2e/harness.js';
import { threadKeyOf } from '../../src-main/thread/threadHost.js';
import { addressOf, tradeLink, type ServeAddress } from '../../e2e/serveClient.js';
import { windowOn, type WindowClient } from '../../e2e/windowClient.js';

const ROOT = join(import.meta.dirname, '..', '..');

export interface ServeProc {
  proc: ChildProcess;
  exit: Promise<number | null>;
  window: WindowClient;
  err: () => string;
  /** Where it serves and the cookie its window's link was traded for: for a second client of the test's own. */
  served: ServeAddress & { cookie: string };
}

/**
 * `forkbench serve PROJECT` as a real process on a given data folder and runtime folder (so a second
 * serve can come up on the same ones), with a window connected over its WebSocket as the page does, and
 * (given the Thread's key) hearing that Thread's pushes.
 */
export async function serveOn(o: { root: string; project: string; key?: string; env?: NodeJS.ProcessEnv; args?: string[]; ack?: boolean; stdin?: string }): Promise<ServeProc> {
  const proc = spawn(process.execPath, [join(ROOT, 'bin', 'forkbench.cjs'), 'serve', o.project, ...(o.args ?? [])], {
    env: { ...process.env, ...o.env, FORKBENCH_DATA_DIR: join(o.root, 'data'), XDG_RUNTIME_DIR: join(o.root, 'run') },
    stdio: [o.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  // Written and closed: `--board-url-stdin` reads stdin to its end.
  if (o.stdin !== undefined) proc.stdin!.end(o.stdin);
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (err += d));
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const link = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve printed no link in 30 s: ${err}`)), 30_000);
    proc.stdout!.on('data', () => {
      const m = /Open (http:\/\/[a-z0-9.-]+:\d+\/#code=[\w-]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exit.then((code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  const { cookie } = await tradeLink(link);
  const window = await windowOn({ ...addressOf(link), cookie });
  // As the page does: parsed output is acked, so a pane this window attached to (agent.screen) is paced by
  // it, not stopped at the high watermark. (`ack: false`: a window that never acks, a frozen page.)
  if (o.ack !== false) window.onPush((p) => {
    if (p.type === 'pane-data') void window.call('agent.ack', { key: p.key, agentId: p.agentId, chars: p.data.length }).catch(() => undefined);
  });
  if (o.key) await window.call('thread.snapshot', { key: o.key });
  return { proc, exit, window, err: () => err, served: { ...addressOf(link), cookie } };
}

/** The pty host's pid, from the line it logs when it listens (the newest one). */
export function ptyHostPidOf(dataDir: string): number | null {
  try {
    const log = fs.readFileSync(join(dataDir, 'ptyhost', 'ptyhost.log'), 'utf8');
    const all = [...log.matchAll(/ptyhost\[(\d+)\]: listening/g)];
    return all.length ? Number(all[all.length - 1]![1]) : null;
  } catch {
    return null;
  }
}

import { alive } from './processes.js';

export { alive };

/**
 * One project folder (and its data and runtime folders) for a test file's serves, made before its tests and
 * removed after them with every serve it started killed and its pty host ended. `at` is filled in beforeAll.
 */
export function servedProjectOfThisFile(prefix: string) {
  const at = { root: '', project: '', key: '' };
  const serves: ServeProc[] = [];
  beforeAll(() => {
    ensureRendererBuilt();
    at.root = fs.mkdtempSync(join(tmpdir(), prefix));
    at.project = join(at.root, 'project');
    fs.mkdirSync(at.project);
    at.key = threadKeyOf(at.project);
  });
  afterAll(() => {
    endServes(serves, [at.root]);
    fs.rmSync(at.root, { recursive: true, force: true });
  });
  return {
    at,
    /** `serve` on the file's project, killed after the file if it is still running. */
    async start(o: { args?: string[]; ack?: boolean } = {}): Promise<ServeProc> {
      const s = await serveOn({ root: at.root, project: at.project, key: at.key, ...o });
      serves.push(s);
      return s;
    },
    /** A serve the test started on folders of its own, killed after the file too if it is still running. */
    killAfter(s: ServeProc): void {
      serves.push(s);
    },
  };
}

/** Every serve still running killed, and the pty host of each host folder (`roots`: its data folder's) ended. */
function endServes(serves: readonly ServeProc[], roots: readonly string[]): void {
  for (const s of serves) if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
  for (const root of roots) {
    const pid = ptyHostPidOf(join(root, 'data'));
    if (pid && alive(pid)) process.kill(pid, 'SIGTERM');
  }
}

/** One host's folders under a file's root (servedHostsOfThisFile): data and runtime folders under `at`, and
 *  its own project folder, as a machine of its own has. */
export interface HostPlace {
  at: string;
  project: string;
  key: string;
}

/**
 * Serves standing for several machines in one test file: each host its own data, runtime and project folders
 * under one temporary root made before the file's tests; after them every serve started or handed here is
 * killed, each host's pty host ended, and the root removed.
 */
export function servedHostsOfThisFile(prefix: string) {
  const dir = { root: '' };
  const serves: ServeProc[] = [];
  const places: string[] = [];
  beforeAll(() => {
    ensureRendererBuilt();
    dir.root = fs.mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(() => {
    endServes(serves, places);
    fs.rmSync(dir.root, { recursive: true, force: true });
  });
  return {
    /** The file's root folder (filled in beforeAll). */
    get root(): string {
      return dir.root;
    },
    /** Host `name`'s folders, made now. */
    place(name: string): HostPlace {
      const at = join(dir.root, name);
      const project = join(at, 'project');
      fs.mkdirSync(project, { recursive: true });
      places.push(at);
      return { at, project, key: threadKeyOf(project) };
    },
    /** `serve` as host `p`, killed after the file if it is still running. */
    async start(p: HostPlace, o: { args?: string[]; env?: NodeJS.ProcessEnv; stdin?: string } = {}): Promise<ServeProc> {
      const s = await serveOn({ root: p.at, project: p.project, key: p.key, ...o });
      serves.push(s);
      return s;
    },
  };
}
