import { Trailers } from './taskBranch.js';

/** What approval looks at in a task's branch; the same facts reach the host's merge and the page's diff. */
export interface MergeFacts {
  taskId: string;
  /** Commits the reviewed head has that the base lacks. */
  commits: number;
  /** The head commit's fencing token and task (its trailers, or the board's record), null where it has none. */
  headToken: number | null;
  headTask: string | null;
  /** The token of the claim whose work is in review: the one that said done. */
  finalToken: number | null;
}

export type MergeVerdict =
  /** Approve: merging the head (`merges`), or nothing to merge (the base has it all already). */
  | { ok: true; merges: boolean }
  | { ok: false; why: 'no-claim' | 'no-token' | 'other-token' | 'other-task' };

/**
 * The merge rule, once, for the host that merges and the page that shows the diff before Approve: a head
 * with nothing the base lacks approves without a merge; otherwise it merges only if it was written under the
 * claim under review, for this task. (The host also checks the content is the recorded tree: the page cannot.)
 */
export function mergeVerdict(f: MergeFacts): MergeVerdict {
  if (f.commits === 0) return { ok: true, merges: false };
  if (f.finalToken === null) return { ok: false, why: 'no-claim' };
  if (f.headToken === null) return { ok: false, why: 'no-token' };
  // A head naming no task is not this task's work either: only a head that says it is this task's merges.
  if (f.headTask !== f.taskId) return { ok: false, why: 'other-task' };
  if (f.headToken !== f.finalToken) return { ok: false, why: 'other-token' };
  return { ok: true, merges: true };
}

/** How the head was written, in a person's words: "written under token 5", "… of T-2", "… for no task", or under none. */
export function headWritten(f: Pick<MergeFacts, 'taskId' | 'headToken' | 'headTask'>): string {
  if (f.headToken === null) return `not written under any claim (no ${Trailers.token} trailer)`;
  if (f.headTask === null) return `written under token ${f.headToken} for no task (no ${Trailers.task} trailer)`;
  return `written under token ${f.headToken}${f.headTask !== f.taskId ? ` of ${f.headTask}` : ''}`;
}
