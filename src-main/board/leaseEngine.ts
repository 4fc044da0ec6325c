import type { BoardEvent } from '../../src-shared/board/events.js';
import type { CarryOutcome, CarrySource } from '../../src-shared/board/boardCarry.js';
import type { AgentState, StateSource } from '../../src-shared/agents/agentLife.js';
import type { BranchRecord, QueueEntry, SealedApproval, SendBackCause, HardReleaseReason, HostGoneHow, LostRecord, RecordHost, Task, TaskWorktree, SavedWork } from '../../src-shared/board/model.js';
import { USER } from '../../src-shared/board/model.js';
import { emptyBoard, type Board } from '../../src-shared/board/reducer.js';
import type { Result } from '../../src-shared/board/result.js';
import type { SettingsPatch } from '../../src-shared/board/schemas.js';
import type { ClaimView } from '../../src-shared/protocol/views.js';
import type { Disposable } from '../../src-shared/lifecycle/emitter.js';
import type { DispatchMode } from '../../src-shared/board/dispatch.js';
import type { Budget } from '../../src-shared/usage/budgets.js';
import type { RateLimitReading, UsageSource, UsageTurn } from '../../src-shared/usage/usage.js';
import type { Clock } from '../base/clock.js';
import type { DispatchPick } from './takerIndexes.js';
import type { UsageReadWindow, UsageRecorded } from './usageRecorder.js';
import { EngineCore } from './engine/engineCore.js';
import { WriteLimits } from './engine/writeLimits.js';
import { Fence } from './engine/fence.js';
import { Dependencies } from './engine/dependencies.js';
import { MergeQueueSteps, type LandingOf } from './engine/mergeQueueSteps.js';
import { TaskSteps, type TaskText } from './engine/taskSteps.js';
import { BranchRecords } from './engine/branchRecords.js';
import { Claims } from './engine/claims.js';
import { Review } from './engine/review.js';
import { WorktreeRecords } from './engine/worktreeRecords.js';
import { DispatchSteps } from './engine/dispatchSteps.js';
import { HostSignals } from './engine/hostSignals.js';
import { UsageSteps } from './engine/usageSteps.js';

export type { TaskText } from './engine/taskSteps.js';
export { staleEntry, submitterToken, type LandingOf } from './engine/mergeQueueSteps.js';

/**
 * The lease engine: the one authority on who holds which task until when. Pure apart from the injected
 * clock: it owns no timer, file or socket. Each decision becomes an event that goes through the shared
 * reducer, so what the engine decided, what the journal replays and what a window draws are one function.
 *
 * This class is the front the stores and the host call: the decisions live in feature modules over one core
 * (engine/): the core (engineCore.ts) holds the board, the clock, the indexes and the listeners, and is the
 * only writer; claims and fencing (claims.ts, fence.ts), branch records, review, worktree records, the merge
 * queue, dispatch and budgets, dependencies, the host's lease evidence (hostSignals.ts) and usage each decide
 * their own steps. Each method here says which module decides it.
 *
 * Safety lives on the write path, not in a timer: every operation first lapses whatever has expired by
 * `clock.now()`, so a claim past its deadline is dead whether or not the host's sweep timer has fired yet,
 * and every agent write is a compare on (holder, token, deadline).
 */
export class LeaseEngine {
  private readonly core: EngineCore;
  private readonly limits: WriteLimits;
  private readonly tasks: TaskSteps;
  private readonly claims: Claims;
  private readonly records: BranchRecords;
  private readonly review: Review;
  private readonly worktrees: WorktreeRecords;
  private readonly queue: MergeQueueSteps;
  private readonly dispatching: DispatchSteps;
  private readonly signals: HostSignals;
  private readonly usage: UsageSteps;

