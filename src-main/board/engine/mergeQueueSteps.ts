import type { QueueEntry, SealedApproval, Task } from '../../../src-shared/board/model.js';
import { USER } from '../../../src-shared/board/model.js';
import { ok, reject, type Result } from '../../../src-shared/board/result.js';
import { Limits } from '../../../src-shared/board/limits.js';
import { isInState } from '../../../src-shared/board/stateWords.js';
import { shortSha } from '../../../src-shared/git/taskBranch.js';
import { movedOrder, nextToLand, queuedInRank } from '../../../src-shared/board/mergeQueue.js';
import type { EngineCore } from './engineCore.js';
import { HOST_WRITERS, type Refused } from './writeLimits.js';
import { sameList } from './lists.js';

/** The token of the claim whose done froze the task's work in review: it still holds the task, or it is the
 *  last claim (ended since; in review no other claim can start). */
export function submitterToken(t: Task): number | null {
  return t.claim?.token ?? t.lastClaim?.token ?? null;
}

/**
 * What a landing's board step is for: the queue entry it checked (`entry`, the position its queueing was
 * recorded at) and the work that entry froze. The entry itself, not only its work: an entry taken back and
 * queued again for the same sha and token mid-landing (a person's second approval, or a copied row) is
 * another approval, whose seal the queue has not checked, and it lands only in a landing of its own.
 */
export interface LandingOf {
  readonly sha: string | null;
  readonly token: number | null;
  readonly entry: number | null;
}

/** Why the queue entry `q` of `t` is no longer the approval `expect` the runner merged, or null when it is. */
export function staleEntry(t: Task, q: QueueEntry, expect: LandingOf): string | null {
  if ((q.seq ?? null) !== expect.entry) return `it was queued again since (the entry recorded at #${q.seq ?? '?'}, not #${expect.entry ?? '?'})`;
  if (q.sha !== expect.sha || (q.token ?? null) !== expect.token) return `its entry is now for ${shortSha(q.sha ?? '')} under token ${q.token ?? 'none'}`;
  if (t.state !== 'review') return `it ${isInState(t.state)}`;
  const now = (t.submitted ?? t.record)?.sha ?? null;
  if (now !== q.sha) return `its work in review is ${shortSha(now ?? '')} now, not ${shortSha(q.sha ?? '')}`;
  // Entries from boards before tokens were kept are checked by their sha alone.
  if (q.token != null && submitterToken(t) !== q.token) return `the claim that said done is ${submitterToken(t) ?? 'none'} now, not ${q.token}`;
  return null;
}

/** The merge queue's board steps (issues 34 and 49): joining it, its order, a landing's compare-and-set and
 *  the take-backs that leave it. The queue's runner (host/mergeQueue.ts) does the git side. */
export class MergeQueueSteps {
  constructor(private readonly core: EngineCore) {}

  /**
   * Approval of a task with work to merge: it joins the merge queue at the end of the person's order, with the
   * sha `done` froze (the queue merges that and nothing else). Its approval is decided when it lands.
   */
  enqueue(taskId: string, by: string = USER, seal?: (a: SealedApproval) => string): Result<QueueEntry> {
    const { core } = this;
    const t = core.find(taskId);
    if (!t.ok) return t;
    const task = t.value;
    if (task.state !== 'review') return reject('bad-state', `${taskId} ${isInState(task.state)}; only a task in review can be approved`);
    const queue = queuedInRank(core.board.tasks);
    if (task.queued) return reject('bad-state', `${taskId} is already approved and in the merge queue (position ${queue.indexOf(task) + 1} of ${queue.length})`);
    if (queue.length >= Limits.maxQueued) return reject('bad-state', `the merge queue holds ${queue.length} tasks, its limit: let some land before approving more`);
    const rank = (queue.at(-1)?.queued?.rank ?? 0) + 1;
    const sha = (task.submitted ?? task.record)?.sha ?? null;
    // The claim that said done: in review it still holds the task, or it is the last one (ended since).
    const token = submitterToken(task);
    const host = core.here?.id ?? null;
    // Sealed over the position emit gives the event (the next after the board's), so the row holds only there.
    const sealed = seal?.({ threadId: core.board.threadId, taskId, seq: core.board.seq + 1, by, sha, token, host });
    const after = core.step({ kind: 'queued', taskId, by, rank, sha, token, ...(host !== null ? { host } : {}), ...(sealed ? { seal: sealed } : {}) });
    if (!after.queued) throw new Error(`${taskId} is not in the merge queue after its queued event: the engine and the reducer disagree`);
    return ok(after.queued);
  }

  /** Move a queued task to just before `before` (null: to the end) in the person's order. */
  moveQueued(taskId: string, before: string | null, by: string = USER): Result<string[]> {
    const { core } = this;
    const t = core.find(taskId);
    if (!t.ok) return t;
    const order = movedOrder(core.board.tasks, taskId, before);
    if (typeof order === 'string') return reject('bad-state', order);
    const now = queuedInRank(core.board.tasks).map((q) => q.id);
    if (!sameList(now, order)) core.emit({ kind: 'queue-moved', taskId, order, by });
    return ok(order);
  }

