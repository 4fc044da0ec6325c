import { USER, type SendBackCause } from '../../../src-shared/board/model.js';
import { ok, reject, type Result } from '../../../src-shared/board/result.js';
import { REJECT_REASON_MISSING } from '../../../src-shared/board/schemas.js';
import { isInState } from '../../../src-shared/board/stateWords.js';
import { leaseFor } from '../../../src-shared/board/leaseEvidence.js';
import type { EngineCore } from './engineCore.js';
import type { MergeQueueSteps } from './mergeQueueSteps.js';

/** Review: a person approves a task's work in review (without work to merge; with it, it joins the merge
 *  queue) or sends it back with a reason. */
export class Review {
  constructor(
    private readonly core: EngineCore,
    private readonly queue: MergeQueueSteps,
  ) {}

  approve(taskId: string, by: string = USER): Result<null> {
    const t = this.core.find(taskId);
    if (!t.ok) return t;
    const task = t.value;
    if (task.state !== 'review') return reject('bad-state', `${taskId} ${isInState(task.state)}; only a task in review can be approved`);
    if (task.claim) this.core.end(taskId, task.claim, 'completed', 'review');
    this.core.emit({ kind: 'approved', taskId, by });
    return ok(null);
  }

  /**
   * A review turned down: back to its holder, with a full lease from now (its claim was held for the person
   * while in review, so the agent gets the whole of one to act on the reason), or to the backlog when no claim
   * is left (its pane closed meanwhile). `cause`: what the merge queue found, when it sends the work back.
   */
  rejectReview(taskId: string, reason: string, by: string = USER, cause?: SendBackCause): Result<null> {
    const { core } = this;
    const t = core.find(taskId);
    if (!t.ok) return t;
    const task = t.value;
    if (task.state !== 'review') return reject('bad-state', `${taskId} ${isInState(task.state)}; only a task in review can be rejected`);
    // Checked here as well as in the window's schema: the board is where the promise lives, whoever calls it.
    if (reason.trim() === '') return reject('invalid-input', REJECT_REASON_MISSING);
    const held = this.queue.landingHold(task, 'rejected', by);
    if (held) return held;
    // The send-back (`returned`) takes it out of the queue in the same step: its reason is the reject's.
    const c = task.claim;
    core.emit({ kind: 'note', taskId, by, text: `Review: ${reason}` });
    if (c) core.emit({ kind: 'returned', taskId, by, reason, to: 'claimed', deadline: core.clock.now() + leaseFor(core.board.settings, c.agentId), ...(cause ? { cause } : {}) });
    else core.emit({ kind: 'returned', taskId, by, reason, to: 'open', ...(cause ? { cause } : {}) });
    return ok(null);
  }
}
