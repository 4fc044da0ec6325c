import type { BoardEvent } from '../../src-shared/board/events.js';
import type { WorktreeInfo } from '../../src-shared/protocol/windowApi.js';

export type WorktreeStatus = 'held' | 'parked' | 'missing';

/** A missing folder is said first: whether a claim holds it or not, there is nothing on disk to work in. */
export function worktreeStatus(w: Pick<WorktreeInfo, 'held' | 'missing'>): WorktreeStatus {
  if (w.missing) return 'missing';
  return w.held ? 'held' : 'parked';
}

/** Only a worktree no live claim works in may be removed: pulling one out from under an agent loses work. */
export const canRemoveWorktree = (w: Pick<WorktreeInfo, 'held'>): boolean => !w.held;

/** Board events after which the worktree list may read differently (made, removed, held or let go). */
const WORKTREE_KINDS: ReadonlySet<BoardEvent['kind']> = new Set(['worktree-set', 'worktree-removed', 'grant', 'claim-ended', 'approved', 'worktree-saved', 'saved-work-deleted']);

export function changesWorktrees(kind: BoardEvent['kind']): boolean {
  return WORKTREE_KINDS.has(kind);
}