  constructor(
    clock: Clock,
    board: Board = emptyBoard(),
    /** Which agents this host runs: a host's own signals (its shutdown, its grace after a restart) concern
     *  only them. On a board one host owns, every agent is its own; on a shared board, other hosts' agents
     *  are theirs to end. */
    mine: (agentId: string) => boolean = () => true,
    /** This host, on a board several hosts share: each record it makes names it, so that this host (and no
     *  other) pushes the commit, and a commit lost with it can be named with its host. Its name is the one the
     *  board gave it as it joined (pg/hostName.ts), set then, before this host decides anything. */
    here: RecordHost | null = null,
  ) {
    const core = (this.core = new EngineCore(clock, board, mine, here));
    const limits = (this.limits = new WriteLimits(core));
    const fence = new Fence(core, limits);
    const deps = new Dependencies(core);
    this.queue = new MergeQueueSteps(core);
    this.tasks = new TaskSteps(core, limits, deps);
    this.records = new BranchRecords(core, limits, fence);
    this.claims = new Claims(core, limits, fence, deps, this.queue, this.tasks, this.records);
    this.review = new Review(core, this.queue);
    this.worktrees = new WorktreeRecords(core, this.records);
    this.dispatching = new DispatchSteps(core, limits);
    this.signals = new HostSignals(core);
    this.usage = new UsageSteps(core, limits);
  }

  /** This host on a shared board (the constructor's `here`), or null. */
  get here(): RecordHost | null {
    return this.core.here;
  }

  set here(host: RecordHost | null) {
    this.core.here = host;
  }

  /**
   * Go back to `board`: the board as its journal holds it, after changes decided here could not be saved.
   * Reads then show what a restart would load, not changes the disk never got. Emits nothing: as far as
   * anyone was told, those changes never happened.
   */
  rewind(board: Readonly<Board>): void {
    // What the undone writes took of their agents' quotas goes back with them (a held transaction's: holdQuota).
    this.limits.giveBack();
    this.core.rewind(board);
  }

  /** A store's transaction starts deciding (pgBoard): agents' quotas it takes are given back by `rewind`, or
   *  kept by `keepQuota` once it committed (writeQuota.ts hold). */
  holdQuota(): void {
    this.limits.hold();
  }

  keepQuota(): void {
    this.limits.keep();
  }

  // ---------------------------------------------------------------- reads (engineCore.ts)

  get state(): Readonly<Board> {
    return this.core.board;
  }

  task(taskId: string): Task | undefined {
    return this.core.task(taskId);
  }

  /** Task ids an agent holds a live claim on. */
  claimsOf(agentId: string): string[] {
    return this.core.claimsOf(agentId);
  }

  /** Board time of the earliest lease deadline, or null when nothing is claimed. */
  nextDeadline(): number | null {
    return this.core.nextDeadline();
  }

  now(): number {
    return this.core.clock.now();
  }

  /** The board's text in characters (BoardLimits.maxTextChars is its cap). */
  get textChars(): number {
    return this.core.textChars;
  }

  onEvent(fn: (e: BoardEvent) => void): Disposable {
    return this.core.onEvent(fn);
  }

  view(task: Task): ClaimView | null {
    return this.core.view(task);
  }

  // ---------------------------------------------------------------- the Thread and its tasks (taskSteps.ts)

  createThread(threadId: string, goal = ''): Result<null> {
    return this.tasks.createThread(threadId, goal);
  }

  setGoal(goal: string, by: string = USER): Result<null> {
    return this.tasks.setGoal(goal, by);
  }

  setSettings(patch: SettingsPatch, by: string = USER): Result<null> {
    return this.tasks.setSettings(patch, by);
  }

  carryIn(src: CarrySource, by: string = USER): Result<CarryOutcome> {
    return this.tasks.carryIn(src, by);
  }

  addTask(input: TaskText, by: string = USER, after?: readonly string[], takers?: readonly string[]): Result<Task> {
    return this.tasks.addTask(input, by, after, takers);
  }

  editTask(taskId: string, patch: Partial<TaskText>, by: string = USER, after?: readonly string[]): Result<Task> {
    return this.tasks.editTask(taskId, patch, by, after);
  }

  userNote(taskId: string, text: string, by: string = USER): Result<null> {
    return this.tasks.userNote(taskId, text, by);
  }

  block(taskId: string, reason: string, by: string = USER): Result<null> {
    return this.tasks.block(taskId, reason, by);
  }

  unblock(taskId: string, by: string = USER): Result<null> {
    return this.tasks.unblock(taskId, by);
  }

