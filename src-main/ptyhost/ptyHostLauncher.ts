import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import type { Writable } from 'node:stream';
import { newAdoptionKey } from './adoptionKey.js';
import { nodeRuntime, ptyHostScript, type NodeRuntime } from '../base/nodeRuntime.js';
import { findOnPath } from '../base/pathLookup.js';
import { isChildDead } from '../pty/childExitWatcher.js';
import { PtyHostClient, PtyHostRequestError, PtyHostVersionError, type PtyHostClientOptions } from './ptyHostClient.js';
import { forkbenchVersion, PANE_REAPER_NAME, ptyHostPaths } from './protocol.js';
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
  /** A pty host asked to stop ends each agent with SIGHUP, SIGTERM 150 ms later and SIGKILL 2 s after that
   *  (PtySession.kill), all at once: ~2.5 s. 10 s covers that on a loaded machine; past it, it is killed. */
  stopTimeoutMs: 10_000,
} as const;

/** The idle time from FORKBENCH_PTY_HOST_IDLE_MS (the setting), else the default. Bad values say so. */
export function ptyHostIdleMs(env: Record<string, string | undefined> = process.env): number {
  const raw = env.FORKBENCH_PTY_HOST_IDLE_MS;
  if (raw === undefined || raw === '') return PtyHostLaunchConstants.defaultIdleMs;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`FORKBENCH_PTY_HOST_IDLE_MS must be a whole number of milliseconds, not '${raw}'`);
  return n;
}

/** The descriptor the pty host reads its adoption key from (the first after stdio); its reaper closes its
 *  own copy, so no process but the pty host ever has it open. */
export const ADOPTION_KEY_FD = 3;

/**
 * The pty host runs under a small perl parent that is a child subreaper (prctl PR_SET_CHILD_SUBREAPER, kept
 * across its exec of Node): a process an agent starts and detaches from its pane (a double fork, setsid) is
 * adopted by it instead of by init, so it is still known as an agent's when it asks to be taken for a person
 * (peerCredentials.callerOf, by this process's name). It reaps what it adopts, forwards the signals that stop
 * the pty host, and exits as the pty host does. Where prctl's number is not known (not Linux on these CPUs),
 * it is only a parent.
 */
const PANE_REAPER = `
use POSIX ();
$0 = '${PANE_REAPER_NAME}';
my %prctl = (x86_64 => 157, aarch64 => 167, i386 => 172, i686 => 172, armv7l => 172);
my $nr = $^O eq 'linux' ? $prctl{(POSIX::uname())[4]} : undef;
syscall($nr, 36, 1, 0, 0, 0) if $nr;
my $child = fork;
exit 127 unless defined $child;
if ($child == 0) { exec { $ARGV[0] } @ARGV; exit 127 }
POSIX::close(${ADOPTION_KEY_FD});
for my $s (qw(TERM INT HUP)) { $SIG{$s} = sub { kill $s, $child } }
while (1) {
  my $w = waitpid(-1, 0);
  if ($w == $child) { exit(($? & 127) ? 128 + ($? & 127) : $? >> 8) }
  if ($w == -1) { next if $!{EINTR}; exit 0 }
}`;

/** The pty host's command line and environment under a runtime: what connectPtyHost starts, with its
 *  adoption key written to descriptor ADOPTION_KEY_FD. */
