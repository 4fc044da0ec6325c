/**
 * A private PostgreSQL server for one test file: its own data folder and its own Unix socket folder under the
 * machine's temp folder, no TCP port (so test files running in parallel never fight over 5432), removed at
 * dispose. Real PostgreSQL, because what the board relies on (row locks across connections, crash recovery,
 * LISTEN across processes) is exactly what an in-process stand-in cannot give.
 *
 * The server refuses to run as root, so as root initdb and pg_ctl run as the `postgres` user (apt's package makes
 * it) via `runuser`, on folders chowned to it; as any other user they run directly. Nothing is written to the home
 * folder: everything lives under one temp folder, and a process exit handler stops a server a test left running.
 */
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { findOnPath } from '../../src-main/base/pathLookup.js';
import { alive } from './processes.js';

const run = promisify(execFile);

/** The superuser initdb makes; trust auth on the private socket, so no password exists to leak. */
export const PG_SUPERUSER = 'postgres';
/** Where Debian's `postgresql` package puts each major version's server binaries. */
const DEBIAN_PG_ROOT = '/usr/lib/postgresql';
/**
 * A Unix socket path may be at most 107 bytes (sun_path is 108 with its NUL); the server names its socket
 * `.s.PGSQL.5432` inside the socket folder, so a folder longer than this cannot be listened on.
 */
const MAX_SOCKET_DIR = 107 - '/.s.PGSQL.5432'.length;
/** pg_ctl -w waits this long (seconds) for start/stop; generous because the machine has 2 cores shared by 4. */
const PG_CTL_WAIT_S = 60;

export interface PgClusterOptions {
  /**
   * Durable commits (the default). `false` turns fsync and full_page_writes off for speed: SHARED-BOARD.md
   * measured that this still survives a *process* crash (kill -9, `restart -m immediate`: the OS page cache
   * survives), just not a machine crash. synchronous_commit is never turned off: that loses acknowledged commits.
   */
  fsync?: boolean;
  /** Extra postgresql.conf settings, e.g. `{ max_connections: '200' }`. */
  settings?: Record<string, string>;
}

export interface PgCluster {
  /** A node-postgres URL over this server's Unix socket: `postgresql://postgres@/DB?host=/tmp/…`. */
  url(database?: string): string;
  /** Makes a database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** A crash and its recovery: `pg_ctl restart -m immediate` (no checkpoint; WAL replay on start). */
  restartImmediate(): Promise<void>;
  /** Stops the server (connections are cut, new ones refused) until `startServer`: "the database went away". */
  stopServer(mode?: 'fast' | 'immediate'): Promise<void>;
  startServer(): Promise<void>;
  /** The postmaster's pid while it runs, else null. */
  pid(): number | null;
  /** The server's log so far (for a failing test's message). */
  log(): string;
  /** Stops the server and removes every folder it had. */
  dispose(): Promise<void>;
  readonly root: string;
  readonly socketDir: string;
  readonly dataDir: string;
  readonly binDir: string;
}

/** Servers not yet disposed in this process, shared across module copies (vitest may load this file per test file). */
const LIVE_KEY = Symbol.for('forkbench.test.pgClusters');
type Live = Map<string, () => void>;
function live(): Live {
  const g = globalThis as { [LIVE_KEY]?: Live };
  if (!g[LIVE_KEY]) {
    const set: Live = new Map();
    g[LIVE_KEY] = set;
    // 'exit' handlers must be synchronous: stop each server a test left running and remove its folders, so a
    // crashed or forgetful test file leaves no postgres behind holding shared memory.
    process.on('exit', () => {
      for (const stop of set.values()) stop();
    });
  }
  return g[LIVE_KEY]!;
}