  reset(taskId: string, by: string = USER): Result<null> {
    return this.tasks.reset(taskId, by);
  }

  agentState(agentId: string, state: AgentState, source: StateSource, text: string | null): void {
    this.tasks.agentState(agentId, state, source, text);
  }

  // ---------------------------------------------------------------- dispatch and budgets (dispatchSteps.ts)

  setTakers(taskId: string, takers: readonly string[], by: string = USER): Result<Task> {
    return this.dispatching.setTakers(taskId, takers, by);
  }

  setAgentDispatch(agentId: string, mode: DispatchMode, labels: readonly string[], by: string = USER): Result<null> {
    return this.dispatching.setAgentDispatch(agentId, mode, labels, by);
  }

  dispatchPick(agentId: string): DispatchPick {
    return this.dispatching.dispatchPick(agentId);
  }

  dispatch(agentId: string): Result<ClaimView> {
    return this.dispatching.dispatch(agentId);
  }

  setBudget(taskId: string | null, budget: Budget | null, by: string = USER): Result<null> {
    return this.dispatching.setBudget(taskId, budget, by);
  }

  // ---------------------------------------------------------------- claims and fencing (claims.ts)

  claim(agentId: string, taskId?: string, force = false): Result<ClaimView> {
    return this.claims.claim(agentId, taskId, force);
  }

  renew(agentId: string, taskId: string, token?: number): Result<ClaimView> {
    return this.claims.renew(agentId, taskId, token);
  }

  note(agentId: string, taskId: string, text: string, token?: number): Result<ClaimView> {
    return this.claims.note(agentId, taskId, text, token);
  }

  edit(agentId: string, taskId: string, patch: { title?: string; body?: string; after?: readonly string[] }, token?: number): Result<ClaimView> {
    return this.claims.edit(agentId, taskId, patch, token);
  }

  done(agentId: string, taskId: string, token?: number, note?: string): Result<ClaimView> {
    return this.claims.done(agentId, taskId, token, note);
  }

  fence(agentId: string, taskId: string, token?: number, update?: { ref: string; from: string }): Result<ClaimView> {
    return this.claims.fence(agentId, taskId, token, update);
  }

  release(agentId: string, taskId: string, token?: number): Result<{ taskId: string }> {
    return this.claims.release(agentId, taskId, token);
  }

  assign(taskId: string, agentId: string, by: string = USER, force = false): Result<ClaimView> {
    return this.claims.assign(taskId, agentId, by, force);
  }

  userRelease(taskId: string, by: string = USER): Result<null> {
    return this.claims.userRelease(taskId, by);
  }

  /**
   * Whether one more refusal of `agentId`'s may go into the journal now (its refusals' quota, as every refusal
   * uses): asked by a keyed write whose refusal made no event of its own, before its key's line is written.
   */
  refusalJournaled(agentId: string): boolean {
    return this.limits.refusalJournaled(agentId);
  }

  // ---------------------------------------------------------------- branch records (branchRecords.ts)

  recordBranch(agentId: string, taskId: string, token: number | undefined, move: { ref: string; from: string; to: string; tree: string }): Result<BranchRecord> {
    return this.records.recordBranch(agentId, taskId, token, move);
  }

  recordByPerson(taskId: string, move: { ref: string; from: string; to: string; tree: string }, by: string = USER): Result<BranchRecord> {
    return this.records.recordByPerson(taskId, move, by);
  }

  recordPushed(taskId: string, record: BranchRecord, current: string): Result<null> {
    return this.records.recordPushed(taskId, record, current);
  }

  rewindRecord(taskId: string, from: string, to: BranchRecord, lost: readonly LostRecord[], by: string, token: number): Result<null> {
    return this.records.rewindRecord(taskId, from, to, lost, by, token);
  }

  recordRepair(taskId: string, stray: string, by: string): Result<null> {
    return this.records.recordRepair(taskId, stray, by);
  }

  // ---------------------------------------------------------------- the host's lease evidence (hostSignals.ts)

  renewLive(agentId: string, via: 'liveness' | 'waiting' = 'liveness', quietMs?: number): number {
    return this.signals.renewLive(agentId, via, quietMs);
  }

  endWaited(agentId: string): string[] {
    return this.signals.endWaited(agentId);
  }