export function ptyHostCommand(rt: NodeRuntime, socket: string, idleMs: number, env: Record<string, string | undefined> = process.env, perl: string | null = findOnPath('perl'), version: string = forkbenchVersion()) {
  const script = ptyHostScript(rt);
  const node = [rt.node, script, '--socket', socket, '--idle-ms', String(idleMs), '--key-fd', String(ADOPTION_KEY_FD), '--version', version];
  const [command, ...args] = perl && process.platform === 'linux' ? [perl, '-e', PANE_REAPER, ...node] : node;
  return { command: command!, args, script, env: { ...env, ...rt.env } };
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
export interface PtyHostLaunchOptions {
  idleMs?: number;
  version?: string;
  env?: Record<string, string | undefined>;
  /** A pty host of another version is stopped (its agents end cleanly) and ours started in its place. */
  replaceOther?: boolean;
  warn?: (m: string) => void;
  /** The request bound and timers (tests shorten the bound). */
  client?: PtyHostClientOptions;
  /** What runs the pty host; the process's own runtime by default (nodeRuntime.ts). */
  runtime?: NodeRuntime;
  /** The Forkbench version the started pty host speaks: this install's by default. Another one stands for a
   *  pty host another install left running (tests of the version refusal start one so). */
  ptyHostVersion?: string;
}

export async function connectPtyHost(dataRoot: string, o: PtyHostLaunchOptions = {}): Promise<{ client: PtyHostClient; started: boolean }> {
  const paths = ptyHostPaths(dataRoot);
  const version = o.version ?? forkbenchVersion();
  try {
    return { client: await connectWhenFree(paths.socket, version, o.client ?? {}), started: false };
  } catch (err) {
    if (err instanceof PtyHostVersionError && o.replaceOther) {
      await stopOtherPtyHost(err.theirs);
      o.warn?.(`forkbench: stopped the pty host of Forkbench ${err.theirs.version} (pid ${err.theirs.pid}) and its agents; starting this version's`);
    } else if (!missing(err)) throw err;
  }
  ensurePrivateDir(paths.dir);
  const log = fs.openSync(paths.log, 'a', 0o600);
  const run = ptyHostCommand(o.runtime ?? nodeRuntime(), paths.socket, o.idleMs ?? PtyHostLaunchConstants.defaultIdleMs, o.env ?? process.env, undefined, o.ptyHostVersion);
  const child = spawn(run.command, run.args, { detached: true, stdio: ['ignore', log, log, 'pipe'], env: run.env });
  fs.closeSync(log);
  const key = newAdoptionKey();
  const keyPipe = child.stdio[ADOPTION_KEY_FD] as Writable;
  keyPipe.on('error', () => undefined); // a pty host that died at once: its log says why
  keyPipe.end(key);
  child.unref();
  let exited: string | null = null;
  child.once('exit', (code, signal) => (exited = `exited ${code ?? signal}`));
  const deadline = Date.now() + PtyHostLaunchConstants.startTimeoutMs;
  for (;;) {
    try {
      return { client: await connectWhenFree(paths.socket, version, { ...o.client, key }), started: true };
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

/**
 * Stop a pty host of another version the way any version stops on SIGTERM: its agents end cleanly (their
 * process groups hang up, then terms, then kills) and it removes its socket. Its protocol may not be ours,
 * so a signal, not a request. One that has not gone in time is killed; its agents then get the hang-up of
 * their closed terminals.
 */
export async function stopOtherPtyHost(theirs: { pid: number; version: string }): Promise<void> {
  const { pid } = theirs;
  // The pid came from a hello over our owner-only socket; still, only a process that is a pty host is
  // signalled (the one that answered could have exited since and its pid gone to something else).
  const what = processKind(pid);
  if (what === 'gone') return;
  if (what === 'other') throw new Error(`pid ${pid}, which answered as the pty host of Forkbench ${theirs.version}, no longer runs one; not stopping it`);
  try {
    process.kill(pid, 'SIGTERM');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return;
    throw new Error(`cannot stop the pty host of Forkbench ${theirs.version} (pid ${pid}): ${(err as Error).message}`);
  }
  const deadline = Date.now() + PtyHostLaunchConstants.stopTimeoutMs;
  while (!isChildDead(pid)) {
    if (Date.now() > deadline) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone at last
      }
      break;
    }
    await new Promise((r) => setTimeout(r, PtyHostLaunchConstants.pollMs));
  }
}

/** Whether `pid` runs a pty host (any version's is `node …/ptyHostMain.js`). Where there is no /proc to
 *  ask, the hello's word is taken. */
function processKind(pid: number): 'gone' | 'pty-host' | 'other' {
  if (isChildDead(pid)) return 'gone';
  let cmdline: string;
  try {
    cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return fs.existsSync('/proc/self') ? 'gone' : 'pty-host';
  }
  return cmdline.includes('ptyHostMain') ? 'pty-host' : 'other';
}

function readTail(path: string): string {
  try {
    return fs.readFileSync(path, 'utf8').trimEnd().split('\n').slice(-3).join(' | ');
  } catch {
    return '(no log)';
  }
}
