import { USER, type Task } from '../../../src-shared/board/model.js';
import { ok, reject, type Result } from '../../../src-shared/board/result.js';
import { isInState } from '../../../src-shared/board/stateWords.js';
import { leaseFor } from '../../../src-shared/board/leaseEvidence.js';
import { dependenciesDone, waitingOn } from '../../../src-shared/board/dependencies.js';
import type { ClaimView } from '../../../src-shared/protocol/views.js';
import type { EngineCore } from './engineCore.js';
import type { WriteLimits } from './writeLimits.js';
import type { Fence } from './fence.js';
import type { Dependencies } from './dependencies.js';
import type { MergeQueueSteps } from './mergeQueueSteps.js';
import { changes, editGrowth, type TaskSteps } from './taskSteps.js';
import { byTaskNumber } from './lists.js';
import type { BranchRecords } from './branchRecords.js';
import { budgetStop } from '../../../src-shared/board/budgetGate.js';

/**
 * Claims and fencing: an agent's claim and its fenced writes (renew, note, edit, done, fence, release), and a
 * person's assignment and release. Every agent write goes through the fence and, when it lands, renews the
 * lease: a write is work.
 */
export class Claims {
  constructor(
    private readonly core: EngineCore,
    private readonly limits: WriteLimits,
    private readonly fenced: Fence,
    private readonly deps: Dependencies,
    private readonly queue: MergeQueueSteps,
    private readonly tasks: TaskSteps,
    private readonly records: BranchRecords,
  ) {}

  /**
   * An agent claims a task (or, with no id, the ready task with the lowest number: open, and every task it
   * waits on done). A task that waits on others is claimed by id only with `force`, and the board notes that
   * it was.
   */
  claim(agentId: string, taskId?: string, force = false): Result<ClaimView> {
    const { core, limits } = this;
    core.sweep();
    let id = taskId;
    if (id === undefined) {
      id = core.nextReady();
      if (id === undefined) return limits.refuse(agentId, null, null, 'claim', 'no-such-task', this.deps.nothingReady());
    }
    const t = core.task(id);
    if (!t) return limits.refuse(agentId, id, null, 'claim', 'no-such-task', `no task ${id}`);
    if (t.state !== 'open') {
      const who = t.claim ? (t.claim.agentId === agentId ? 'you' : t.claim.agentId) : '';
      // "T-2 is claimed by you", but "T-2 is in review (held by you)": a review is not held "by" anyone.
      const holder = who ? (t.state === 'claimed' ? ` by ${who}` : ` (held by ${who})`) : '';
      return limits.refuse(agentId, id, null, 'claim', 'bad-state', `${id} ${isInState(t.state)}${holder}; only open tasks can be claimed`);
    }
    const spent = budgetStop(t, { settings: core.board.settings, thread: core.board.costs.thread });
    if (spent) return limits.refuse(agentId, id, null, 'claim', 'over-budget', spent);
    const full = this.atClaimLimit(agentId);
    if (full) return limits.refuse(agentId, id, null, 'claim', 'claim-limit', full);
    const waits = dependenciesDone(core.board.tasks, t) ? null : this.deps.notReady(t, force);
    if (waits && !waits.ok) return limits.refuse(agentId, id, null, 'claim', waits.error.code, waits.error.message);
    const granted = core.grant(id, agentId, agentId);
    return ok(core.heldView(waits ? this.deps.noteForced(id, agentId, waits.value) : granted));
  }

  /**
   * Why `agentId` may claim no more (the tasks it holds claimed and the Thread's limit), or null. Only tasks
   * in `claimed` count: one in review is finished work waiting on the person, and holds nothing others could
   * take. Only an agent's own `claim` is held to it: a person's assignment is the person's call and may go
   * past it, and dispatch grants only to an agent that holds nothing, so it never reaches a limit of 1 or more.
   */
  private atClaimLimit(agentId: string): string | null {
    const limit = this.core.board.settings.claimLimit;
    const held = this.core.held(agentId).flatMap((h) => (h.task.state === 'claimed' ? [h.task.id] : []));
    if (held.length < limit) return null;
    return (
      `${agentId} holds ${held.length} claimed task${held.length === 1 ? '' : 's'} (${held.sort(byTaskNumber).join(', ')}), and the Thread lets one agent claim at most ${limit}: ` +
      `finish one (done) or release one before claiming another. Only the person can give you more (by assigning a task, or raising the claim limit in Thread settings)`
    );
  }

