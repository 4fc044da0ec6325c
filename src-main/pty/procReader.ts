/**
 * Reads what the kernel says about processes, and decides nothing: a process's state (running, stopped by
 * SIGSTOP, a zombie, gone), its start time and CPU, and its process tree. Its readers decide: the liveness
 * verdict (agents/liveness.ts), the process-group killer and the child-exit watcher here, and the agents'
 * peer credentials. Every export is a read (read*, list*), a parse of one reading (parse*, stateFrom*) or
 * arithmetic over one (descendantsOf, sumTreeCpu).
 *
 * Linux reads /proc directly (no fork per check). Other platforms run `ps`. Parsing is kept in pure
 * functions so both formats are unit-tested on any machine: the macOS path does not run in CI.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { readProcStat, stateFromCode, type ProcState, type ProcStat } from '../base/procStat.js';

// liveness.ts reads the state word from here, as it reads the tree's CPU.
export type { ProcState };


export interface ProcFacts {
  pid: number;
  state: ProcState;
  /** CPU time the process itself has used, in ms (0 when gone). */
  cpuMs: number;
}

export interface TreeCpu {
  /** State of the root process. */
  state: ProcState;
  /** CPU of the root, its live descendants and the children they have reaped, in ms. Normally only grows;
   *  it can drop when a descendant dies and is reaped outside the tree (reparented to init), so compare
   *  with `>` for "made progress", never for equality. */
  cpuMs: number;
  /** Processes counted, root included. */
  processes: number;
}


/** Stat files read per event-loop turn during a scan. Synchronous reads of /proc cost ~20 us each, about
 *  ten times less than async reads through libuv's thread pool (measured: 71 processes in ~1.5 ms sync vs
 *  11-40 ms async); slicing keeps any single block of the event loop near 1 ms. */
export const PROC_READS_PER_SLICE = 64;

/** Upper bound on processes scanned or walked per call. A desktop has a few hundred; the cap only keeps a
 *  pathological host (fork bomb, huge build farm) from turning one liveness check into seconds of I/O. */
export const MAX_PROCESSES_SCANNED = 10_000;



/**
 * Parses a ps CPU time: `[dd-][hh:]mm:ss[.cc]`. macOS prints `0:00.03` or `12:34.56` (minutes may exceed
 * 59), procps prints `00:00:00` or `1-02:03:04`.
 */
export function parseCpuTime(text: string): number | undefined {
  const m = /^(?:(\d+)-)?((?:\d+:)*\d+(?:\.\d+)?)$/.exec(text.trim());
  if (!m) return undefined;
  const days = m[1] ? Number(m[1]) : 0;
  const parts = m[2]!.split(':').map(Number);
  let seconds = 0;
  for (const p of parts) seconds = seconds * 60 + p;
  return Math.round((days * 86_400 + seconds) * 1000);
}

/** ps's STAT column: the first letter is the state, the rest are flags (`s` leader, `+` foreground, ...). */
export function stateFromPsStat(stat: string): ProcState {
  return stateFromCode(stat.trim().charAt(0));
}

/** Parses `ps -o stat=,time= -p PID`. Empty output means the process is gone. */
export function parsePsStatTime(output: string): { state: ProcState; cpuMs: number } | undefined {
  const line = output.split('\n').find((l) => l.trim().length > 0);
  if (line === undefined) return { state: 'gone', cpuMs: 0 };
  const [stat, time] = line.trim().split(/\s+/);
  const cpuMs = time === undefined ? undefined : parseCpuTime(time);
  if (stat === undefined || cpuMs === undefined) return undefined;
  return { state: stateFromPsStat(stat), cpuMs };
}

/** Parses `ps -A -o pid=,ppid=,pgid=,stat=,time=` (works with both BSD and procps ps). */
export function parsePsTable(output: string): ProcStat[] {
  const table: ProcStat[] = [];
  for (const line of output.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 5) continue;
    const [pid, ppid, pgrp] = cols.slice(0, 3).map(Number);
    const cpuMs = parseCpuTime(cols[4]!);
    if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isInteger(pgrp) || cpuMs === undefined) continue;
    table.push({
      pid: pid!,
      comm: '',
      code: cols[3]!.charAt(0),
      state: stateFromPsStat(cols[3]!),
      ppid: ppid!,
      pgrp: pgrp!,
      session: undefined,
      cpuMs,
      reapedChildCpuMs: undefined,
    });
  }
  return table;
}

