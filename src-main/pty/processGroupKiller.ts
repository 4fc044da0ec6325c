/**
 * Ends everything a pane started: SIGHUP, then SIGTERM, then SIGKILL after a bound; the pane's other
 * processes first, its root (the session leader) once they are gone or their SIGTERM is due.
 *
 * The root goes last because its exit is a second, unasked-for hang-up: the kernel sends SIGHUP to the
 * terminal's foreground group when the session leader exits. A shell's start-up files run in that group,
 * and a start-up step cleaning up after our SIGHUP (pyenv's rehash removing its lock in an EXIT trap) was
 * cut off by it and left the lock behind for every later shell on the machine.
 *
 * The root of a pty is a session leader (forkpty calls setsid), so its pid is also its session id and its
 * first process group. An interactive shell puts each job in a process group of its own, so signalling
 * only `-rootPid` would miss `claude` started from a shell. We therefore signal every process group found
 * in the root's session, plus the groups of the root's descendants (which also covers platforms where ps
 * reports no session id). Pids are reused, so every scan first checks that the root is still the process
 * that was spawned (see groupsToSignal).
 */
import * as fs from 'node:fs';
import { DisposableStore } from '../../src-shared/lifecycle/disposableStore.js';
import type { Disposable } from '../../src-shared/lifecycle/emitter.js';
import { isSameProcess, readProcStat, readStartTicks, type ProcStat } from '../base/procStat.js';
import { descendantsOf, listProcesses } from './procReader.js';
import { monotonicNow, realTimers, type Timers } from '../base/timers.js';

export const KillConstants = {
  /** SIGHUP alone first: it is what closing a terminal sends, and shells forward it to their jobs and
   *  editors save recovery files on it. 150 ms later SIGTERM follows for processes that ignore HUP
   *  (nohup'd children). The value keeps a TERM-honouring process inside the board's hard-release target
   *  (p99 < 300 ms from kill to exit event): 150 ms + a few ms to exit + the <= 50 ms exit quiet period. */
  termAfterMs: 150,
  /** SIGKILL for whatever still runs. 2 s gives a well-behaved agent time to flush its state on TERM and
   *  is short enough that a stuck pane is gone before a person clicks "kill" a second time. */
  killAfterMs: 2_000,
  /** How often the processes seen are looked at while they end, so the root is hung up soon after the
   *  others are gone. A look reads only their /proc/PID/stat; a whole /proc scan (a few ms with a few
   *  hundred processes) runs only when a signal is due. */
  pollMs: 25,
} as const;

export type ListProcesses = () => Promise<ProcStat[]>;

/** Escalations handed over by owners that went away (finish()), until each has ended. */
const lingering = new Set<ProcessGroupKiller>();
const drained: Array<() => void> = [];

/** Resolves once every escalation handed over with finish() has ended (at most killAfterMs from now): a
 *  process about to exit waits for it, or its agents' stragglers would outlive the SIGKILL step. */
export function lingeringKills(): Promise<void> {
  if (lingering.size === 0) return Promise.resolve();
  return new Promise((resolve) => drained.push(resolve));
}

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

/**
 * The pane's processes other than its root: its session's and the root's descendants, with the same care
 * as groupsToSignal (a stranger at the root's pid means nothing of the pane is left; the caller's own
 * group is never among them). Pure.
 */
export function othersToSignal(table: readonly ProcStat[], root: RootIdentity, selfPid: number = process.pid): number[] {
  const row = table.find((p) => p.pid === root.pid);
  if (row && !isRoot(row, root)) return [];
  const self = table.find((p) => p.pid === selfPid);
  const pids = new Set<number>();
  for (const p of table) if (p.session === root.pid && p.state !== 'zombie') pids.add(p.pid);
  if (row) for (const p of descendantsOf(table, root.pid)) if (p.state !== 'zombie') pids.add(p.pid);
  pids.delete(root.pid);
  for (const p of table) if (pids.has(p.pid) && (p.pid <= 1 || (self && p.pgrp === self.pgrp))) pids.delete(p.pid);
  return [...pids];
}

function isRoot(row: ProcStat, root: RootIdentity): boolean {
  if (root.startTicks !== undefined && row.startTicks !== undefined) return row.startTicks === root.startTicks;
  return row.pgrp === root.pid && (row.session === undefined || row.session === root.pid);
}

/**
 * A sandbox root's spine: the root (the outer bwrap), its child (bwrap's init, pid 1 of the sandbox's pid
 * namespace) and the init's first child, the agent's command (the init adopts orphans later: they started
 * after it). Each one's exit ends the rest. Pure.
 */