  renew(agentId: string, taskId: string, token?: number): Result<ClaimView> {
    const c = this.fenced.check(agentId, taskId, token, 'renew');
    if (!c.ok) return c;
    return ok(this.core.heldView(this.core.extend(c.value.task, c.value.claim, 'write').task));
  }

  note(agentId: string, taskId: string, text: string, token?: number): Result<ClaimView> {
    const limited = this.limits.admit(agentId, taskId, 'note', text.length, text.length, token);
    if (limited) return limited;
    const c = this.fenced.check(agentId, taskId, token, 'note');
    if (!c.ok) return c;
    const noted = this.core.step({ kind: 'note', taskId, by: agentId, text });
    return ok(this.core.heldView(this.core.extend(noted, c.value.claim, 'write').task));
  }

  /** The holder edits its task: title, body, and (`after`) the tasks it waits on, which leaves its claim as is. */
  edit(agentId: string, taskId: string, patch: { title?: string; body?: string; after?: readonly string[] }, token?: number): Result<ClaimView> {
    const { core, limits } = this;
    const before = core.task(taskId);
    const written = (patch.title?.length ?? 0) + (patch.body?.length ?? 0);
    // Before the input is looked at: a refused edit is a journal line too, and a loop of empty edits is a loop.
    const limited = limits.admit(agentId, taskId, 'edit', written, before ? editGrowth(before, patch) : 0, token);
    if (limited) return limited;
    const e = changes({ title: patch.title, body: patch.body }, patch.after);
    if (!e.ok) return limits.refuse(agentId, taskId, token ?? null, 'edit', 'invalid-input', e.error.message);
    const c = this.fenced.check(agentId, taskId, token, 'edit');
    if (!c.ok) return c;
    const deps = patch.after === undefined ? null : this.deps.checkAfter(taskId, patch.after);
    if (deps && !deps.ok) return limits.refuse(agentId, taskId, token ?? null, 'edit', deps.error.code, deps.error.message);
    const edited = this.tasks.applyEdit(c.value.task, e.value, deps?.value, agentId);
    return ok(core.heldView(core.extend(edited, c.value.claim, 'write').task));
  }

  /** The holder says the task is done. That is a claim, not a fact: the task waits in review. */
  done(agentId: string, taskId: string, token?: number, note?: string): Result<ClaimView> {
    const { core, limits } = this;
    const text = note ? note : null;
    // Saying done is never rate-limited (an agent must be able to finish); the note that comes with it is text.
    if (text !== null) {
      const limited = limits.admit(agentId, taskId, 'done', text.length, text.length, token);
      if (limited) return limited;
    }
    const c = this.fenced.check(agentId, taskId, token, 'done');
    if (!c.ok) return c;
    const t = c.value.task;
    if (t.state !== 'claimed') return limits.refuse(agentId, taskId, token ?? null, 'done', 'bad-state', `${taskId} ${isInState(t.state, { already: true })}`);
    // A new done is new work: no approval of an earlier one stands (none can be queued while claimed, but a
    // board damaged by an older host may hold one).
    this.queue.leaveQueue(t, 'said done again', agentId);
    if (text !== null) core.emit({ kind: 'note', taskId, by: agentId, text });
    // The work under review is what the board recorded at this moment, never a branch head that moves later.
    const submitted = core.step({ kind: 'submitted', taskId, agentId, token: c.value.claim.token, record: t.worktree ? t.record : null });
    return ok(core.heldView(core.extend(submitted, c.value.claim, 'write').task));
  }