/** The root and everything below it, found by following ppid links (breadth first, bounded). */
export function descendantsOf(table: readonly ProcStat[], rootPid: number, limit = MAX_PROCESSES_SCANNED): ProcStat[] {
  const children = new Map<number, ProcStat[]>();
  let root: ProcStat | undefined;
  for (const p of table) {
    if (p.pid === rootPid) root = p;
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  if (!root) return [];
  const out: ProcStat[] = [root];
  const seen = new Set([rootPid]);
  for (let i = 0; i < out.length && out.length < limit; i++) {
    for (const child of children.get(out[i]!.pid) ?? []) {
      // pid 0/1 loops and a ppid pointing back up cannot happen in a consistent snapshot, but a scan is
      // not atomic: guard anyway.
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      out.push(child);
      if (out.length >= limit) break;
    }
  }
  return out;
}

/** Sums CPU over a tree: each member's own CPU plus what it has reaped. */
export function sumTreeCpu(tree: readonly ProcStat[]): number {
  let total = 0;
  for (const p of tree) total += p.cpuMs + (p.reapedChildCpuMs ?? 0);
  return total;
}

function runPs(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('ps', args, { encoding: 'utf8', timeout: 5_000 }, (err, stdout) => {
      // ps exits 1 when -p names no live process; that is an answer ("gone"), not a failure.
      if (err && (err as { code?: unknown }).code !== 1) reject(err);
      else resolve(stdout);
    });
  });
}

const isLinux = process.platform === 'linux';



const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** State and own CPU of one process. */
export async function readProcFacts(pid: number): Promise<ProcFacts> {
  if (isLinux) {
    const stat = readProcStat(pid);
    return stat ? { pid, state: stat.state, cpuMs: stat.cpuMs } : { pid, state: 'gone', cpuMs: 0 };
  }
  const parsed = parsePsStatTime(await runPs(['-o', 'stat=,time=', '-p', String(pid)]));
  return parsed ? { pid, ...parsed } : { pid, state: 'gone', cpuMs: 0 };
}

/** A snapshot of every process (bounded): /proc on Linux, one `ps -A` elsewhere. */
export async function listProcesses(): Promise<ProcStat[]> {
  if (!isLinux) return parsePsTable(await runPs(['-A', '-o', 'pid=,ppid=,pgid=,stat=,time=']));
  const pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).slice(0, MAX_PROCESSES_SCANNED);
  const stats: ProcStat[] = [];
  for (let i = 0; i < pids.length; i++) {
    if (i > 0 && i % PROC_READS_PER_SLICE === 0) await nextTurn();
    const stat = readProcStat(Number(pids[i]));
    if (stat) stats.push(stat);
  }
  return stats;
}

/**
 * CPU used by a pane's process tree: the root (the agent or its shell), every live descendant and the
 * children they have reaped. A shell whose `sleep` is the only child shows almost no growth; a build or
 * an agent thinking through tool calls shows steady growth. One /proc scan per call (~20 us per process:
 * a few ms for a desktop's few hundred processes, in ~1 ms slices).
 */
export async function readTreeCpu(rootPid: number): Promise<TreeCpu> {
  const tree = descendantsOf(await listProcesses(), rootPid);
  const root = tree[0];
  if (!root) return { state: 'gone', cpuMs: 0, processes: 0 };
  return { state: root.state, cpuMs: sumTreeCpu(tree), processes: tree.length };
}

/**
 * The current folder of every process of each root's pane: the root, its descendants, and whatever else sits
 * in its session (node-pty starts each pane's root with setsid, so a job the shell moved to a group of its
 * own is still found). Linux only (readlink /proc/PID/cwd, ~10 us each): elsewhere nothing is found. A
 * process gone between the listing and the read is passed over.
 */
export async function listPaneCwds<T>(roots: ReadonlyMap<number, T>): Promise<Array<{ owner: T; pid: number; cwd: string }>> {
  if (!isLinux || roots.size === 0) return [];
  const table = await listProcesses();
  const owners = new Map<number, T>();
  for (const [root, owner] of roots) for (const p of descendantsOf(table, root)) owners.set(p.pid, owner);
  for (const p of table) {
    const owner = p.session !== undefined ? roots.get(p.session) : undefined;
    if (owner !== undefined && !owners.has(p.pid)) owners.set(p.pid, owner);
  }
  const out: Array<{ owner: T; pid: number; cwd: string }> = [];
  for (const [pid, owner] of owners) {
    try {
      out.push({ owner, pid, cwd: readlinkSync(`/proc/${pid}/cwd`) });
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}
