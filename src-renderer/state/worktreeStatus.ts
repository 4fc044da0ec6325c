import type { BoardEvent } from '../../src-shared/board/events.js';
import type { WorktreeInfo } from '../../src-shared/protocol/windowApi.js';

export type WorktreeStatus = 'held' | 'parked' | 'missing' | 'cleaned';

/** A folder gone is said first: whether a claim holds it or not, there is nothing on disk to work in. Gone
 *  because the host's parked clean-up removed it is `cleaned` (its work saved, or none to save), never
 *  `missing`: a person is not told work is lost when none is. */
export function worktreeStatus(w: Pick<WorktreeInfo, 'held' | 'missing' | 'cleaned'>): WorktreeStatus {
  if (w.cleaned) return 'cleaned';
  if (w.missing) return 'missing';
  return w.held ? 'held' : 'parked';
}

/** What a status means, as the row's title says it. */
export function worktreeStatusTitle(w: Pick<WorktreeInfo, 'held' | 'missing' | 'cleaned'>): string {
  switch (worktreeStatus(w)) {
    case 'cleaned':
      return w.cleaned?.savedAs
        ? `Removed after its grace; what it held uncommitted is saved as ${w.cleaned.savedAs} (below). Its branch keeps every commit.`
        : 'Removed after its grace with nothing uncommitted in it: nothing was lost. Its branch keeps every commit.';
    case 'missing':
      return 'The folder was deleted outside Forkbench; its branch, with every commit, is still there.';
    case 'held':
      return 'A live claim works in it.';
    case 'parked':
      return 'No claim works in it now.';
  }
}

/** Only a worktree no live claim works in may be removed: pulling one out from under an agent loses work. */
export const canRemoveWorktree = (w: Pick<WorktreeInfo, 'held'>): boolean => !w.held;

/** Board events after which the worktree list may read differently (made, removed, held or let go). */
const WORKTREE_KINDS: ReadonlySet<BoardEvent['kind']> = new Set(['worktree-set', 'worktree-removed', 'grant', 'claim-ended', 'approved', 'worktree-saved', 'saved-work-deleted']);

export function changesWorktrees(kind: BoardEvent['kind']): boolean {
  return WORKTREE_KINDS.has(kind);
}
