/**
 * Who a pid is, as the kernel says in /proc/<pid>/stat: its state, parent, group, session, CPU and start time.
 * A pid alone names a process only while it lives (pids are reused, and a busy machine wraps pid_max in
 * minutes); the pid with its start time names it for good, which is how every owner of a recorded pid (a
 * host lock, a pane kept in the pty host, a process group to finish) asks "is this still that process".
 * Parsing is a pure function so it is tested on any machine; the reads are Linux only.
 */
import { readFileSync } from 'node:fs';

export type ProcState = 'running' | 'sleeping' | 'stopped' | 'zombie' | 'gone';


/** One line of /proc/<pid>/stat, reduced to what liveness and process-group kills need. */
export interface ProcStat {
  pid: number;
  comm: string;
  /** The raw state letter (R, S, D, T, t, Z, X, I, ...). */
  code: string;
  state: ProcState;
  ppid: number;
  pgrp: number;
  /** Session id; undefined where the platform does not report it (ps on macOS). */
  session: number | undefined;
  /** The foreground process group of the process's controlling terminal (field 8; -1 without one): the
   *  same for every process on that terminal. Undefined from ps. */
  tpgid?: number;
  /** utime + stime of the process itself, in ms. */
  cpuMs: number;
  /** cutime + cstime: CPU of children this process has already reaped, in ms. Undefined from ps. */
  reapedChildCpuMs: number | undefined;
  /** When the process started, in clock ticks since boot (field 22). With the pid it names one process for
   *  good: pids are reused (pid_max is 32768 on many machines, and a busy test run wraps it in minutes),
   *  start times are not. Undefined from ps. */
  startTicks?: number;
}

/** Linux reports CPU in USER_HZ ticks, which the kernel ABI fixes at 100 per second on every mainstream
 *  architecture (CLK_TCK); asking `getconf` would cost a fork per check for a constant. */
export const LINUX_CLOCK_TICKS_PER_SECOND = 100;

export function stateFromCode(code: string): ProcState {
  switch (code) {
    case 'R':
      return 'running';
    case 'T': // stopped by a signal (SIGSTOP, SIGTSTP)
    case 't': // tracing stop (a debugger holds it): just as unable to make progress
      return 'stopped';
    case 'Z':
      return 'zombie';
    case 'X': // dead, being reaped
    case 'x':
      return 'gone';
    default:
      // S (sleeping), D (disk sleep), I (idle kernel thread), W, P, K, U (macOS uninterruptible): alive,
      // waiting for something. Whether it makes progress is for the CPU delta to say.
      return 'sleeping';
  }
}

/**
 * Parses /proc/<pid>/stat. The command name sits in parentheses and may itself contain spaces and
 * parentheses (any process can set its comm with prctl), so the fields after it are found from the LAST
 * ')' in the line, never by splitting on spaces from the start.
 */
export function parseProcStat(text: string): ProcStat | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open).trim());
  const rest = text.slice(close + 1).trim().split(/\s+/);
  // rest[0] is field 3 (state); tpgid is field 8, utime/stime 14/15, cutime/cstime 16/17, starttime 22 (proc(5)).
  if (!Number.isInteger(pid) || rest.length < 15) return undefined;
  const field = (n: number): number => Number(rest[n - 3]);
  const ticksToMs = (ticks: number): number => (ticks * 1000) / LINUX_CLOCK_TICKS_PER_SECOND;
  const code = rest[0]!;
  const numbers = [field(4), field(5), field(6), field(14), field(15), field(16), field(17)];
  if (numbers.some((n) => !Number.isFinite(n))) return undefined;
  return {
    pid,
    comm: text.slice(open + 1, close),
    code,
    state: stateFromCode(code),
    ppid: field(4),
    pgrp: field(5),
    session: field(6),
    ...(Number.isFinite(field(8)) ? { tpgid: field(8) } : {}),
    cpuMs: ticksToMs(field(14) + field(15)),
    reapedChildCpuMs: ticksToMs(field(16) + field(17)),
    ...(rest.length >= 20 && Number.isFinite(field(22)) ? { startTicks: field(22) } : {}),
  };
}

const isLinux = process.platform === 'linux';

/** /proc/<pid>/stat parsed; undefined once the process is reaped (Linux only). */
export function readProcStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined; // ENOENT/ESRCH: exited between listing and reading
  }
}

/** The start time of a live process (Linux), read synchronously: one small file, ~20 us. Undefined where
 *  there is no /proc or the process is gone. */
export function readStartTicks(pid: number): number | undefined {
  return isLinux ? readProcStat(pid)?.startTicks : undefined;
}

/** Whether `pid` is still the process that started at `startTicks` (Linux): false once it is gone or the pid
 *  was reused. Where /proc says nothing (no start time recorded, not Linux) a live pid counts as that process. */
export function isSameProcess(pid: number, startTicks: number | undefined): boolean {
  const now = readProcStat(pid);
  if (isLinux && !now) return false;
  return startTicks === undefined || now?.startTicks === undefined || now.startTicks === startTicks;
}

/** Whether any process of a group is left (signal 0 asks without sending anything; EPERM: one is, another
 *  user's). */
export function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
