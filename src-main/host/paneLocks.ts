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
export function clearLocksWhenGone(pane: Pane, d: LockClearing): void {
  if (pane.record.pid === null) return;
  clearGoneAgentsLocks({ id: pane.record.id, name: pane.record.name, pgid: pane.record.pid }, d);
}

/** A gone agent, as its locks need it: its id (whose folders), its name (for the note) and its process group
 *  (which may still be finishing a git), or null when none of it can be left (its pty host swept it). */
export interface GoneAgent {
  id: string;
  name: string;
  pgid: number | null;
}

export function clearGoneAgentsLocks(gone: GoneAgent, d: LockClearing, triesLeft: number = LockConstants.tries): void {
  const clearLocksOf = d.clearLocksOf;
  if (!clearLocksOf || d.closing()) return;
  if (gone.pgid !== null && groupAlive(gone.pgid)) {
    if (triesLeft > 0) d.later(() => clearGoneAgentsLocks(gone, d, triesLeft - 1), LockConstants.retryMs);
    return;
  }
  const cleared = clearLocksOf(gone.id);
  if (cleared.length) d.warn?.(`forkbench: cleared ${cleared.length} git lock(s) left by ${gone.name}: ${cleared.join(', ')}`);
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
