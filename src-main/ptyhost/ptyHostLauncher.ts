import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PtyHostClient, PtyHostRequestError, type PtyHostClientOptions } from './ptyHostClient.js';
import { forkbenchVersion, ptyHostPaths } from './protocol.js';
import { ensurePrivateDir } from './socketChecks.js';

export const PtyHostLaunchConstants = {
  /** A board host gone this long ends its agents: long enough for a crash, an update or a reboot of the
   *  window; short enough that agents nobody will come back to do not run all night (the 1 h). */
  defaultIdleMs: 60 * 60 * 1000,
  /** Node starts and listens in ~100 ms here; 10 s covers a loaded 2-core machine. */
  startTimeoutMs: 10_000,
  pollMs: 25,
  /** A pty host refuses a second board host while its first one's connection lives. A board host that just
   *  died (its successor is starting) is seen gone within a few ms of its death; 3 s covers a loaded
   *  machine, and past that another board host really is connected. */
  busyWaitMs: 3_000,
} as const;

/** The idle time from FORKBENCH_PTY_HOST_IDLE_MS (the setting), else the default. Bad values say so. */
export function ptyHostIdleMs(env: Record<string, string | undefined> = process.env): number {
  const raw = env.FORKBENCH_PTY_HOST_IDLE_MS;
  if (raw === undefined || raw === '') return PtyHostLaunchConstants.defaultIdleMs;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`FORKBENCH_PTY_HOST_IDLE_MS must be a whole number of milliseconds, not '${raw}'`);
  return n;
}

function mainScript(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const beside = join(here, 'ptyHostMain.js');
  // Loaded from source (tests under tsx): the built pty host is what runs as a process.
  return fs.existsSync(beside) ? beside : join(here, '..', '..', 'dist-main', 'src-main', 'ptyhost', 'ptyHostMain.js');
}

const missing = (err: unknown) => ['ENOENT', 'ECONNREFUSED'].includes((err as NodeJS.ErrnoException).code ?? '');
const busy = (err: unknown) => err instanceof PtyHostRequestError && err.code === 'busy';

/** Connect and greet, again while the pty host says it is busy with a board host that is on its way out. */
async function connectWhenFree(socket: string, version: string, o: PtyHostClientOptions): Promise<PtyHostClient> {
  const deadline = Date.now() + PtyHostLaunchConstants.busyWaitMs;
  for (;;) {
    try {
      return await PtyHostClient.connect(socket, version, o);
    } catch (err) {
      if (!busy(err) || Date.now() > deadline) throw err;
    }
    await new Promise((r) => setTimeout(r, PtyHostLaunchConstants.pollMs));
  }
}

/**
 * The data folder's pty host: the one already running (after a board host restart), or a new one started
 * detached (its own session, so a Ctrl-C or a closed terminal of the board host does not reach it). A
 * socket that is not ours or not private, or a pty host of another version, is refused with its reason.
 */
export async function connectPtyHost(
  dataRoot: string,
  o: { idleMs?: number; version?: string; env?: Record<string, string | undefined>; client?: PtyHostClientOptions } = {},
): Promise<{ client: PtyHostClient; started: boolean }> {
  const paths = ptyHostPaths(dataRoot);
  const version = o.version ?? forkbenchVersion();
  try {
    return { client: await connectWhenFree(paths.socket, version, o.client ?? {}), started: false };
  } catch (err) {
    if (!missing(err)) throw err;
  }
  ensurePrivateDir(paths.dir);
  const log = fs.openSync(paths.log, 'a', 0o600);
  const child = spawn(process.execPath, [mainScript(), '--socket', paths.socket, '--idle-ms', String(o.idleMs ?? PtyHostLaunchConstants.defaultIdleMs)], {
    detached: true,
    stdio: ['ignore', log, log],
    // Electron's binary runs as plain Node with this; Node ignores it.
    env: { ...(o.env ?? process.env), ELECTRON_RUN_AS_NODE: '1' },
  });
  fs.closeSync(log);
  child.unref();
  let exited: string | null = null;
  child.once('exit', (code, signal) => (exited = `exited ${code ?? signal}`));
  const deadline = Date.now() + PtyHostLaunchConstants.startTimeoutMs;
  for (;;) {
    try {
      return { client: await connectWhenFree(paths.socket, version, o.client ?? {}), started: true };
    } catch (err) {
      if (!missing(err)) throw err;
    }
    if (exited !== null || Date.now() > deadline) {
      const tail = readTail(paths.log);
      throw new Error(`the pty host did not start (${exited ?? 'no answer in 10 s'}); its log ${paths.log} ends: ${tail}`);
    }
    await new Promise((r) => setTimeout(r, PtyHostLaunchConstants.pollMs));
  }
}

function readTail(path: string): string {
  try {
    return fs.readFileSync(path, 'utf8').trimEnd().split('\n').slice(-3).join(' | ');
  } catch {
    return '(no log)';
  }
}