  /**
   * A git hook in the task's worktree asks, before a commit, ref move or push lands, whether this agent still
   * holds the task (under `token`, when the worktree was issued to it). The same fence as every write, and
   * like every write it renews: committing is work. With `from` (a move of the branch from that sha), the
   * branch must also be where the board recorded it, and the task not frozen in review.
   */
  fence(agentId: string, taskId: string, token?: number, update?: { ref: string; from: string }): Result<ClaimView> {
    const c = this.fenced.check(agentId, taskId, token, 'fence');
    if (!c.ok) return c;
    const t = c.value.task;
    if (update) {
      const why = this.records.offRecord(t, update.ref, update.from);
      if (why) return this.limits.refuse(agentId, taskId, token ?? null, 'fence', why.code, why.message);
    }
    return ok(this.core.heldView(this.core.extend(t, c.value.claim, 'write').task));
  }

  /** The holder lets go. Only the holder, with the current token, can: anything else changes nothing. */
  release(agentId: string, taskId: string, token?: number): Result<{ taskId: string }> {
    const c = this.fenced.check(agentId, taskId, token, 'release');
    if (!c.ok) return c;
    this.core.end(taskId, c.value.claim, 'released', c.value.task.state === 'review' ? 'review' : 'open');
    return ok({ taskId });
  }

  /** A person gives a task to an agent: a grant if it is free, a reassign (revoke + new token) if held. A free
   *  task that waits on others is given only with `force`, and the board notes it. Not held to the Thread's
   *  claim limit: the limit keeps an agent from taking work for itself, and this is the person giving it. */
  assign(taskId: string, agentId: string, by: string = USER, force = false): Result<ClaimView> {
    const { core } = this;
    const t = core.find(taskId);
    if (!t.ok) return t;
    const task = t.value;
    // A new holder is a new grant, held to what the task waits on whether it was free or held by another.
    const movable = task.claim ? task.claim.agentId !== agentId : task.state === 'open' || task.state === 'needs-attention';
    const waits = movable && waitingOn(core.board.tasks, task).length ? this.deps.notReady(task, force) : null;
    if (waits && !waits.ok) return waits;
    let given: Task;
    if (task.claim) {
      if (task.claim.agentId === agentId) return reject('bad-state', `${taskId} is already held by ${agentId}`);
      const held = this.queue.landingHold(task, `reassigned to ${agentId}`, by);
      if (held) return held;
      this.queue.leaveQueue(task, `reassigned to ${agentId}`, by);
      const token = core.board.nextToken;
      const deadline = core.clock.now() + leaseFor(core.board.settings, agentId);
      given = core.step({
        kind: 'reassign',
        taskId,
        from: { agentId: task.claim.agentId, token: task.claim.token },
        to: { agentId, token, deadline },
        by,
      });
    } else if (task.state === 'open' || task.state === 'needs-attention') {
      if (task.state === 'needs-attention') core.emit({ kind: 'reset', taskId, by });
      given = core.grant(taskId, agentId, by);
    } else {
      return reject('bad-state', `${taskId} ${isInState(task.state)}; only open or claimed tasks can be assigned`);
    }
    if (waits) given = this.deps.noteForced(taskId, agentId, waits.value);
    return ok(core.heldView(given));
  }

  /** A person returns a task to the backlog, ending whatever claim it has. */
  userRelease(taskId: string, by: string = USER): Result<null> {
    const t = this.core.find(taskId);
    if (!t.ok) return t;
    const task = t.value;
    const held = this.queue.landingHold(task, 'released', by);
    if (held) return held;
    if (task.claim || task.state === 'review') this.queue.leaveQueue(task, 'released', by);
    if (task.claim) this.core.end(taskId, task.claim, 'user-released', 'open');
    else if (task.state === 'review') this.core.emit({ kind: 'returned', taskId, by, reason: 'released by a person', to: 'open' });
    else return reject('bad-state', `${taskId} ${isInState(task.state)}, not held by anyone`);
    return ok(null);
  }
}