  hostGone(host: RecordHost, how: HostGoneHow, agents: readonly string[], running: number): number {
    return this.signals.hostGone(host, how, agents, running);
  }

  releaseAllHeldBy(agentId: string, reason: HardReleaseReason): string[] {
    return this.signals.releaseAllHeldBy(agentId, reason);
  }

  shutdown(reason: HardReleaseReason): number {
    return this.signals.shutdown(reason);
  }

  grace(isAlive: (agentId: string) => boolean, goneReason: HardReleaseReason | ((agentId: string) => HardReleaseReason) = 'host-restarted'): { extended: number; released: number } {
    return this.signals.grace(isAlive, goneReason);
  }

  extendForOutage(from: number, by: number): number {
    return this.signals.extendForOutage(from, by);
  }

  /** Lapse every claim whose deadline has come. Called before every operation and by the host's timer;
   *  a timer that fires late or for a claim that was since renewed finds nothing to do. */
  sweep(): string[] {
    return this.core.sweep();
  }

  // ---------------------------------------------------------------- review (review.ts)

  approve(taskId: string, by: string = USER): Result<null> {
    return this.review.approve(taskId, by);
  }

  rejectReview(taskId: string, reason: string, by: string = USER, cause?: SendBackCause): Result<null> {
    return this.review.rejectReview(taskId, reason, by, cause);
  }

  // ---------------------------------------------------------------- worktree records (worktreeRecords.ts)

  recordWorktree(taskId: string, worktree: TaskWorktree, by: string, start?: BranchRecord): Result<null> {
    return this.worktrees.recordWorktree(taskId, worktree, by, start);
  }

  forgetWorktree(taskId: string, why: 'merged' | 'removed', by: string, path?: string): Result<null> {
    return this.worktrees.forgetWorktree(taskId, why, by, path);
  }

  recordSaved(taskId: string, saved: SavedWork, by: string): Result<null> {
    return this.worktrees.recordSaved(taskId, saved, by);
  }

  deleteSaved(taskId: string, ref: string, by: string = USER): Result<null> {
    return this.worktrees.deleteSaved(taskId, ref, by);
  }

  failWorktree(taskId: string, token: number, reason: string): Result<null> {
    return this.worktrees.failWorktree(taskId, token, reason);
  }

  // ---------------------------------------------------------------- merge queue (mergeQueueSteps.ts)

  enqueue(taskId: string, by: string = USER, seal?: (a: SealedApproval) => string): Result<QueueEntry> {
    return this.queue.enqueue(taskId, by, seal);
  }

  moveQueued(taskId: string, before: string | null, by: string = USER): Result<string[]> {
    return this.queue.moveQueued(taskId, before, by);
  }

  queueLanding(taskId: string, expect: LandingOf, onto: string, merge: string | null): Result<null> {
    return this.queue.queueLanding(taskId, expect, onto, merge);
  }

  unqueue(taskId: string, reason: string, by: string = USER, code?: 'unsealed'): Result<null> {
    return this.queue.unqueue(taskId, reason, by, code);
  }

  queueCommit(taskId: string, expect: LandingOf, merge: string | null): Result<null> {
    return this.queue.queueCommit(taskId, expect, merge);
  }

  // ---------------------------------------------------------------- usage (usageSteps.ts)

  recordUsage(agentId: string, source: UsageSource, turns: readonly UsageTurn[], limits?: readonly RateLimitReading[], window?: UsageReadWindow): Result<UsageRecorded> {
    return this.usage.recordUsage(agentId, source, turns, limits, window);
  }

  // ---------------------------------------------------------------- a shared board's order (engineCore.ts)

  /**
   * Move the board past position `seq` unchanged: what the store holds there was set aside, not applied
   * (storedEvents.ts). The next event, this engine's or another host's, takes the position after it.
   */
  passOver(seq: number): void {
    this.core.passOver(seq);
  }

  /**
   * Apply an event another host decided on a shared board, in its place in the board's one order: the
   * same reducer and indexes as this engine's own decisions, so both hosts hold one board.
   */
  follow(e: BoardEvent): void {
    this.core.follow(e);
  }
}
