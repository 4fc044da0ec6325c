import type { BoardEvent, BoardEventBody, BudgetEventBody, CarryEventBody, DispatchEventBody, ParkedEventBody, RenewVia, UsageEventBody } from '../../../src-shared/board/events.js';
import type { Claim, ClaimEndReason, RecordHost, Task, TaskState } from '../../../src-shared/board/model.js';
import { applyEvent, copyBoard, type Board } from '../../../src-shared/board/reducer.js';
import { ok, reject, type Result } from '../../../src-shared/board/result.js';
import { leaseRuns } from '../../../src-shared/board/lease.js';
import { leaseFor } from '../../../src-shared/board/leaseEvidence.js';
import { claimView, type ClaimView } from '../../../src-shared/protocol/views.js';
import { stateAfterClaimEnd } from '../../../src-shared/board/claimEnd.js';
import { Emitter, type Disposable } from '../../../src-shared/lifecycle/emitter.js';
import type { Clock } from '../../base/clock.js';
import { ClaimIndex } from '../claimIndex.js';
import { DeadlineQueue } from '../deadlineQueue.js';
import { ReadyIndex } from '../readyIndex.js';
import { taskBudgetSpent } from '../../../src-shared/board/dispatch.js';
import { TakerIndexes } from '../takerIndexes.js';
import { boardTextChars, textDelta } from '../boardText.js';


/** What a claim with no id looks at: a task whose own budget is spent would be refused (budgetGate.ts), and
 *  as the lowest ready task it would hold back every one after it. */
const notSpent = (t: Task): boolean => !taskBudgetSpent(t);

/** Every event body the engine decides. */
export type EngineEventBody = BoardEventBody | DispatchEventBody | CarryEventBody | UsageEventBody | BudgetEventBody | ParkedEventBody;
/** The bodies about one task: a step on one of them answers with that task as the event left it. */
export type TaskEventBody = Extract<EngineEventBody, { taskId: string }>;

/** A live claim and the task it is on, read together so neither needs re-reading. */
export interface Held {
  readonly task: Task;
  readonly claim: Claim;
}

/**
 * The engine's core: the board, the clock, the indexes kept in step with it and the listeners. Every change
 * is a step: an event stamped here, applied through the shared reducer, indexed and fired. A step on a task
 * answers with the task as the reducer left it, so a feature module never re-reads the board to see what it
 * just did. The feature modules (claims, review, the merge queue, ...) decide; only the core writes.
 *
 * Safety lives on the write path, not in a timer: `sweep` lapses whatever has expired by `clock.now()` and
 * every operation calls it first, so a claim past its deadline is dead whether or not the host's sweep timer
 * has fired yet.
 */
export class EngineCore {
  readonly board: Board;
  private readonly events = new Emitter<BoardEvent>();
  /** Earliest lease deadline first: the host arms one timer on the top. */
  private deadlines = new DeadlineQueue();
  /** Where "claim the next ready task" starts looking (readyIndex.ts). */
  private ready: ReadyIndex;
  /** Where dispatch finds the next ready task an agent may take (takerIndexes.ts). */
  private takerIndex: TakerIndexes;
  private heldBy = new ClaimIndex();
  /** The board's text (boardText.ts), kept as events apply: checked against the cap before each write. */
  private text = 0;

  constructor(
    readonly clock: Clock,
    board: Board,
    /** Which agents this host runs (LeaseEngine's constructor says why). */
    readonly mine: (agentId: string) => boolean,
    /** This host on a shared board (LeaseEngine.here). */
    public here: RecordHost | null,
  ) {
    this.board = board;
    this.ready = new ReadyIndex(board.tasks, () => this.board.nextTaskNumber, notSpent);
    this.takerIndex = new TakerIndexes(board.tasks, () => this.board.nextTaskNumber);
    this.indexAll();
  }

  /** Back to `board` (LeaseEngine.rewind): the indexes are rebuilt from it, and nothing is emitted. */
  rewind(board: Readonly<Board>): void {
    Object.assign(this.board, copyBoard(board));
    this.deadlines = new DeadlineQueue();
    this.heldBy = new ClaimIndex();
    this.ready = new ReadyIndex(this.board.tasks, () => this.board.nextTaskNumber, notSpent);
    this.takerIndex = new TakerIndexes(this.board.tasks, () => this.board.nextTaskNumber);
    this.indexAll();
  }