export function sandboxSpine(table: readonly ProcStat[], rootPid: number): number[] {
  const childrenOf = (pid: number) => table.filter((p) => p.ppid === pid && p.state !== 'zombie');
  const spine = [rootPid];
  for (const init of childrenOf(rootPid)) {
    spine.push(init.pid);
    const first = childrenOf(init.pid).sort((a, b) => (a.startTicks ?? 0) - (b.startTicks ?? 0) || a.pid - b.pid)[0];
    if (first) spine.push(first.pid);
  }
  return spine;
}

/** Sends `signal` to a process group (a negative id) or a process; false when it no longer exists. */
function signalOne(id: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(id, signal);
    return true;
  } catch {
    return false; // ESRCH: gone. EPERM cannot happen for our own children.
  }
}

const LEVELS = ['SIGHUP', 'SIGTERM', 'SIGKILL'] as const;

const HAS_PROC = fs.existsSync('/proc/self/stat');

/** Whether the kernel lists no child of `pid` (false where it cannot be read: then a scan decides). */
function childlessRoot(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim() === '';
  } catch {
    return false;
  }
}

/** Still running (a zombie has ended: it only waits for its parent to read its status). Where there is no
 *  /proc, whether the pid exists at all. */
function isLive(pid: number): boolean {
  if (!HAS_PROC) {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  const st = readProcStat(pid);
  return st !== undefined && st.state !== 'zombie';
}

export interface ProcessGroupKillerOptions {
  termAfterMs?: number;
  killAfterMs?: number;
  timers?: Timers;
  listProcesses?: ListProcesses;
  /** The root's start time; read from /proc when not given. */
  rootStartTicks?: number;
  /** Milliseconds, for the escalation's steps (tests drive it with their timers). */
  now?: () => number;
  /**
   * The root is an agent's sandbox (bwrap), whose end ends every process inside at once: the outer bwrap
   * dies of a SIGHUP or SIGTERM and its --die-with-parent SIGKILLs the pid namespace, and it exits (the same
   * way) as soon as the agent's command inside does. Hung up as an ordinary root (the command among the
   * others, the root at the TERM step), the others' clean-up was cut to nothing or to 150 ms instead of 2 s:
   * a contained shell closed during its start-up left the lock its start-up file takes and removes in an EXIT
   * trap. So the sandbox's spine (sandboxSpine) is signalled as the root is, and its command is the root's
   * stand-in: hung up only once every other process is gone (it then ends the sandbox itself), with
   * everything else at the SIGKILL step.
   */
  rootEndsAll?: boolean;
}

export class ProcessGroupKiller implements Disposable {
  private readonly timers: Timers;
  private readonly termAfterMs: number;
  private readonly killAfterMs: number;
  private readonly list: ListProcesses;
  private readonly now: () => number;
  /** The next look at the pane's processes. */
  private readonly steps: DisposableStore;
  private startedAt: number | undefined;
  private disposed = false;
  /** finish() was called: the escalation runs to its end whatever the owner does. */
  private finishing = false;
  /** The escalation is over: nothing of the pane is left, or SIGKILL went to all of it. */
  private ended = false;
  /** The strongest signal sent so far to the others and to the root's groups (-1: none). */
  private sentOthers = -1;
  private sentRoot = -1;
  /** The step of the last whole scan, and the processes other than the root it found. */
  private scannedAt = -1;
  private seen: number[] = [];
  private readonly root: RootIdentity;
  private readonly rootEndsAll: boolean;

  constructor(
    private readonly rootPid: number,
    options: ProcessGroupKillerOptions = {},
  ) {
    this.timers = options.timers ?? realTimers;
    this.steps = new DisposableStore(this.timers);
    this.termAfterMs = options.termAfterMs ?? KillConstants.termAfterMs;
    this.killAfterMs = options.killAfterMs ?? KillConstants.killAfterMs;
    this.list = options.listProcesses ?? listProcesses;
    this.now = options.now ?? monotonicNow;
    this.root = { pid: rootPid, startTicks: options.rootStartTicks ?? readStartTicks(rootPid) };
    this.rootEndsAll = options.rootEndsAll ?? false;
  }

  /** Starts the escalation. Idempotent: a second kill() does not restart the clock. */
  start(): void {
    if (this.startedAt !== undefined || this.disposed) return;
    this.startedAt = this.now();
    // A root with no child (an idle shell, an agent exec'd as the root) is hung up at once, before any scan:
    // the common case must not wait for a whole /proc scan (nor leave its exit to land in other work).
    if (!this.rootEndsAll && this.rootIsSameProcess() && childlessRoot(this.rootPid)) {
      signalOne(-this.rootPid, 'SIGHUP');
      this.sentRoot = 0;
    }
    void this.look();
  }

  /**
   * The owner is going away (its pane closed, its host stopping), but what the pane started may still be
   * running, or still cleaning up after the SIGHUP: the escalation goes on without the owner (started now
   * if it was not) and ends itself once nothing of the pane is left, or after its SIGKILL step. A process
   * is never cut off mid-clean-up by its owner's teardown. A process that is exiting waits for these with
   * lingeringKills().
   */
  finish(): void {
    if (this.disposed || this.finishing || this.ended) return;
    this.finishing = true;
    lingering.add(this);
    this.start();
  }

  /** Cancels the escalation, unless finish() handed it over to run to its end. */
  dispose(): void {
    if (this.finishing) return;
    this.disposed = true;
    this.steps.dispose();
  }

  /** One look at the pane, every pollMs: a whole scan when a signal is due (a new step, or every process
   *  seen before gone, so the root's turn may have come); else only the processes seen before are read. */
  private async look(): Promise<void> {
    if (this.disposed) return;
    const elapsed = this.now() - (this.startedAt ?? 0);
    const level = elapsed >= this.killAfterMs ? 2 : elapsed >= this.termAfterMs ? 1 : 0;
    // The last scan found only the root, and it has been signalled and is gone: done, with no more scans
    // (each blocks the event loop for a few ms, which other panes' exits and output then wait on).
    if (this.scannedAt >= 0 && this.seen.length === 0 && this.sentRoot >= 0 && this.rootGone()) return this.over();
    if (level === this.scannedAt && (this.seen.length > 0 ? this.seen.some(isLive) : !this.rootGone())) {
      this.steps.timeout(() => void this.look(), KillConstants.pollMs);
      return;
    }
    this.scannedAt = level;
    let others: number[];
    let groups: number[];
    /** What the root's turn signals before the SIGKILL step, when not its groups: a sandbox's command. */
    let standIn: number | undefined;
    try {
      const table = await this.list();
      others = othersToSignal(table, this.root);
      groups = groupsToSignal(table, this.root);
      if (this.rootEndsAll && this.rootIsSameProcess()) {
        const spine = sandboxSpine(table, this.rootPid);
        others = others.filter((pid) => !spine.includes(pid));
        standIn = spine[2];
      }
    } catch {
      // A failed scan: the root's own group, while the root is still the process spawned.
      others = [];
      groups = this.rootIsSameProcess() ? [this.rootPid] : [];
    }
    if (this.disposed) return;
    this.seen = others;
    if (others.length > 0 && this.sentOthers < level) {
      for (const pid of others) signalOne(pid, LEVELS[level]!);
      this.sentOthers = level;
    }
    // The root a step behind while others remain (HUP once their TERM is due), level with them once they
    // are gone, and KILL for all at the end: a root that keeps starting processes still hears its HUP. A
    // sandbox's command, whose exit ends them all, waits until they are gone, or the KILL step.
    const rootLevel = others.length === 0 || level === 2 ? level : this.rootEndsAll ? -1 : level - 1;
    if (rootLevel >= 0 && this.sentRoot < rootLevel) {
      // Every step it missed, in order: an interactive shell ignores SIGTERM and ends on its SIGHUP.
      if (standIn !== undefined && rootLevel < 2) for (let l = this.sentRoot + 1; l <= rootLevel; l++) signalOne(standIn, LEVELS[l]!);
      else for (const g of groups) signalOne(-g, LEVELS[rootLevel]!);
      this.sentRoot = rootLevel;
    }
    if ((others.length === 0 && this.rootGone()) || this.sentRoot === 2) return this.over();
    this.steps.timeout(() => void this.look(), KillConstants.pollMs);
  }

  private over(): void {
    this.ended = true;
    this.disposed = true;
    this.steps.dispose();
    if (lingering.delete(this) && lingering.size === 0) for (const w of drained.splice(0)) w();
  }

  /** The root has exited (or its pid is a stranger's now). */
  private rootGone(): boolean {
    return !this.rootIsSameProcess() || !isLive(this.rootPid);
  }

  /** True while the root runs and is the process spawned; where start times are unknown (no /proc), it
   *  cannot be told and is assumed. */
  private rootIsSameProcess(): boolean {
    return isSameProcess(this.rootPid, this.root.startTicks);
  }
}
