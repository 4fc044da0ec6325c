import { HOST_ACTOR, USER, type BranchRecord, type SavedWork, type TaskWorktree } from '../../../src-shared/board/model.js';
import { ok, reject, type Result } from '../../../src-shared/board/result.js';
import type { EngineCore } from './engineCore.js';
import type { BranchRecords } from './branchRecords.js';

/** Worktree records: the folder each grant works in, parked folders' saved work, and a grant whose folder
 *  could not be made. The host's git does the work (git/); the board keeps what it did. */
export class WorktreeRecords {
  constructor(
    private readonly core: EngineCore,
    private readonly records: BranchRecords,
  ) {}

  /** The host made a grant's worktree; `start` is the record it starts at when the task had none yet. */
  recordWorktree(taskId: string, worktree: TaskWorktree, by: string, start?: BranchRecord): Result<null> {
    const t = this.core.find(taskId);
    if (!t.ok) return t;
    this.core.emit({ kind: 'worktree-set', taskId, worktree, by });
    if (start && !t.value.record) this.records.emitRecord(taskId, null, start);
    return ok(null);
  }

  /** The task's worktree is gone: merged after approval, or removed by a person. */
  forgetWorktree(taskId: string, why: 'merged' | 'removed', by: string, path?: string): Result<null> {
    const t = this.core.find(taskId);
    if (!t.ok) return t;
    if (!t.value.worktree && !t.value.parked.length) return reject('bad-state', `${taskId} has no worktree`);
    this.core.emit({ kind: 'worktree-removed', taskId, by, why, ...(path === undefined ? {} : { path }) });
    return ok(null);
  }

  /** Issue 47 item 5: a parked folder's uncommitted work was saved under `saved.ref` (ParkedWork), before the
   *  folder is removed: one the task has parked, or its latest while nobody holds it. */
  recordSaved(taskId: string, saved: SavedWork, by: string): Result<null> {
    const t = this.core.find(taskId);
    if (!t.ok) return t;
    if (!t.value.parked.some((p) => p.path === saved.path) && t.value.worktree?.path !== saved.path) return reject('bad-state', `${taskId} has no folder ${saved.path}`);
    this.core.emit({ kind: 'worktree-saved', taskId, saved, by });
    return ok(null);
  }

  /** A person deleted a saved work (its ref is removed after this is on the board). */
  deleteSaved(taskId: string, ref: string, by: string = USER): Result<null> {
    const t = this.core.find(taskId);
    if (!t.ok) return t;
    if (!t.value.saved?.some((w) => w.ref === ref)) return reject('bad-state', `${taskId} has no saved work ${ref}: nothing was deleted.`);
    this.core.emit({ kind: 'saved-work-deleted', taskId, ref, by });
    return ok(null);
  }

  /**
   * A grant whose worktree could not be made: unfenced work in the shared folder is what worktrees exist to
   * prevent, so the claim ends and the task waits, blocked with the reason, for a person to fix it. Only the
   * claim named by `token` is touched: a later claim is not this failure's business.
   */
  failWorktree(taskId: string, token: number, reason: string): Result<null> {
    const t = this.core.find(taskId);
    if (!t.ok) return t;
    const c = t.value.claim;
    if (!c || c.token !== token) return reject('stale-token', `the claim ${token} on ${taskId} is over`);
    this.core.end(taskId, c, 'no-worktree', 'open');
    // A reason is a person's to read on the card: the first 4,000 characters say what went wrong.
    this.core.emit({ kind: 'blocked', taskId, by: HOST_ACTOR, reason: reason.slice(0, 4000) });
    return ok(null);
  }
}
