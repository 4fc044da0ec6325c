import { LockConstants, type Pane } from './paneTypes.js';

export interface LockClearing {
  /** Clear the git locks a gone agent left; returns what was cleared (null: the Thread has no worktrees). */
  clearLocksOf: ((agentId: string) => string[]) | null;
  warn?: (message: string) => void;
  closing: () => boolean;
  later: (fn: () => void, ms: number) => void;
}

/**
 * Git locks an agent left behind (killed -9 inside `git commit`) are cleared once nothing of its process
 * group is left to finish them; until then they are git's own business.
 */
export function clearLocksWhenGone(pane: Pane, d: LockClearing, triesLeft: number = LockConstants.tries): void {
  const pgid = pane.record.pid;
  const clearLocksOf = d.clearLocksOf;
  if (!clearLocksOf || pgid === null || d.closing()) return;
  if (groupAlive(pgid)) {
    if (triesLeft > 0) d.later(() => clearLocksWhenGone(pane, d, triesLeft - 1), LockConstants.retryMs);
    return;
  }
  const cleared = clearLocksOf(pane.record.id);
  if (cleared.length) d.warn?.(`forkbench: cleared ${cleared.length} git lock(s) left by ${pane.record.name}: ${cleared.join(', ')}`);
}

/** Whether any process of a group is left (signal 0 asks without sending anything). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