  private indexAll(): void {
    // Claims from disk are indexed in deadline order, so they enter the deadline queue in order.
    const byDeadline = [...this.board.tasks.values()].sort((a, b) => (a.claim?.deadline ?? 0) - (b.claim?.deadline ?? 0));
    for (const t of byDeadline) this.reindex(t.id, undefined);
    this.text = boardTextChars(this.board);
  }

  // ---------------------------------------------------------------- reads

  task(taskId: string): Task | undefined {
    return this.board.tasks.get(taskId);
  }

  /** Task ids an agent holds a live claim on. */
  claimsOf(agentId: string): string[] {
    return this.heldBy.tasksOf(agentId);
  }

  /** The claims an agent holds, each with its task. */
  held(agentId: string): Held[] {
    return this.claimsOf(agentId).flatMap((id) => {
      const task = this.board.tasks.get(id);
      return task?.claim ? [{ task, claim: task.claim }] : [];
    });
  }

  /** Agents holding a claim now. */
  holders(): string[] {
    return [...this.heldBy.agents()];
  }

  /** Board time of the earliest lease deadline, or null when nothing is claimed. */
  nextDeadline(): number | null {
    return this.deadlines.peek()?.priority ?? null;
  }

  /** The ready task with the lowest number (open, and all it waits on done), if any. */
  nextReady(): string | undefined {
    return this.ready.next();
  }

  get takers(): TakerIndexes {
    return this.takerIndex;
  }

  /** The board's text in characters (BoardLimits.maxTextChars is its cap). */
  get textChars(): number {
    return this.text;
  }

  onEvent(fn: (e: BoardEvent) => void): Disposable {
    return this.events.event(fn);
  }

  view(task: Task): ClaimView | null {
    return claimView(task, this.clock.now());
  }

  /** The view of a claim a step just granted or kept: the task holds one by then, whatever the step was. */
  heldView(task: Task): ClaimView {
    const v = claimView(task, this.clock.now());
    if (!v) throw new Error(`${task.id} holds no claim after a step that grants or keeps one: the engine's steps and the reducer disagree`);
    return v;
  }

  /** The task as it is now, lapses included, or why not. */
  find(taskId: string): Result<Task> {
    this.sweep(); // callers then see the task as it is now, lapses included
    const t = this.board.tasks.get(taskId);
    return t ? ok(t) : reject('no-such-task', `no task ${taskId}`);
  }

  // ---------------------------------------------------------------- steps

  /** Decide one event. */
  emit(body: EngineEventBody): void {
    // Stamped in place: the body is built by the caller for this event alone, and a spread copy of a
    // dozen event shapes was the single largest cost of a renewal.
    const e = body as BoardEvent & { seq: number; at: number; mono: number };
    e.seq = this.board.seq + 1;
    e.at = this.clock.wall();
    e.mono = this.clock.now();
    this.take(e);
  }

  /** Decide one event about a task, and answer with the task as it left it. */
  step(body: TaskEventBody): Task {
    this.emit(body);
    return this.after(body.taskId);
  }

  /** Grant `taskId` to `agentId` under the next token, for its profile's lease (or the Thread's). */
  grant(taskId: string, agentId: string, by: string): Task {
    const token = this.board.nextToken;
    // The agent's profile's lease when the Thread sets one (a person's choice from the evidence), else the Thread's.
    return this.step({ kind: 'grant', taskId, agentId, token, deadline: this.clock.now() + leaseFor(this.board.settings, agentId), by });
  }

  /** Extend a live claim on `task` to a full lease (its profile's) from now; never shortens. Answers whether it
   *  moved and the task as it is after. `quietMs`: how long the agent had been quiet, when the liveness check
   *  renews it (leaseEvidence.ts). */
  extend(task: Task, c: Claim, via: RenewVia, quietMs?: number): { moved: boolean; task: Task } {
    const deadline = this.clock.now() + leaseFor(this.board.settings, c.agentId);
    if (deadline <= c.deadline) return { moved: false, task };
    const after = this.step({ kind: 'renew', taskId: task.id, agentId: c.agentId, token: c.token, deadline, via, ...(quietMs === undefined ? {} : { quietMs: Math.max(0, Math.round(quietMs)) }) });
    return { moved: true, task: after };
  }

