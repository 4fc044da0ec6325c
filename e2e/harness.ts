import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { findChromium } from './findChromium.js';
import { PRINTED_LINK, tradeLink } from './serveClient.js';

const ROOT = join(import.meta.dirname, '..');
/** The user's Chromium or Chrome: FORKBENCH_CHROMIUM, CHROME_PATH, the usual install paths, PATH (findChromium.ts). */
const chromiumSearch = findChromium();
export const CHROMIUM = chromiumSearch.path;
/** Chromium's flags for the tests: headless with no GPU (the test machines have neither a display nor one);
 *  no sandbox, as Chromium refuses to start its sandbox as root, which the test machines run as; and no
 *  background traffic (updates, sync, first-run pages, QUIC), so a test talks only to its own serve. */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

export interface Served {
  /** A printed link whose one-time code no one has spent: for the browser. */
  url: string;
  /** The credential the harness's own code trade got (a browser that opens `url` gets one of its own). */
  credential: string;
  /** The Cookie header that carries it, for windows that are not browsers. */
  cookie: string;
  /** The server's own host name (`forkbench-….localhost`): the only one it answers under. */
  host: string;
  port: number;
  folder: string;
  root: string;
  proc: ChildProcess;
  stderr: () => string;
  /** Every link serve printed so far (a browser's trade makes it print the next). */
  links: () => string[];
  stop(): Promise<number | null>;
}

/** A printed link, with its query set to `query` (`debug=1`): the query goes before the fragment's code. */
export function withQuery(link: string, query: string): string {
  const u = new URL(link);
  u.search = query;
  return u.href;
}

/**
 * `forkbench serve FOLDER` as a user runs it: a real child process, its link read from stdout. The first
 * link's code is traded here, as a page trades it, for the cookie that test clients send (`cookie`); `url`
 * is the next link serve prints, still unspent, for a browser. `prepare` fills the folder first (a git
 * repository, say); `env` is added to serve's environment, which its agents inherit; `nodeArgs` go to node,
 * `args` to serve (`--keep-agents`); `root` restarts on an earlier serve's folders.
 */
export async function startServe(o: { prepare?: (folder: string) => void; env?: NodeJS.ProcessEnv; nodeArgs?: string[]; args?: string[]; root?: string } = {}): Promise<Served> {
  // `root` again: the same project and data folder as an earlier serve, as a person restarting it has.
  const root = o.root ?? fs.mkdtempSync(join(tmpdir(), 'forkbench-e2e-'));
  const folder = join(root, 'project');
  if (!o.root) fs.mkdirSync(folder);
  o.prepare?.(folder);
  const proc = spawn(process.execPath, [...(o.nodeArgs ?? []), join(ROOT, 'bin', 'forkbench.cjs'), 'serve', folder, ...(o.args ?? [])], {
    env: { ...process.env, ...o.env, FORKBENCH_DATA_DIR: join(root, 'data'), XDG_RUNTIME_DIR: join(root, 'run') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stderr?.on('data', (d) => (err += d));
  proc.stdout?.on('data', (d) => (out += d));
  /** The `n`th link serve printed (0 = the first). */
  const nthLink = (n: number) =>
    new Promise<string>((resolve, reject) => {
      const find = () => [...out.matchAll(PRINTED_LINK)][n]?.[1];
      const timer = setTimeout(() => reject(new Error(`serve printed no link #${n + 1} in 30 s; stderr: ${err}`)), 30_000);
      const check = () => {
        const link = find();
        if (!link) return;
        clearTimeout(timer);
        proc.stdout?.off('data', check);
        resolve(link);
      };
      proc.stdout?.on('data', check);
      proc.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
      check();
    });
  const first = await nthLink(0);
  const { cookie, credential } = await tradeLink(first);
  return {
    url: await nthLink(1),
    credential,
    cookie,
    host: new URL(first).hostname,
    port: Number(new URL(first).port),
    folder,
    root,
    proc,
    stderr: () => err,
    links: () => [...out.matchAll(PRINTED_LINK)].map((m) => m[1] as string),
    stop: () =>
      new Promise((resolve) => {
        if (proc.exitCode !== null) return resolve(proc.exitCode);
        proc.once('exit', (code) => resolve(code));
        proc.kill('SIGINT');
      }),
  };
}

export function ensureRendererBuilt(): void {
  if (!fs.existsSync(join(ROOT, 'dist-renderer', 'index.html')) || !fs.existsSync(join(ROOT, 'dist-main', 'cli', 'forkbench.cjs'))) {
    throw new Error('build first: `npm run build` (npm test does it)');
  }
}

/** Screenshots of every e2e run land here. */
export const SHOTS = join(ROOT, 'test-results', 'e2e');

export interface WindowSession {
  served: Served;
  browser: Browser;
  page: Page;
  shot(name: string): Promise<Buffer>;
  close(): Promise<void>;
}

/** `forkbench serve` plus Debian's Chromium on one page: what every window e2e starts from. */
export async function openWindow(o: Parameters<typeof startServe>[0] = {}): Promise<WindowSession> {
  ensureRendererBuilt();
  if (!chromiumSearch.found) throw new Error(chromiumSearch.problem);
  fs.mkdirSync(SHOTS, { recursive: true });
  const served = await startServe(o);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.on('pageerror', (e) => console.error('page error:', e.message));
  return {
    served,
    browser,
    page,
    shot: (name) => page.screenshot({ path: join(SHOTS, `${name}.png`) }),
    async close() {
      await browser.close();
      const code = await served.stop();
      if (code !== 0) console.error(`serve exited ${code}: ${served.stderr()}`);
      fs.rmSync(served.root, { recursive: true, force: true });
    },
  };
}
