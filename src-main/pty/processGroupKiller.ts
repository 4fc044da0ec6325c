/**
 * Ends everything a pane started: SIGHUP, then SIGTERM, then SIGKILL after a bound.
 *
 * The root of a pty is a session leader (forkpty calls setsid), so its pid is also its session id and its
 * first process group. An interactive shell puts each job in a process group of its own, so signalling
 * only `-rootPid` would miss `claude` started from a shell. We therefore signal every process group found
 * in the root's session, plus the groups of the root's descendants (which also covers platforms where ps
 * reports no session id). Pids are reused, so every scan first checks that the root is still the process
 * that was spawned (see groupsToSignal).
 */
import { DisposableStore } from '../../src-shared/lifecycle/disposableStore.js';
import type { Disposable } from '../../src-shared/lifecycle/emitter.js';
import { descendantsOf, listProcesses, readStartTicks, type ProcStat } from './procReader.js';
import { realTimers, type Timers } from '../base/timers.js';

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

/** Which process the pane's root is: its pid, and its start time where the platform tells it. */
export interface RootIdentity {
  pid: number;
  /** From /proc at spawn; undefined on platforms without it (macOS), where the shape of the row decides. */
  startTicks?: number | undefined;
}

/**
 * Process groups to signal for a pane: the root's own group, every group in its session, and the groups of
 * its descendants. Pure.
 *
 * A scan can run after the root has died and been reaped (dispose after a kill), and by then its pid may
 * belong to a stranger: pid_max is 32768 on many machines and a busy test run wraps it within a minute.
 * Following a stranger's tree once sent SIGKILL to the process group of the CI run itself. So:
 * - a row at the root's pid counts as the root only if it is the same process (start time), or, where the
 *   start time is unknown, if it has the shape of a pty root (leader of its own group and session);
 * - a stranger at the root's pid means the pane's session and groups are gone (the kernel does not reuse a
 *   pid still in use as a group or session id), so nothing is signalled;
 * - the caller's own process group is never signalled, whatever the table says.
 */
export function groupsToSignal(table: readonly ProcStat[], root: RootIdentity, selfPid: number = process.pid): number[] {
  const rootPid = root.pid;
  const row = table.find((p) => p.pid === rootPid);
  if (row && !isRoot(row, root)) return [];
  const groups = new Set<number>([rootPid]);
  for (const p of table) if (p.session === rootPid) groups.add(p.pgrp);
  if (row) for (const p of descendantsOf(table, rootPid)) groups.add(p.pgrp);
  // Group 0 is the kernel's and the init system's; -1 would mean "every process we may signal".
  for (const g of groups) if (g <= 1) groups.delete(g);
  const self = table.find((p) => p.pid === selfPid);
  if (self) groups.delete(self.pgrp);
  return [...groups];
}

function isRoot(row: ProcStat, root: RootIdentity): boolean {
  if (root.startTicks !== undefined && row.startTicks !== undefined) return row.startTicks === root.startTicks;
  return row.pgrp === root.pid && (row.session === undefined || row.session === root.pid);
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
  /** The root's start time; read from /proc when not given. */
  rootStartTicks?: number;
}

export class ProcessGroupKiller implements Disposable {
  private readonly timers: Timers;
  private readonly termAfterMs: number;
  private readonly killAfterMs: number;
  private readonly list: ListProcesses;
  /** The SIGTERM and SIGKILL steps of the escalation. */
  private readonly steps: DisposableStore;
  private started = false;
  private disposed = false;
  /** Groups seen for this pane, for `killNow()` (synchronous, so it cannot scan) and for a failed scan. */
  private readonly known = new Set<number>();
  private readonly root: RootIdentity;

  constructor(
    private readonly rootPid: number,
    options: ProcessGroupKillerOptions = {},
  ) {
    this.timers = options.timers ?? realTimers;
    this.steps = new DisposableStore(this.timers);
    this.termAfterMs = options.termAfterMs ?? KillConstants.termAfterMs;
    this.killAfterMs = options.killAfterMs ?? KillConstants.killAfterMs;
    this.list = options.listProcesses ?? listProcesses;
    this.root = { pid: rootPid, startTicks: options.rootStartTicks ?? readStartTicks(rootPid) };
    this.known.add(rootPid);
  }

  /** Starts the escalation. Idempotent: a second kill() does not restart the clock. */
  start(): void {
    if (this.started || this.disposed) return;
    this.started = true;
    // The root's group synchronously, before any scan: the common case (an agent that exits on HUP) must
    // not wait for a whole /proc scan.
    if (this.rootIsSameProcess()) signalGroup(this.rootPid, 'SIGHUP');
    void this.signalAll('SIGHUP');
    this.steps.timeout(() => void this.signalAll('SIGTERM'), this.termAfterMs);
    this.steps.timeout(() => void this.signalAll('SIGKILL'), this.killAfterMs);
  }

  /** Teardown without grace: SIGKILL to every known group now, then to any other group a scan finds (jobs
   *  of an interactive shell live in groups of their own). Works after dispose(). */
  killNow(): void {
    // Without a scan, the groups seen before are trusted only while the root is still the same process:
    // once it has been reaped, their ids may have passed to strangers.
    if (this.rootIsSameProcess()) for (const g of this.known) signalGroup(g, 'SIGKILL');
    void this.signalAll('SIGKILL', true);
  }

  dispose(): void {
    this.disposed = true;
    this.steps.dispose();
  }

  private async signalAll(signal: NodeJS.Signals, evenIfDisposed = false): Promise<void> {
    if (this.disposed && !evenIfDisposed) return;
    let groups: number[];
    try {
      // A fresh scan each time: a group that has died since the last scan is not signalled again.
      groups = groupsToSignal(await this.list(), this.root);
      for (const g of groups) this.known.add(g);
    } catch {
      groups = [...this.known]; // a failed scan still leaves the groups already seen
    }
    if (this.disposed && !evenIfDisposed) return;
    for (const g of groups) signalGroup(g, signal);
  }

  /** True while the root runs and is the process spawned; where start times are unknown (no /proc), it
   *  cannot be told and is assumed. */
  private rootIsSameProcess(): boolean {
    if (this.root.startTicks === undefined) return true;
    return readStartTicks(this.rootPid) === this.root.startTicks;
  }
}