  /** The queue's runner merged the head entry onto `onto`: said on the board while its verify runs. */
  queueLanding(taskId: string, expect: LandingOf, onto: string, merge: string | null): Result<null> {
    const t = this.core.find(taskId);
    if (!t.ok) return t;
    const q = t.value.queued;
    if (!q) return reject('bad-state', `${taskId} is no longer in the merge queue (taken out, sent back, reassigned or released while its merge was made): the merge is discarded`);
    const stale = staleEntry(t.value, q, expect);
    if (stale) return reject('stale-token', `${taskId}'s approval no longer stands: ${stale}. The merge is discarded`);
    this.core.emit({ kind: 'queue-landing', taskId, onto, merge });
    return ok(null);
  }

  /** Take a task out of the queue without landing it: it stays in review, unapproved. */
  unqueue(taskId: string, reason: string, by: string = USER, code?: 'unsealed'): Result<null> {
    const t = this.core.find(taskId);
    if (!t.ok) return t;
    if (!t.value.queued) return reject('bad-state', `${taskId} is not in the merge queue`);
    const held = this.landingHold(t.value, 'taken out of the queue', by);
    if (held) return held;
    this.core.emit({ kind: 'unqueued', taskId, by, reason, ...(code ? { code } : {}) });
    return ok(null);
  }

  /**
   * The landing's compare-and-set (issue 49), asked by the queue's runner once the merge of `taskId` is made
   * (and its verify passed), before the base moves: yes only if the entry is still the head of its host's
   * queue, still the approval it was (the same frozen sha under the same token, the task still in review with
   * that submission) and the merge is the one the board was told of. Decided in the board's one order of
   * writes, so every take-back answered before it is seen here and wins: the merge is then discarded.
   *
   * Yes is recorded (`queue-committed`) and is the commit point: from it until the task lands (approved) or
   * the runner gives the landing up (a new `queue-landing`, `unqueued`, `returned`), take-backs are refused
   * with the reason (landingHold), so none can be answered between the board's yes and the base's move. The
   * other order (record the landing, then move the base) would leave an approval whose base move can still
   * fail; holding the entry keeps "approved" meaning "on the base". A host that stops in between finds the
   * entry committing when it starts and asks git whether the base has the merge (MergeQueue.land).
   */
  queueCommit(taskId: string, expect: LandingOf, merge: string | null): Result<null> {
    const f = this.core.find(taskId);
    if (!f.ok) return f;
    const t = f.value;
    const q = t.queued;
    if (!q) return reject('bad-state', `${taskId} is no longer in the merge queue (taken out, sent back, reassigned or released while its merge was made): the merge is discarded`);
    const stale = staleEntry(t, q, expect);
    if (stale) return reject('stale-token', `${taskId}'s approval no longer stands: ${stale}. The merge is discarded`);
    if ((q.landing?.merge ?? null) !== merge) return reject('stale-token', `${taskId}'s merge ${shortSha(merge ?? '')} is not the one the board was told of (${shortSha(q.landing?.merge ?? '')}): the merge is discarded`);
    const head = nextToLand(this.core.board.tasks, (x) => x.queued?.host === q.host);
    if (head?.id !== taskId) return reject('bad-state', `${taskId} is no longer the head of the merge queue (${head ? `${head.id} lands first now` : 'none can land'}): its merge is discarded and it lands in its turn`);
    if (!q.committing) this.core.emit({ kind: 'queue-committed', taskId, onto: q.landing?.onto ?? '', merge });
    return ok(null);
  }

  /** A take-back refused while the task's landing moves the base (queueCommit said yes): it would come too late
   *  to win, so it is not answered as if it had. The queue's own runner (the host's writers) gives it up. */
  landingHold(task: Task, what: string, by: string): Refused | null {
    if (!task.queued?.committing || HOST_WRITERS.has(by)) return null;
    const merge = task.queued.landing?.merge;
    return reject(
      'bad-state',
      `${task.id}'s approved work is landing now (the board agreed to move the base${merge ? ` to its merge ${shortSha(merge)}` : ''}), so it cannot be ${what}: it is done in a moment; then reopen it with a new task if it needs more work`,
    );
  }

  /** A take-back of a queued task (issue 49): its entry leaves the queue in the same step, saying why, so the
   *  queue never lands work after its approval was taken back. */
  leaveQueue(task: Task, what: string, by: string): void {
    const q = task.queued;
    if (!q) return;
    this.core.emit({ kind: 'unqueued', taskId: task.id, by, reason: `it was ${what}; the approval was for ${q.sha ? shortSha(q.sha) : 'its work'}${q.token ? ` under token ${q.token}` : ''}` });
  }
}
