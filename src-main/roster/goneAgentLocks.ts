import { processGroupAlive } from '../base/procStat.js';
import type { HeldLock } from '../git/claimFolders.js';

export const LockConstants = {
  /** A group killed -9 is gone within milliseconds; its children may take a moment to be reaped. */
  retryMs: 250,
  /** 40 × 250 ms: a background job of the agent that outlives it by ten seconds keeps its locks. */
  tries: 40,
} as const;

/** What clearing a gone agent's git locks needs of the Thread's folders (null: the Thread has no worktrees). */
export interface AgentLockFolders {
  /** The locks in the agent's folders now, each with its file's identity (ClaimFolders.locksOf). */
  locksOf(agentId: string): HeldLock[];
  /** Removes those still the same files; returns what was removed. */
  clearLocks(locks: readonly HeldLock[]): string[];
  /** The agents that worked in any task's folder (the fence's record names each folder's last claimant). */
  agentsWithFolders(): Iterable<string>;
}

/** A gone agent, as its locks need it: its name (for the note), its process group (which may still be
 *  finishing a git), or null when none of it can be left (its pty host swept it), and the locks found in its
 *  folders when its death was learned. */
export interface GoneAgentLocks {
  name: string;
  pgid: number | null;
  locks: readonly HeldLock[];
}

export interface LockClearing {
  folders: AgentLockFolders | null;
  warn?: (message: string) => void;
  closing: () => boolean;
  later: (fn: () => void, ms: number) => void;
}

/**
 * Git locks an agent left behind (killed -9 inside `git commit`) are cleared once nothing of its process
 * group is left to finish them; until then they are git's own business. Only the lock files found at its
 * death go: a lock the next holder's git made meanwhile at the same path is that git's.
 */
export function clearOnceGone(gone: GoneAgentLocks, d: LockClearing, triesLeft: number = LockConstants.tries): void {
  const folders = d.folders;
  if (!folders || gone.locks.length === 0 || d.closing()) return;
  if (gone.pgid !== null && processGroupAlive(gone.pgid)) {
    if (triesLeft > 0) d.later(() => clearOnceGone(gone, d, triesLeft - 1), LockConstants.retryMs);
    return;
  }
  const cleared = folders.clearLocks(gone.locks);
  if (cleared.length) d.warn?.(`forkbench: cleared ${cleared.length} git lock(s) left by ${gone.name}: ${cleared.join(', ')}`);
}
