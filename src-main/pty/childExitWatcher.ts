/**
 * Learns that a pty's child died as soon as the kernel says so (SIGCHLD), independently of node-pty.
 *
 * Why: node-pty reports an exit only once the pty master hits EOF, and on Linux the master can return EIO
 * while the child's last output is still in flight, losing the tail (node-pty issues #72, #85, #726;
 * reproduced here: 2 of 20 runs of a 49 KB `echo` loop lost output). PtySession therefore holds the pty's
 * slave open, which keeps EIO away, and needs its own signal that the child is gone to know when to drain
 * the master and let go.
 */
import type { Disposable } from '../../src-shared/lifecycle/emitter.js';
import { readProcStat, readStartTicks } from '../base/procStat.js';

/** After a SIGCHLD, re-check pending children at these delays (ms): where no /proc exists, a dead child
 *  looks alive until node-pty's waitpid thread has reaped it, which takes a moment. */
const RECHECK_DELAYS_MS = [2, 5, 10, 25, 50, 100] as const;

const watched = new Map<number, { onDead: () => void; startTicks: number | undefined }>();
let rechecks: ReturnType<typeof setTimeout>[] = [];

/** True once `pid` is a zombie or gone. With `startTicks` (Linux), a process at that pid that started at
 *  another time is a stranger that got the pid after ours was reaped: ours is dead. */
export function isChildDead(pid: number, startTicks?: number): boolean {
  if (process.platform === 'linux') {
    const stat = readProcStat(pid);
    if (!stat) return true; // no /proc entry: reaped
    if (startTicks !== undefined && stat.startTicks !== undefined && stat.startTicks !== startTicks) return true;
    return stat.state === 'zombie' || stat.state === 'gone';
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function checkAll(): void {
  for (const [pid, { onDead, startTicks }] of [...watched]) {
    if (!isChildDead(pid, startTicks)) continue;
    watched.delete(pid);
    onDead();
  }
  if (watched.size === 0) stopListening();
}

function onSigchld(): void {
  checkAll();
  for (const t of rechecks) clearTimeout(t);
  rechecks = watched.size === 0 ? [] : RECHECK_DELAYS_MS.map((ms) => setTimeout(checkAll, ms));
}

function stopListening(): void {
  process.off('SIGCHLD', onSigchld);
  for (const t of rechecks) clearTimeout(t);
  rechecks = [];
}

/** Calls `onDead` once, when the child `pid` of this process has died. `startTicks`: its start time, when
 *  the caller has read it already. */
export function watchChildExit(pid: number, onDead: () => void, startTicks: number | undefined = readStartTicks(pid)): Disposable {
  if (watched.size === 0) process.on('SIGCHLD', onSigchld);
  const entry = { onDead, startTicks };
  watched.set(pid, entry);
  // It may already have died before we listened.
  if (isChildDead(pid, startTicks)) queueMicrotask(checkAll);
  return {
    dispose: () => {
      if (watched.get(pid) !== entry) return;
      watched.delete(pid);
      if (watched.size === 0) stopListening();
    },
  };
}