/** The highest installed major version's bin folder, else `pg_config --bindir`, else the PATH's initdb. */
export function findPgBinDir(debianRoot = DEBIAN_PG_ROOT, searchPath = process.env.PATH ?? ''): string {
  try {
    const majors = fs
      .readdirSync(debianRoot)
      .filter((v) => /^\d+(\.\d+)?$/.test(v) && fs.existsSync(join(debianRoot, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (majors.length) return join(debianRoot, majors[0]!, 'bin');
  } catch {
    // No Debian layout: try the other two.
  }
  try {
    const pgConfig = findOnPath('pg_config', { PATH: searchPath });
    const dir = pgConfig && execFileSync(pgConfig, ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (dir && fs.existsSync(join(dir, 'initdb'))) return dir;
  } catch {
    // No pg_config.
  }
  for (const dir of searchPath.split(delimiter)) {
    if (dir && fs.existsSync(join(dir, 'initdb')) && fs.existsSync(join(dir, 'pg_ctl'))) return dir;
  }
  throw new Error(
    'PostgreSQL is not installed: the board tests need its server binaries (initdb, pg_ctl). ' +
      ".ci/run installs them; by hand: apt-get install -y postgresql (tests start their own private server; they never skip for want of it).",
  );
}

/** How often to look whether a stopped postmaster has exited: no event exists for a process not our child. */
const GONE_POLL_MS = 10;

/**
 * Whether a process runs: exists and is not a zombie. The postmaster's parent is pg_ctl, which exits at once, so
 * it is reparented to the machine's init; in a container that init may reap it only seconds later (measured
 * here: still `Z` 50 ms after pg_ctl stop returned, stop itself 0.17 s), and a zombie has already exited.
 */
export function running(pid: number): boolean {
  if (!alive(pid)) return false;
  try {
    // /proc/PID/stat: "pid (comm) S ...": the state letter follows the last ')' (comm may hold one).
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return alive(pid);
  }
}

/**
 * pg_ctl stop returns once the postmaster removed its pid file, a moment before the process itself exits; a
 * test that then checks "no server process" (or a new start) must wait for the exit itself.
 */
async function gone(pid: number, sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))): Promise<void> {
  const until = Date.now() + PG_CTL_WAIT_S * 1000;
  while (running(pid)) {
    if (Date.now() > until) throw new Error(`the PostgreSQL server (pid ${pid}) did not exit within ${PG_CTL_WAIT_S} s of being stopped`);
    await sleep(GONE_POLL_MS);
  }
}

/** The same wait inside a process 'exit' handler, where nothing asynchronous runs any more. */
function goneSync(pid: number): void {
  const until = Date.now() + PG_CTL_WAIT_S * 1000;
  const cell = new Int32Array(new SharedArrayBuffer(4));
  while (running(pid) && Date.now() < until) Atomics.wait(cell, 0, 0, GONE_POLL_MS);
}

const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

/** How to run a server binary: as root, through `runuser -u postgres --` (the server refuses root). */
function commandFor(binDir: string): { prefix: string[]; owner: { uid: number; gid: number } | null } {
  if (!isRoot()) return { prefix: [], owner: null };
  // runuser lives in /usr/sbin, which a non-login root shell's PATH may lack.
  const runuser = findOnPath('runuser', { PATH: ['/usr/sbin', '/sbin', process.env.PATH ?? ''].join(delimiter) });
  if (!runuser) throw new Error('running as root, PostgreSQL must run as the postgres user, and runuser (util-linux) was not found');
  let ids: string;
  try {
    ids = execFileSync('id', ['-u', PG_SUPERUSER], { encoding: 'utf8' }).trim() + ' ' + execFileSync('id', ['-g', PG_SUPERUSER], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(`running as root, PostgreSQL must run as the "${PG_SUPERUSER}" user, which does not exist (apt's postgresql package makes it); bin: ${binDir}`);
  }
  const [uid, gid] = ids.split(' ').map(Number) as [number, number];
  return { prefix: [runuser, '-u', PG_SUPERUSER, '--'], owner: { uid, gid } };
}

export async function startPgCluster(opts: PgClusterOptions = {}): Promise<PgCluster> {
  const binDir = findPgBinDir();
  const { prefix, owner } = commandFor(binDir);
  const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-pg-'));
  const dataDir = join(root, 'data');
  const socketDir = root;
  const logFile = join(root, 'server.log');
  if (socketDir.length > MAX_SOCKET_DIR) {
    fs.rmSync(root, { recursive: true, force: true });
    throw new Error(`the temp folder ${socketDir} is too long for a Unix socket (max ${MAX_SOCKET_DIR} chars): set TMPDIR to a shorter one`);
  }
  // The client (this process, or a serve it spawns as the same user) must reach the socket; the data folder
  // inside stays 0700 as the server demands.
  fs.chmodSync(root, 0o755);
  if (owner) fs.chownSync(root, owner.uid, owner.gid);

  const pgBin = async (name: string, args: string[]): Promise<void> => {
    const [cmd, ...rest] = [...prefix, join(binDir, name), ...args];
    try {
      // cwd: the postgres user may not be allowed into the test's own folder.
      await run(cmd!, rest, { cwd: root, env: { ...process.env, LC_ALL: 'C', PGDATA: dataDir } });
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`${name} ${args.join(' ')} failed: ${(e.stderr ?? '').trim() || e.message}\n--- server log ---\n${readLog()}`);
    }
  };
  const readLog = (): string => {
    try {
      return fs.readFileSync(logFile, 'utf8');
    } catch {
      return '(no log)';
    }
  };
  const pid = (): number | null => {
    try {
      const n = Number(fs.readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return Number.isInteger(n) && n > 0 ? n : null;
    } catch {
      return null;
    }
  };
  const ctl = (args: string[]) => pgBin('pg_ctl', ['-D', dataDir, '-w', '-t', String(PG_CTL_WAIT_S), ...args]);

  const stopSync = (): void => {
    const was = pid();
    if (was !== null) {
      try {
        const argv = [...prefix, join(binDir, 'pg_ctl'), '-D', dataDir, '-w', '-m', 'immediate', 'stop'];
        execFileSync(argv[0]!, argv.slice(1), { cwd: root, stdio: 'ignore' });
        goneSync(was);
      } catch {
        // Already gone: nothing to stop.
      }
    }
    fs.rmSync(root, { recursive: true, force: true });
  };
  live().set(root, stopSync);

  try {
    // --no-sync: the cluster is thrown away at the end, so initdb's own fsyncs only cost time (SHARED-BOARD.md).
    await pgBin('initdb', ['-D', dataDir, '-U', PG_SUPERUSER, '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
    const settings: Record<string, string> = {
      listen_addresses: "''",
      unix_socket_directories: `'${socketDir}'`,
      ...(opts.fsync === false ? { fsync: 'off', full_page_writes: 'off' } : {}),
      ...opts.settings,
    };
    // In postgresql.conf rather than `pg_ctl -o`: pg_ctl hands -o to a shell, and a restart must keep them.
    fs.appendFileSync(join(dataDir, 'postgresql.conf'), '\n# forkbench test cluster\n' + Object.entries(settings).map(([k, v]) => `${k} = ${v}\n`).join(''));
    await ctl(['-l', logFile, 'start']);
  } catch (err) {
    stopSync();
    live().delete(root);
    throw err;
  }

  const url = (database = 'postgres'): string => `postgresql://${PG_SUPERUSER}@/${encodeURIComponent(database)}?host=${encodeURIComponent(socketDir)}`;
  let disposed = false;
  return {
    root,
    socketDir,
    dataDir,
    binDir,
    url,
    pid,
    log: readLog,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    restartImmediate: () => ctl(['-l', logFile, '-m', 'immediate', 'restart']),
    async stopServer(mode = 'fast') {
      const was = pid();
      await ctl(['-m', mode, 'stop']);
      if (was !== null) await gone(was);
    },
    startServer: () => ctl(['-l', logFile, 'start']),
    async dispose() {
      if (disposed) return;
      disposed = true;
      // Immediate: the data is thrown away, so a clean checkpoint would only cost time.
      const was = pid();
      if (was !== null) {
        await ctl(['-m', 'immediate', 'stop']).catch(() => undefined);
        await gone(was);
      }
      fs.rmSync(root, { recursive: true, force: true });
      live().delete(root);
    },
  };
}

/**
 * A board URL as a host is given it: in a file only its owner can read (`--board-url-file`), never argv.
 * The file is made in `dir` (a test's own folder) with mode 0600 and its path returned.
 */
export function boardUrlFile(dir: string, url: string, name = 'board-url'): string {
  const path = join(dir, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path, `${url}\n`, { mode: 0o600 });
  fs.chmodSync(path, 0o600);
  return path;
}
