/**
 * Ends everything a pane started: SIGHUP, then SIGTERM, then SIGKILL after a bound.
 *
 * The root of a pty is a session leader (forkpty calls setsid), so its pid is also its session id and its
 * first process group. An interactive shell puts each job in a process group of its own, so signalling
 * only `-rootPid` would miss `claude` started from a shell. We therefore signal every process group found
 * in the root's session, plus the groups of the root's descendants (which also covers platforms where ps
 * reports no session id). Signalling is safe against pid reuse: the kernel does not hand out a pid while
 * it is still in use as a live process group or session id.
 */
import type { Disposable } from './emitter.js';
import { descendantsOf, listProcesses, type ProcStat } from './procLiveness.js';
import { realTimers, type Timers } from './timers.js';

export const KillConstants = {
  /** SIGHUP alone first: it is what closing a terminal sends, and shells forward it to their jobs and
   *  editors save recovery files on it. 150 ms later SIGTERM follows for processes that ignore HUP
   *  (nohup'd children). The value keeps a TERM-honouring process inside the board's hard-release target
   *  (p99 < 300 ms from kill to exit event): 150 ms + a few ms to exit + the <= 50 ms exit quiet period. */
  termAfterMs: 150,
  /** SIGKILL for whatever still runs. 2 s gives a well-behaved agent time to flush its state on TERM and
   *  is short enough that a stuck pane is gone before a person clicks "kill" a second time. */
  killAfterMs: 2_000,
} as const;

export type ListProcesses = () => Promise<ProcStat[]>;

/** Process groups to signal for a pane whose root is `rootPid`: the root's own group, every group in its
 *  session, and the groups of its descendants. Pure. */
export function groupsToSignal(table: readonly ProcStat[], rootPid: number): number[] {
  const groups = new Set<number>([rootPid]);
  for (const p of table) if (p.session === rootPid && p.pgrp > 1) groups.add(p.pgrp);
  for (const p of descendantsOf(table, rootPid)) if (p.pgrp > 1) groups.add(p.pgrp);
  return [...groups];
}

/** Sends `signal` to a process group; false when the group no longer exists. */
function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // ESRCH: the group is gone. EPERM cannot happen for our own children.
  }
}

export interface ProcessGroupKillerOptions {
  termAfterMs?: number;
  killAfterMs?: number;
  timers?: Timers;
  listProcesses?: ListProcesses;
}

export class ProcessGroupKiller implements Disposable {
  private readonly timers: Timers;
  private readonly termAfterMs: number;
  private readonly killAfterMs: number;
  private readonly list: ListProcesses;
  private handles: unknown[] = [];
  private started = false;
  private disposed = false;
  /** Groups seen for this pane, for `killNow()` (synchronous, so it cannot scan) and for a failed scan. */
  private readonly known = new Set<number>();

  constructor(
    private readonly rootPid: number,
    options: ProcessGroupKillerOptions = {},
  ) {
    this.timers = options.timers ?? realTimers;
    this.termAfterMs = options.termAfterMs ?? KillConstants.termAfterMs;
    this.killAfterMs = options.killAfterMs ?? KillConstants.killAfterMs;
    this.list = options.listProcesses ?? listProcesses;
    this.known.add(rootPid);
  }

  /** Starts the escalation. Idempotent: a second kill() does not restart the clock. */
  start(): void {
    if (this.started || this.disposed) return;
    this.started = true;
    // The root's group synchronously, before any scan: the common case (an agent that exits on HUP) must
    // not wait for /proc I/O.
    signalGroup(this.rootPid, 'SIGHUP');
    void this.signalAll('SIGHUP');
    this.handles.push(this.timers.setTimeout(() => void this.signalAll('SIGTERM'), this.termAfterMs));
    this.handles.push(this.timers.setTimeout(() => void this.signalAll('SIGKILL'), this.killAfterMs));
  }

  /** Teardown without grace: SIGKILL to every known group now, then to any other group a scan finds (jobs
   *  of an interactive shell live in groups of their own). Works after dispose(). */
  killNow(): void {
    for (const g of this.known) signalGroup(g, 'SIGKILL');
    void this.signalAll('SIGKILL', true);
  }

  dispose(): void {
    this.disposed = true;
    for (const h of this.handles) this.timers.clearTimeout(h);
    this.handles = [];
  }

  private async signalAll(signal: NodeJS.Signals, evenIfDisposed = false): Promise<void> {
    if (this.disposed && !evenIfDisposed) return;
    let groups: number[];
    try {
      // A fresh scan each time: a group that has died since the last scan is not signalled again.
      groups = groupsToSignal(await this.list(), this.rootPid);
      for (const g of groups) this.known.add(g);
    } catch {
      groups = [...this.known]; // a failed scan still leaves the groups already seen
    }
    if (this.disposed && !evenIfDisposed) return;
    for (const g of groups) signalGroup(g, signal);
  }
}