  /** End claim `c` on `taskId`, the task going `to`. */
  end(taskId: string, c: Claim, reason: ClaimEndReason, to: TaskState): Task {
    return this.step({ kind: 'claim-ended', taskId, agentId: c.agentId, token: c.token, reason, to });
  }

  /** End every claim `agentId` holds, each task going where a claim ended for `reason` sends it. */
  endAllOf(agentId: string, reason: ClaimEndReason): string[] {
    const held = this.held(agentId);
    for (const { task, claim } of held) this.end(task.id, claim, reason, stateAfterClaimEnd(task, reason, this.board.settings.poisonLimit));
    return held.map((h) => h.task.id);
  }

  /** Lapse every claim whose deadline has come. Called before every operation and by the host's timer;
   *  a timer that fires late or for a claim that was since renewed finds nothing to do. */
  sweep(): string[] {
    const now = this.clock.now();
    const lapsed: string[] = [];
    for (let top = this.deadlines.peek(); top && top.priority <= now; top = this.deadlines.peek()) {
      const t = this.board.tasks.get(top.key);
      // The deadline queue holds only tasks with a running claim (reindex): anything else is a broken index.
      if (!t?.claim) throw new Error(`${top.key} is in the deadline queue without a claim: the engine's indexes are broken`);
      const to = stateAfterClaimEnd(t, 'lapsed', this.board.settings.poisonLimit);
      this.end(top.key, t.claim, 'lapsed', to);
      lapsed.push(top.key);
    }
    return lapsed;
  }

  /** Move the board past position `seq` unchanged (LeaseEngine.passOver). */
  passOver(seq: number): void {
    if (seq <= this.board.seq) throw new Error(`position ${seq} is not after the board's ${this.board.seq}`);
    this.board.seq = seq;
  }

  /** Apply an event another host decided on a shared board (LeaseEngine.follow). */
  follow(e: BoardEvent): void {
    if (e.seq !== this.board.seq + 1) throw new Error(`board event ${e.seq} follows ${this.board.seq}: the log has a gap`);
    this.take(e);
  }

  private after(taskId: string): Task {
    const t = this.board.tasks.get(taskId);
    // The reducer removes no task, so an event about one leaves it on the board.
    if (!t) throw new Error(`${taskId} is not on the board after an event about it: the engine and the reducer disagree`);
    return t;
  }

  private take(e: BoardEvent): void {
    const taskId = (e as { taskId?: string | null }).taskId;
    const before = taskId ? this.board.tasks.get(taskId) : undefined;
    this.text += textDelta(e, this.board, before);
    applyEvent(this.board, e);
    if (taskId) this.reindex(taskId, before);
    this.events.fire(e);
  }

  /**
   * Keep the indexes in step with one task's change. `before` is the task as it was, so only what changed is
   * touched: a note moves no deadline, a renewal changes no holder.
   */
  private reindex(taskId: string, before: Task | undefined): void {
    const t = this.board.tasks.get(taskId);
    if (!t) return;
    if (before === undefined || before.state !== t.state || before.after !== t.after || before.budget !== t.budget) this.ready.update(taskId, before);
    if (before === undefined || before.state !== t.state || before.after !== t.after || before.for !== t.for) this.takerIndex.update(taskId, before, before !== undefined && before.for !== t.for);
    const was = before?.claim;
    const is = t.claim;
    if (was?.agentId !== is?.agentId) this.heldBy.set(taskId, is ? is.agentId : null);
    // Only a claim that counts down is in the deadline queue: one in review is held for the person (leaseRuns).
    const ran = before !== undefined && !!was && leaseRuns(before);
    if (is && leaseRuns(t)) {
      if (!ran || is.deadline !== was?.deadline || is.token !== was?.token) this.deadlines.set(taskId, is.deadline);
    } else if (ran) {
      this.deadlines.delete(taskId);
    }
  }
}
