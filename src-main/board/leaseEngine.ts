import type { AgentWriteOp, BoardEvent, BoardEventBody, CarryEventBody, DispatchEventBody, ParkedEventBody, RenewVia, UsageEventBody, BudgetEventBody } from '../../src-shared/board/events.js';
import { planCarry, type CarryOutcome, type CarrySource } from '../../src-shared/board/boardCarry.js';
import type { AgentState, StateSource } from '../../src-shared/agents/agentState.js';
import { claimLapsed, leaseRuns } from '../../src-shared/board/lease.js';
import type { BranchRecord, Claim, QueueEntry, SealedApproval, SendBackCause, ClaimEndReason, HardReleaseReason, HostGoneHow, LostRecord, RecordHost, Task, TaskState, TaskWorktree, SavedWork } from '../../src-shared/board/model.js';
import { shortSha, strayRef } from '../../src-shared/git/taskBranch.js';
import { HOST_ACTOR, USER, VERIFY_ACTOR } from '../../src-shared/board/model.js';
import { applyEvent, copyBoard, emptyBoard, type Board } from '../../src-shared/board/reducer.js';
import { ok, reject, type RejectionCode, type Result } from '../../src-shared/board/result.js';
import { REJECT_REASON_MISSING, type SettingsPatch } from '../../src-shared/board/schemas.js';
import { claimView, type ClaimView } from '../../src-shared/protocol/views.js';
import type { Clock } from '../base/clock.js';
import { ClaimIndex } from './claimIndex.js';
import { DeadlineQueue } from './deadlineQueue.js';
import { stateAfterClaimEnd } from '../../src-shared/board/claimEnd.js';
import { Emitter, type Disposable } from '../../src-shared/lifecycle/emitter.js';
import { isInState } from '../../src-shared/board/stateWords.js';
import { BoardLimits, Limits } from '../../src-shared/board/limits.js';
import { boardTextChars, textDelta } from './boardText.js';
import { WriteQuota } from './writeQuota.js';
import { ReadyIndex } from './readyIndex.js';
import { leaseFor } from '../../src-shared/board/leaseEvidence.js';
import { TakerIndexes, type DispatchPick } from './takerIndexes.js';
import { agentDispatchOf, DispatchConstants, DISPATCH_ACTOR, dispatchOn, labelsOf, takersOf, taskBudgetSpent, threadBudgetSpent, type DispatchMode } from '../../src-shared/board/dispatch.js';
import { budgetText, type Budget } from '../../src-shared/usage/budgets.js';
import { budgetStop } from '../../src-shared/board/budgetGate.js';
import { movedOrder, nextToLand, queuedInRank } from '../../src-shared/board/mergeQueue.js';
import { afterOf, cycleText, cycleThrough, dependenciesDone, waitingOn, waitingText } from '../../src-shared/board/dependencies.js';
import { planUsage, type UsageReadWindow, type UsageRecorded } from './usageRecorder.js';
import type { RateLimitReading, UsageSource, UsageTurn } from '../../src-shared/usage/usage.js';

type Listener = (e: BoardEvent) => void;

/** The host's own note writers (merge results, verify outcomes): held to the person's cap, not an agent's. */
const HOST_WRITERS = new Set([HOST_ACTOR, VERIFY_ACTOR]);

/** What an edit changes a task's text by. */
function editGrowth(t: Task, patch: Partial<TaskText>): number {
  let d = 0;
  if (patch.title !== undefined) d += patch.title.length - t.title.length;
  if (patch.body !== undefined) d += patch.body.length - t.body.length;
  if (patch.verify !== undefined) d += (patch.verify?.length ?? 0) - (t.verify?.length ?? 0);
  return d;
}
/** A task's text as the edge validated it (src-shared/board/schemas.ts): the title trimmed, one line. */
export interface TaskText {
  title: string;
  body?: string;
  verify?: string | null;
}

/** The fields an edit changes; an edit that changes none is refused rather than logged as a change. */
function changes(patch: Partial<TaskText>, after?: readonly string[]): Result<Partial<TaskText>> {
  const out = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<TaskText>;
  if (Object.keys(out).length === 0 && after === undefined) return reject('invalid-input', 'nothing to change: give a title, body, verify command or the tasks it waits on');
  return ok(out);
}

/** T-2 before T-10. */
const byTaskNumber = (a: string, b: string): number => Number(a.slice(2)) - Number(b.slice(2)) || a.localeCompare(b);

/** What a claim with no id looks at: a task whose own budget is spent would be refused (budgetGate.ts), and
 *  as the lowest ready task it would hold back every one after it. */
const notSpent = (t: Task): boolean => !taskBudgetSpent(t);

const sameList = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * The lease engine: the one authority on who holds which task until when. Pure apart from the injected
 * clock: it owns no timer, file or socket. Each decision becomes an event that goes through the shared
 * reducer, so what the engine decided, what the journal replays and what a window draws are one function.
 *
 * Safety lives on the write path, not in a timer: every operation first lapses whatever has expired by
 * `clock.now()`, so a claim past its deadline is dead whether or not the host's sweep timer has fired yet,
 * and every agent write is a compare on (holder, token, deadline).
 */
export class LeaseEngine {
  private readonly board: Board;
  private readonly events = new Emitter<BoardEvent>();
  /** Earliest lease deadline first: the host arms one timer on the top. */
  private deadlines = new DeadlineQueue();
  /** Where "claim the next ready task" starts looking (readyIndex.ts). */
  private ready: ReadyIndex;
  /** Where dispatch finds the next ready task an agent may take (takerIndexes.ts). */
  private takers: TakerIndexes;
  private heldBy = new ClaimIndex();
  /** The board's text (boardText.ts), kept as events apply: checked against the cap before each write. */
  private text = 0;
  private readonly quota: WriteQuota;

  constructor(
    private readonly clock: Clock,
    board: Board = emptyBoard(),
    /** Which agents this host runs: a host's own signals (its shutdown, its grace after a restart) concern
     *  only them. On a board one host owns, every agent is its own; on a shared board, other hosts' agents
     *  are theirs to end. */
    private readonly mine: (agentId: string) => boolean = () => true,
    /** This host, on a board several hosts share: each record it makes names it, so that this host (and no
     *  other) pushes the commit, and a commit lost with it can be named with its host. Its name is the one the
     *  board gave it as it joined (pg/hostName.ts), set then, before this host decides anything. */
    public here: RecordHost | null = null,
  ) {
    this.board = board;
    this.ready = new ReadyIndex(board.tasks, () => this.board.nextTaskNumber, notSpent);
    this.takers = new TakerIndexes(board.tasks, () => this.board.nextTaskNumber);
    this.quota = new WriteQuota(() => this.clock.now());
    this.indexAll();
  }

  /**
   * Go back to `board`: the board as its journal holds it, after changes decided here could not be saved.
   * Reads then show what a restart would load, not changes the disk never got. Emits nothing: as far as
   * anyone was told, those changes never happened.
   */
  rewind(board: Readonly<Board>): void {
    // What the undone writes took of their agents' quotas goes back with them (a held transaction's: holdQuota).
    this.quota.giveBack();
    Object.assign(this.board, copyBoard(board));
    this.deadlines = new DeadlineQueue();
    this.heldBy = new ClaimIndex();
    this.ready = new ReadyIndex(this.board.tasks, () => this.board.nextTaskNumber, notSpent);
    this.takers = new TakerIndexes(this.board.tasks, () => this.board.nextTaskNumber);
    this.indexAll();
  }

  /** A store's transaction starts deciding (pgBoard): agents' quotas it takes are given back by `rewind`, or
   *  kept by `keepQuota` once it committed (writeQuota.ts hold). */
  holdQuota(): void {
    this.quota.hold();
  }

  keepQuota(): void {
    this.quota.keep();
  }

  private indexAll(): void {
    // Claims from disk are indexed in deadline order, so they enter the deadline queue in order.
    const byDeadline = [...this.board.tasks.values()].sort((a, b) => (a.claim?.deadline ?? 0) - (b.claim?.deadline ?? 0));
    for (const t of byDeadline) this.reindex(t.id, undefined);
    this.text = boardTextChars(this.board);
  }

  // ---------------------------------------------------------------- reads

  get state(): Readonly<Board> {
    return this.board;
  }

  task(taskId: string): Task | undefined {
    return this.board.tasks.get(taskId);
  }

  /** Task ids an agent holds a live claim on. */
  claimsOf(agentId: string): string[] {
    return this.heldBy.tasksOf(agentId);
  }

  /** Board time of the earliest lease deadline, or null when nothing is claimed. */
  nextDeadline(): number | null {
    return this.deadlines.peek()?.priority ?? null;
  }

  now(): number {
    return this.clock.now();
  }

  /** The board's text in characters (BoardLimits.maxTextChars is its cap). */
  get textChars(): number {
    return this.text;
  }

  onEvent(fn: Listener): Disposable {
    return this.events.event(fn);
  }

  view(task: Task): ClaimView | null {
    return claimView(task, this.clock.now());
  }

  // ---------------------------------------------------------------- thread

  createThread(threadId: string, goal = ''): Result<null> {
    if (this.board.seq !== 0) return reject('bad-state', 'the board already has a thread');
    this.emit({ kind: 'thread-created', threadId, goal, settings: this.board.settings });
    return ok(null);
  }

  setGoal(goal: string, by: string = USER): Result<null> {
    this.sweep();
    const full = this.overCap(by, goal.length - this.board.goal.length);
    if (full) return full;
    if (goal !== this.board.goal) this.emit({ kind: 'goal-set', goal, by });
    return ok(null);
  }

  setSettings(patch: SettingsPatch, by: string = USER): Result<null> {
    this.sweep();
    const next = { ...this.board.settings };
    for (const [k, v] of Object.entries(patch)) if (v !== undefined) (next as Record<string, unknown>)[k] = v;
    this.emit({ kind: 'settings-set', settings: next, by });
    return ok(null);
  }

  /** A Thread's local board carried onto this one (issue 45, boardCarry.ts): planned against this board as it is
   *  now and made in one decision, or refused whole when the board's text would pass its cap. */
  carryIn(src: CarrySource, by: string = USER): Result<CarryOutcome> {
    this.sweep();
    const plan = planCarry(src, this.board, by);
    const full = this.overCap(by, plan.growth);
    if (full) return full;
    for (const e of plan.events) this.emit(e);
    return ok(plan.outcome);
  }

  // ---------------------------------------------------------------- tasks (anyone)

  /** `after`: the tasks the new one waits on (issue 34), each of which must be on the board. */
  addTask(input: TaskText, by: string = USER, after?: readonly string[], takers?: readonly string[]): Result<Task> {
    this.sweep();
    const chars = input.title.length + (input.body?.length ?? 0) + (input.verify?.length ?? 0);
    const limited = this.admit(by, null, 'add', chars, chars);
    if (limited) return limited;
    const taskId = `T-${this.board.nextTaskNumber}`;
    const deps = after?.length ? this.checkAfter(taskId, after) : ok([]);
    if (!deps.ok) return by === USER ? deps : this.refuse(by, null, null, 'add', deps.error.code, deps.error.message);
    this.emit({
      kind: 'task-added',
      taskId,
      title: input.title,
      body: input.body ?? '',
      verify: input.verify ?? null,
      by,
      ...(deps.value.length ? { after: deps.value } : {}),
      ...(takers?.length ? { for: [...takers] } : {}),
    });
    return ok(this.board.tasks.get(taskId) as Task);
  }

  /** A person edits a task: allowed in any state. `after` replaces what it waits on (empty: nothing); a held
   *  task may gain dependencies, and its claim stands. */
  editTask(taskId: string, patch: Partial<TaskText>, by: string = USER, after?: readonly string[]): Result<Task> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    const edit = changes(patch, after);
    if (!edit.ok) return edit;
    const deps = after === undefined ? null : this.checkAfter(taskId, after);
    if (deps && !deps.ok) return deps;
    const full = this.overCap(by, editGrowth(t.value, edit.value));
    if (full) return full;
    this.applyEdit(taskId, edit.value, deps?.value, by);
    return ok(this.board.tasks.get(taskId) as Task);
  }

  /** An edit's events: its text (if any) and what it waits on (if that changes), both checked already. */
  private applyEdit(taskId: string, text: Partial<TaskText>, after: readonly string[] | undefined, by: string): void {
    if (Object.keys(text).length) this.emit({ kind: 'task-edited', taskId, ...text, by });
    if (after !== undefined && !sameList(after, afterOf(this.board.tasks.get(taskId) as Task))) this.emit({ kind: 'after-set', taskId, after: [...after], by });
  }

  /**
   * What `taskId` may wait on: tasks on the board, not itself, and none that waits on it already (a cycle
   * would keep every task in it waiting for ever), each refused with a reason that names the task or the cycle.
   */
  private checkAfter(taskId: string, after: readonly string[]): Result<string[]> {
    const ids = [...new Set(after)];
    if (ids.length > Limits.maxAfter) return reject('invalid-input', `a task waits on at most ${Limits.maxAfter} others`);
    for (const id of ids) {
      if (id === taskId) return reject('invalid-input', `${taskId} cannot wait on itself`);
      if (!this.board.tasks.has(id)) return reject('no-such-task', `${taskId} cannot wait on ${id}: there is no task ${id}`);
    }
    const cycle = cycleThrough(this.board.tasks, taskId, ids);
    if (cycle) return reject('invalid-input', `${taskId} cannot wait on ${cycle[1]}: that would close a cycle, ${cycleText(cycle)}`);
    return ok(ids);
  }


  // ---------------------------------------------------------------- dispatch (issue 34)

  /** Who may take `taskId` when the board dispatches: `takers` (profiles, `label:` labels; empty: anyone). */
  setTakers(taskId: string, takers: readonly string[], by: string = USER): Result<Task> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    if (!sameList(takers, takersOf(t.value))) this.emit({ kind: 'for-set', taskId, for: [...takers], by });
    return ok(this.board.tasks.get(taskId) as Task);
  }

  /** `agentId`'s own dispatch setting (`thread`: the Thread's default) and labels. */
  setAgentDispatch(agentId: string, mode: DispatchMode, labels: readonly string[], by: string = USER): Result<null> {
    this.sweep();
    // An agent's own setting is one of its writes: a loop turning it on and off spends its quota, not the journal.
    const limited = by === USER ? null : this.admit(by, null, 'dispatch', labels.join(',').length, 0);
    if (limited) return limited;
    const was = agentDispatchOf(this.board.settings, agentId);
    if (was && was.mode === mode && sameList(was.labels, labels)) return ok(null);
    const entries = Object.keys(this.board.settings.agentDispatch ?? {}).length;
    if (!was && entries >= DispatchConstants.maxAgentSettings && (mode !== 'thread' || labels.length))
      return reject('board-full', `${entries} agents have a dispatch setting of their own; set agents that are gone back to the Thread's default (forkbench dispatch thread) first`);
    this.emit({ kind: 'dispatch-set', agentId, mode, labels: [...labels], by });
    return ok(null);
  }

  /** What dispatch would grant `agentId` now (a read: nothing changes). */
  dispatchPick(agentId: string): DispatchPick {
    return this.takers.pick(agentId, labelsOf(this.board.settings, agentId), this.clock.now(), taskBudgetSpent);
  }

  /**
   * The board gives an idle agent the next ready task it may take: the one owner of dispatch
   * (host/dispatcher.ts) calls this when it saw the agent idle. The decision is one step of the engine, so it
   * is the same compare-and-set as a claim: two agents idle at once get a task each, never one task both. An
   * agent with dispatch off, or that holds any task (one in review included), is given nothing: a dispatched
   * agent holds at most one task.
   */
  dispatch(agentId: string): Result<ClaimView> {
    this.sweep();
    if (!dispatchOn(this.board.settings, agentId)) return reject('bad-state', `dispatch is off for ${agentId}`);
    const held = this.claimsOf(agentId);
    if (held.length) return reject('bad-state', `${agentId} holds ${held.join(', ')}: the board dispatches only to an agent that holds nothing`);
    const { budget } = this.board.settings;
    if (budget && threadBudgetSpent(this.board.settings, this.board.costs.thread))
      return reject('bad-state', `the Thread's budget is spent (${budgetText(this.board.costs.thread, budget)}): the board dispatches nothing until a person raises it`);
    const pick = this.dispatchPick(agentId);
    if (pick.taskId === null)
      return reject('no-such-task', pick.wakeAt === null ? `no ready task ${agentId} may take` : `every ready task ${agentId} may take is backing off from it`);
    this.grant(pick.taskId, agentId, DISPATCH_ACTOR);
    return ok(this.view(this.board.tasks.get(pick.taskId) as Task) as ClaimView);
  }

  /** Issue 47: a person sets (null: removes) the budget of `taskId`, or of the Thread (null). Setting the same
   *  budget again is no change and no event. */
  setBudget(taskId: string | null, budget: Budget | null, by: string = USER): Result<null> {
    this.sweep();
    const t = taskId === null ? null : this.board.tasks.get(taskId);
    if (taskId !== null && !t) return reject('no-such-task', `no task ${taskId}`);
    const was = t ? (t.budget ?? null) : (this.board.settings.budget ?? null);
    if (was?.unit === budget?.unit && was?.limit === budget?.limit) return ok(null);
    this.emit({ kind: 'budget-set', taskId, budget, by });
    return ok(null);
  }

  // ---------------------------------------------------------------- agent writes

  /**
   * An agent claims a task (or, with no id, the ready task with the lowest number: open, and every task it
   * waits on done). A task that waits on others is claimed by id only with `force`, and the board notes that
   * it was.
   */
  claim(agentId: string, taskId?: string, force = false): Result<ClaimView> {
    this.sweep();
    let id = taskId;
    if (id === undefined) {
      id = this.ready.next();
      if (id === undefined) return this.refuse(agentId, null, null, 'claim', 'no-such-task', this.nothingReady());
    }
    const t = this.board.tasks.get(id);
    if (!t) return this.refuse(agentId, id, null, 'claim', 'no-such-task', `no task ${id}`);
    if (t.state !== 'open') {
      const who = t.claim ? (t.claim.agentId === agentId ? 'you' : t.claim.agentId) : '';
      // "T-2 is claimed by you", but "T-2 is in review (held by you)": a review is not held "by" anyone.
      const holder = who ? (t.state === 'claimed' ? ` by ${who}` : ` (held by ${who})`) : '';
      return this.refuse(agentId, id, null, 'claim', 'bad-state', `${id} ${isInState(t.state)}${holder}; only open tasks can be claimed`);
    }
    const spent = budgetStop(t, { settings: this.board.settings, thread: this.board.costs.thread });
    if (spent) return this.refuse(agentId, id, null, 'claim', 'over-budget', spent);
    const full = this.atClaimLimit(agentId);
    if (full) return this.refuse(agentId, id, null, 'claim', 'claim-limit', full);
    const waits = dependenciesDone(this.board.tasks, t) ? null : this.notReady(t, force);
    if (waits && !waits.ok) return this.refuse(agentId, id, null, 'claim', waits.error.code, waits.error.message);
    this.grant(id, agentId, agentId);
    if (waits) this.noteForced(id, agentId, waits.value);
    return ok(this.view(this.board.tasks.get(id) as Task) as ClaimView);
  }

  /**
   * Why `agentId` may claim no more (the tasks it holds claimed and the Thread's limit), or null. Only tasks
   * in `claimed` count: one in review is finished work waiting on the person, and holds nothing others could
   * take. Only an agent's own `claim` is held to it: a person's assignment is the person's call and may go
   * past it, and dispatch grants only to an agent that holds nothing, so it never reaches a limit of 1 or more.
   */
  private atClaimLimit(agentId: string): string | null {
    const limit = this.board.settings.claimLimit;
    const held = this.claimsOf(agentId).filter((id) => this.board.tasks.get(id)?.state === 'claimed');
    if (held.length < limit) return null;
    return (
      `${agentId} holds ${held.length} claimed task${held.length === 1 ? '' : 's'} (${held.sort(byTaskNumber).join(', ')}), and the Thread lets one agent claim at most ${limit}: ` +
      `finish one (done) or release one before claiming another. Only the person can give you more (by assigning a task, or raising the claim limit in Thread settings)`
    );
  }

  /** An open task that waits on others: refused naming them, or with `force` the ones it goes ahead of. */
  private notReady(t: Task, force: boolean): Result<string[]> {
    const ids = waitingOn(this.board.tasks, t);
    if (force) return ok(ids);
    const hint = 'claim it by id with force (forkbench claim ID --force) to start it anyway';
    return reject('not-ready', `${t.id} waits on ${waitingText(this.board.tasks, ids)}; it is ready once ${ids.length === 1 ? 'that is' : 'they are all'} done, or ${hint}`);
  }

  /** The board's note on a grant that went ahead of what the task waits on. */
  private noteForced(taskId: string, agentId: string, waited: string[]): void {
    this.emit({ kind: 'note', taskId, by: HOST_ACTOR, text: `claimed by ${agentId} before ${waited.join(', ')} ${waited.length === 1 ? 'was' : 'were'} done, forced` });
  }

  /** Why `claim` with no id found nothing: none open, or every open one waits on others (how many, which first). */
  private nothingReady(): string {
    let waiting = 0;
    let first: Task | undefined;
    for (const t of this.board.tasks.values()) {
      if (t.state !== 'open') continue;
      waiting++;
      first ??= t;
    }
    if (!first) return 'no open task to claim';
    return `no ready task to claim: ${waiting} open task${waiting === 1 ? ' waits' : 's wait'} on others (${first.id} on ${waitingText(this.board.tasks, waitingOn(this.board.tasks, first))}); forkbench why ID says what each waits on`;
  }

  renew(agentId: string, taskId: string, token?: number): Result<ClaimView> {
    const c = this.checkWrite(agentId, taskId, token, 'renew');
    if (!c.ok) return c;
    this.extend(taskId, c.value, 'write');
    return ok(this.view(this.board.tasks.get(taskId) as Task) as ClaimView);
  }

  note(agentId: string, taskId: string, text: string, token?: number): Result<ClaimView> {
    const limited = this.admit(agentId, taskId, 'note', text.length, text.length, token);
    if (limited) return limited;
    const c = this.checkWrite(agentId, taskId, token, 'note');
    if (!c.ok) return c;
    this.emit({ kind: 'note', taskId, by: agentId, text });
    this.extend(taskId, c.value, 'write');
    return ok(this.view(this.board.tasks.get(taskId) as Task) as ClaimView);
  }

  /** The holder edits its task: title, body, and (`after`) the tasks it waits on, which leaves its claim as is. */
  edit(agentId: string, taskId: string, patch: { title?: string; body?: string; after?: readonly string[] }, token?: number): Result<ClaimView> {
    const before = this.board.tasks.get(taskId);
    const written = (patch.title?.length ?? 0) + (patch.body?.length ?? 0);
    // Before the input is looked at: a refused edit is a journal line too, and a loop of empty edits is a loop.
    const limited = this.admit(agentId, taskId, 'edit', written, before ? editGrowth(before, patch) : 0, token);
    if (limited) return limited;
    const e = changes({ title: patch.title, body: patch.body }, patch.after);
    if (!e.ok) return this.refuse(agentId, taskId, token ?? null, 'edit', 'invalid-input', e.error.message);
    const c = this.checkWrite(agentId, taskId, token, 'edit');
    if (!c.ok) return c;
    const deps = patch.after === undefined ? null : this.checkAfter(taskId, patch.after);
    if (deps && !deps.ok) return this.refuse(agentId, taskId, token ?? null, 'edit', deps.error.code, deps.error.message);
    this.applyEdit(taskId, e.value, deps?.value, agentId);
    this.extend(taskId, c.value, 'write');
    return ok(this.view(this.board.tasks.get(taskId) as Task) as ClaimView);
  }

  /** The holder says the task is done. That is a claim, not a fact: the task waits in review. */
  done(agentId: string, taskId: string, token?: number, note?: string): Result<ClaimView> {
    const text = note ? note : null;
    // Saying done is never rate-limited (an agent must be able to finish); the note that comes with it is text.
    if (text !== null) {
      const limited = this.admit(agentId, taskId, 'done', text.length, text.length, token);
      if (limited) return limited;
    }
    const c = this.checkWrite(agentId, taskId, token, 'done');
    if (!c.ok) return c;
    const t = this.board.tasks.get(taskId) as Task;
    if (t.state !== 'claimed') return this.refuse(agentId, taskId, token ?? null, 'done', 'bad-state', `${taskId} ${isInState(t.state, { already: true })}`);
    // A new done is new work: no approval of an earlier one stands (none can be queued while claimed, but a
    // board damaged by an older host may hold one).
    this.leaveQueue(t, 'said done again', agentId);
    if (text !== null) this.emit({ kind: 'note', taskId, by: agentId, text });
    // The work under review is what the board recorded at this moment, never a branch head that moves later.
    this.emit({ kind: 'submitted', taskId, agentId, token: c.value.token, record: t.worktree ? t.record : null });
    this.extend(taskId, c.value, 'write');
    return ok(this.view(this.board.tasks.get(taskId) as Task) as ClaimView);
  }

  /**
   * A git hook in the task's worktree asks, before a commit, ref move or push lands, whether this agent still
   * holds the task (under `token`, when the worktree was issued to it). The same fence as every write, and
   * like every write it renews: committing is work. With `from` (a move of the branch from that sha), the
   * branch must also be where the board recorded it, and the task not frozen in review.
   */
  fence(agentId: string, taskId: string, token?: number, update?: { ref: string; from: string }): Result<ClaimView> {
    const c = this.checkWrite(agentId, taskId, token, 'fence');
    if (!c.ok) return c;
    const t = this.board.tasks.get(taskId) as Task;
    if (update) {
      const why = this.offRecord(t, update.ref, update.from);
      if (why) return this.refuse(agentId, taskId, token ?? null, 'fence', why.code, why.message);
    }
    this.extend(taskId, c.value, 'write');
    return ok(this.view(this.board.tasks.get(taskId) as Task) as ClaimView);
  }

  /**
   * The branch of the holder's grant moved from `from` to `to` (git reports it after the update; the host has
   * checked that the branch is at `to` and read its tree). Recorded only while the claim is live, not frozen
   * in review, and the move starts where the board last recorded the branch: a commit that lands after its
   * claim ended, or on top of something the board never recorded, is not the task's work.
   */
  recordBranch(agentId: string, taskId: string, token: number | undefined, move: { ref: string; from: string; to: string; tree: string }): Result<BranchRecord> {
    const c = this.checkWrite(agentId, taskId, token, 'record');
    if (!c.ok) return c;
    const t = this.board.tasks.get(taskId) as Task;
    // Idempotent by its natural key (task, commit): a record of the commit the board already has (a report
    // sent again after its answer was lost) is that record, not a move off it to be put aside.
    if (t.record && t.record.sha === move.to && t.record.tree === move.tree && move.ref === `refs/heads/${t.worktree?.branch}`) return ok(t.record);
    const why = this.offRecord(t, move.ref, move.from);
    if (why) return this.refuse(agentId, taskId, token ?? null, 'record', why.code, why.message);
    const record: BranchRecord = { sha: move.to, tree: move.tree, token: c.value.token, by: agentId };
    this.emitRecord(taskId, t.record?.sha ?? null, record);
    this.extend(taskId, c.value, 'write');
    return ok(record);
  }

  /**
   * A person committed by hand in a task's folder (the host checked that the committing process is in no
   * agent's pane). Recorded under the claim it was made in, if the branch is the latest grant's and starts
   * at the record; a person's commit never needs a lease.
   */
  recordByPerson(taskId: string, move: { ref: string; from: string; to: string; tree: string }, by: string = USER): Result<BranchRecord> {
    const f = this.find(taskId);
    if (!f.ok) return f;
    const t = f.value;
    if (t.record && t.record.sha === move.to && t.record.tree === move.tree && move.ref === `refs/heads/${t.worktree?.branch}`) return ok(t.record);
    const why = this.offRecord(t, move.ref, move.from, true);
    if (why) return reject(why.code, why.message);
    const record: BranchRecord = { sha: move.to, tree: move.tree, token: t.worktree?.token ?? t.claim?.token ?? 0, by };
    this.emitRecord(taskId, t.record?.sha ?? null, record);
    return ok(record);
  }

  /** Why a move of `ref` from `from` is not the task's work now, or null when it is. */
  private offRecord(t: Task, ref: string, from: string, person = false): { code: RejectionCode; message: string } | null {
    const wt = t.worktree;
    if (!wt) return { code: 'bad-state', message: `${t.id} has no worktree` };
    if (ref !== `refs/heads/${wt.branch}`) return { code: 'not-holder', message: `${ref} is not the branch of ${t.id}'s current claim (${wt.branch})` };
    // Frozen for everyone: approval merges what `done` named, and a record taken now, even a person's,
    // would put work under the claim that said done that it never saw (a forged person's record did).
    if (t.state === 'review' && t.submitted)
      return {
        code: 'bad-state',
        message: person
          ? `${t.id} is in review: its work was frozen at ${shortSha(t.submitted.sha)} when its agent said done, and approval merges exactly that; a commit now is not part of it. Reject it to work on, then commit`
          : `${t.id} is in review: its work was frozen at ${shortSha(t.submitted.sha)} when you said done; commits now are not part of it. Ask for it back (reject) to work on`,
      };
    if (t.state !== 'claimed' && t.state !== 'review' && !person) return { code: 'bad-state', message: `${t.id} ${isInState(t.state)}` };
    // A branch made before the board kept records has none yet: its first move starts the record.
    if (t.record && t.record.sha !== from)
      return {
        code: 'off-record',
        message: `${wt.branch} is at ${shortSha(from)}, which the board never recorded for ${t.id} (its record is ${shortSha(t.record.sha)}): a commit that landed outside the fence, or one whose record did not finish. Forkbench moves it aside to ${strayRef(wt.branch, '')} and puts the branch back at ${shortSha(t.record.sha)}; your files are untouched, so commit again`,
      };
    return null;
  }

  private emitRecord(taskId: string, from: string | null, record: BranchRecord): void {
    this.emit({ kind: 'branch-recorded', taskId, from, record, ...(this.here ? { host: this.here } : {}) });
  }

  /**
   * The host pushed `record` to the Thread's remote. Taken only while the task's record is still `current`
   * (the record the host found `record` to be, or to be an ancestor of, when it pushed): a push that finished
   * after the record moved elsewhere (rewound, or recorded on another host) is not the task's line.
   */
  recordPushed(taskId: string, record: BranchRecord, current: string): Result<null> {
    const f = this.find(taskId);
    if (!f.ok) return f;
    const t = f.value;
    if (t.record?.sha !== current) return reject('stale-token', `${taskId}'s record is ${shortSha(t.record?.sha ?? '')} now, not ${shortSha(current)}: the push of ${shortSha(record.sha)} is not its line any more`);
    if (t.pushed?.sha === record.sha) return ok(null);
    this.emit({ kind: 'branch-pushed', taskId, record });
    return ok(null);
  }

  /**
   * A claim on this host cannot start at the task's record: its commits never reached the remote. The
   * record goes back to `to` (the last pushed record, or the base's head when none was), if it is still `from`
   * (a record that arrived meanwhile is the one to start from) and the claim `token` it is rewound for is still
   * the task's (a claim reassigned meanwhile may already work from the record elsewhere: its folder must not
   * have the record moved under it), and the history names each lost commit.
   */
  rewindRecord(taskId: string, from: string, to: BranchRecord, lost: readonly LostRecord[], by: string, token: number): Result<null> {
    const f = this.find(taskId);
    if (!f.ok) return f;
    if (f.value.record?.sha !== from) return reject('stale-token', `${taskId}'s record moved to ${shortSha(f.value.record?.sha ?? '')} meanwhile`);
    if (f.value.claim?.token !== token) return reject('stale-token', `the claim ${token} on ${taskId} is over: its record stays ${shortSha(from)}`);
    const wasPushed = f.value.pushed?.sha === to.sha;
    this.emit({ kind: 'record-rewound', taskId, from, to, lost: [...lost], by });
    const named = lost.map((l) => `${shortSha(l.sha)} (recorded by ${l.by}${l.host ? ` on host ${l.host.name} [${l.host.id.slice(0, 8)}]` : ''})`);
    const start = wasPushed ? `the last record that reached the remote, ${shortSha(to.sha)}` : `the base branch's head ${shortSha(to.sha)} (no record of the task ever reached the remote)`;
    this.emit({
      kind: 'note',
      taskId,
      by,
      text: `Lost with the host that recorded them (never on the remote): ${named.length ? named.join(', ') : 'none named'}. This claim starts at ${start}.`.slice(0, Limits.maxNoteChars),
    });
    return ok(null);
  }

  /** The host put a task's branch back at its record after moving an unrecorded head aside. */
  recordRepair(taskId: string, stray: string, by: string): Result<null> {
    const f = this.find(taskId);
    if (!f.ok) return f;
    this.emit({ kind: 'note', taskId, by, text: `The branch was at ${shortSha(stray)}, which the board never recorded: it was moved aside to ${strayRef(f.value.worktree?.branch ?? f.value.parked.at(-1)?.branch ?? taskId, stray)} and the branch put back at ${shortSha(f.value.record?.sha ?? '')}. Nothing was deleted.` });
    return ok(null);
  }

  /** The holder lets go. Only the holder, with the current token, can: anything else changes nothing. */
  release(agentId: string, taskId: string, token?: number): Result<{ taskId: string }> {
    const c = this.checkWrite(agentId, taskId, token, 'release');
    if (!c.ok) return c;
    const t = this.board.tasks.get(taskId) as Task;
    this.end(taskId, c.value, 'released', t.state === 'review' ? 'review' : 'open');
    return ok({ taskId });
  }

  // ---------------------------------------------------------------- host signals

  /**
   * The host's background check found the agent alive and making progress: extend every claim it holds.
   * A claim already past its deadline is not revived (a lapsed lease stays lapsed). `quietMs`: how long
   * the agent had gone without a sign of progress when the check saw it, the evidence leases are chosen
   * from; it rides on the renewal the check writes anyway, so the evidence adds no event.
   */
  renewLive(agentId: string, via: 'liveness' | 'waiting' = 'liveness', quietMs?: number): number {
    this.sweep();
    let n = 0;
    for (const id of this.claimsOf(agentId)) {
      const c = (this.board.tasks.get(id) as Task).claim as Claim;
      if (this.extend(id, c, via, via === 'liveness' ? quietMs : undefined)) n++;
    }
    return n;
  }

  /**
   * The agent has waited on a person for longer than the Thread allows: its claims lapse now, with the
   * reason said, so the task goes back to the backlog for someone who can work on it. Not a failed attempt
   * (the task did not defeat the agent; nobody answered it).
   */
  endWaited(agentId: string): string[] {
    this.sweep();
    // Work in review waits on the person too, and is held for them whatever the agent does meanwhile.
    const ids = this.claimsOf(agentId).filter((id) => leaseRuns(this.board.tasks.get(id) as Task));
    for (const id of ids) {
      const t = this.board.tasks.get(id) as Task;
      this.end(id, t.claim as Claim, 'waited-too-long', stateAfterClaimEnd(t, 'waited-too-long', this.board.settings.poisonLimit));
    }
    return ids;
  }

  /** An agent's state changed: one line in the journal and the log, nothing else on the board. */
  agentState(agentId: string, state: AgentState, source: StateSource, text: string | null): void {
    this.emit({ kind: 'agent-state', agentId, state, source, text });
  }

  /**
   * A host of a shared board is gone (issue 45): its agents' claims end now (`host-lost` when it was lost, as
   * `host-stopped` when it left: a leaving host released them already, so these are any granted since), and
   * the board says so once, for every other host's windows. `running`: its agents still running as it went.
   */
  hostGone(host: RecordHost, how: HostGoneHow, agents: readonly string[], running: number): number {
    let claims = 0;
    for (const id of agents) claims += this.releaseAllHeldBy(id, how === 'lost' ? 'host-lost' : 'host-stopped').length;
    this.emit({ kind: 'host-gone', host: { id: host.id, name: host.name }, how, agents: running, claims });
    return claims;
  }

  /** A hard signal (pane closed, process exited): the agent is certainly gone, so its claims end now. */
  releaseAllHeldBy(agentId: string, reason: HardReleaseReason): string[] {
    this.sweep();
    const ids = this.claimsOf(agentId);
    for (const id of ids) {
      const t = this.board.tasks.get(id) as Task;
      const to = stateAfterClaimEnd(t, reason, this.board.settings.poisonLimit);
      this.end(id, t.claim as Claim, reason, to);
    }
    return ids;
  }

  /** The host shuts: every claim ends now with the reason (no grace: nobody is there to work on them). */
  shutdown(reason: HardReleaseReason): number {
    let released = 0;
    for (const agentId of [...this.heldBy.agents()]) if (this.mine(agentId)) released += this.releaseAllHeldBy(agentId, reason).length;
    return released;
  }

  /**
   * After a restart or a resume from sleep: every live claim whose holder is still there gets at least a
   * full lease from now, so claims do not all lapse at once because the host was away (etcd extends every
   * lease on leader change for the same reason). Claims whose holders are gone are ended with `goneReason`
   * (the same for every holder, or each holder's own).
   */
  grace(isAlive: (agentId: string) => boolean, goneReason: HardReleaseReason | ((agentId: string) => HardReleaseReason) = 'host-restarted'): { extended: number; released: number } {
    let extended = 0;
    let released = 0;
    for (const agentId of [...this.heldBy.agents()]) {
      if (!this.mine(agentId)) continue;
      if (!isAlive(agentId)) {
        released += this.releaseAllHeldBy(agentId, typeof goneReason === 'function' ? goneReason(agentId) : goneReason).length;
        continue;
      }
      for (const id of this.claimsOf(agentId)) {
        const c = (this.board.tasks.get(id) as Task).claim as Claim;
        if (this.extend(id, c, 'grace')) extended++;
      }
    }
    return { extended, released };
  }

  /**
   * The board's store could not be reached from `from` for `by` ms (pg/outage.ts): every claim whose lease still
   * ran at `from`, whoever holds it, runs on by `by`, so nobody's claim pays for the outage. Claims already due
   * by `from` are not revived. Returns how many were extended.
   */
  extendForOutage(from: number, by: number): number {
    let extended = 0;
    for (const agentId of [...this.heldBy.agents()]) {
      for (const id of this.claimsOf(agentId)) {
        const t = this.board.tasks.get(id) as Task;
        const c = t.claim as Claim;
        // A claim held in review does not count down (leaseRuns): there is nothing to move on.
        if (!leaseRuns(t) || c.deadline <= from) continue;
        this.emit({ kind: 'renew', taskId: id, agentId, token: c.token, deadline: c.deadline + Math.round(by), via: 'outage' });
        extended++;
      }
    }
    return extended;
  }

  /** Lapse every claim whose deadline has come. Called before every operation and by the host's timer;
   *  a timer that fires late or for a claim that was since renewed finds nothing to do. */
  sweep(): string[] {
    const now = this.clock.now();
    const lapsed: string[] = [];
    for (let top = this.deadlines.peek(); top && top.priority <= now; top = this.deadlines.peek()) {
      const t = this.board.tasks.get(top.key) as Task;
      const c = t.claim as Claim;
      const to = stateAfterClaimEnd(t, 'lapsed', this.board.settings.poisonLimit);
      this.end(top.key, c, 'lapsed', to);
      lapsed.push(top.key);
    }
    return lapsed;
  }

  // ---------------------------------------------------------------- user actions

  /** A person gives a task to an agent: a grant if it is free, a reassign (revoke + new token) if held. A free
   *  task that waits on others is given only with `force`, and the board notes it. Not held to the Thread's
   *  claim limit: the limit keeps an agent from taking work for itself, and this is the person giving it. */
  assign(taskId: string, agentId: string, by: string = USER, force = false): Result<ClaimView> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    const task = t.value;
    // A new holder is a new grant, held to what the task waits on whether it was free or held by another.
    const movable = task.claim ? task.claim.agentId !== agentId : task.state === 'open' || task.state === 'needs-attention';
    const waits = movable && waitingOn(this.board.tasks, task).length ? this.notReady(task, force) : null;
    if (waits && !waits.ok) return waits;
    if (task.claim) {
      if (task.claim.agentId === agentId) return reject('bad-state', `${taskId} is already held by ${agentId}`);
      const held = this.landingHold(task, `reassigned to ${agentId}`, by);
      if (held) return held;
      this.leaveQueue(task, `reassigned to ${agentId}`, by);
      const token = this.board.nextToken;
      const deadline = this.clock.now() + leaseFor(this.board.settings, agentId);
      this.emit({
        kind: 'reassign',
        taskId,
        from: { agentId: task.claim.agentId, token: task.claim.token },
        to: { agentId, token, deadline },
        by,
      });
      if (waits) this.noteForced(taskId, agentId, waits.value);
    } else if (task.state === 'open' || task.state === 'needs-attention') {
      if (task.state === 'needs-attention') this.emit({ kind: 'reset', taskId, by });
      this.grant(taskId, agentId, by);
      if (waits) this.noteForced(taskId, agentId, waits.value);
    } else {
      return reject('bad-state', `${taskId} ${isInState(task.state)}; only open or claimed tasks can be assigned`);
    }
    return ok(this.view(this.board.tasks.get(taskId) as Task) as ClaimView);
  }

  /** A person returns a task to the backlog, ending whatever claim it has. */
  userRelease(taskId: string, by: string = USER): Result<null> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    const task = t.value;
    const held = this.landingHold(task, 'released', by);
    if (held) return held;
    if (task.claim || task.state === 'review') this.leaveQueue(task, 'released', by);
    if (task.claim) this.end(taskId, task.claim, 'user-released', 'open');
    else if (task.state === 'review') this.emit({ kind: 'returned', taskId, by, reason: 'released by a person', to: 'open' });
    else return reject('bad-state', `${taskId} ${isInState(task.state)}, not held by anyone`);
    return ok(null);
  }

  approve(taskId: string, by: string = USER): Result<null> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    const task = t.value;
    if (task.state !== 'review') return reject('bad-state', `${taskId} ${isInState(task.state)}; only a task in review can be approved`);
    if (task.claim) this.end(taskId, task.claim, 'completed', 'review');
    this.emit({ kind: 'approved', taskId, by });
    return ok(null);
  }

  /**
   * A review turned down: back to its holder, with a full lease from now (its claim was held for the person
   * while in review, so the agent gets the whole of one to act on the reason), or to the backlog when no claim
   * is left (its pane closed meanwhile). `cause`: what the merge queue found, when it sends the work back.
   */
  rejectReview(taskId: string, reason: string, by: string = USER, cause?: SendBackCause): Result<null> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    const task = t.value;
    if (task.state !== 'review') return reject('bad-state', `${taskId} ${isInState(task.state)}; only a task in review can be rejected`);
    // Checked here as well as in the window's schema: the board is where the promise lives, whoever calls it.
    if (reason.trim() === '') return reject('invalid-input', REJECT_REASON_MISSING);
    const held = this.landingHold(task, 'rejected', by);
    if (held) return held;
    // The send-back (`returned`) takes it out of the queue in the same step: its reason is the reject's.
    const c = task.claim;
    this.emit({ kind: 'note', taskId, by, text: `Review: ${reason}` });
    if (c) this.emit({ kind: 'returned', taskId, by, reason, to: 'claimed', deadline: this.clock.now() + leaseFor(this.board.settings, c.agentId), ...(cause ? { cause } : {}) });
    else this.emit({ kind: 'returned', taskId, by, reason, to: 'open', ...(cause ? { cause } : {}) });
    return ok(null);
  }

  block(taskId: string, reason: string, by: string = USER): Result<null> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    const state = (this.board.tasks.get(taskId) as Task).state;
    if (state !== 'open') return reject('bad-state', `${taskId} ${isInState(state)}; only an open task can be blocked`);
    this.emit({ kind: 'blocked', taskId, by, reason });
    return ok(null);
  }

  unblock(taskId: string, by: string = USER): Result<null> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    if (t.value.state !== 'blocked') return reject('bad-state', `${taskId} ${isInState(t.value.state)}, not blocked`);
    this.emit({ kind: 'unblocked', taskId, by });
    return ok(null);
  }

  /** A person took a task out of needs-attention; it is open again with its failure count reset. */
  reset(taskId: string, by: string = USER): Result<null> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    if (t.value.state !== 'needs-attention') return reject('bad-state', `${taskId} ${isInState(t.value.state)}, not in needs-attention`);
    this.emit({ kind: 'reset', taskId, by });
    return ok(null);
  }

  userNote(taskId: string, text: string, by: string = USER): Result<null> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    const full = this.overCap(by, text.length);
    if (full) return full;
    this.emit({ kind: 'note', taskId, by, text });
    return ok(null);
  }

  // ---------------------------------------------------------------- worktrees (host)

  /** The host made a grant's worktree; `start` is the record it starts at when the task had none yet. */
  recordWorktree(taskId: string, worktree: TaskWorktree, by: string, start?: BranchRecord): Result<null> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    this.emit({ kind: 'worktree-set', taskId, worktree, by });
    if (start && !t.value.record) this.emitRecord(taskId, null, start);
    return ok(null);
  }

  /** The task's worktree is gone: merged after approval, or removed by a person. */
  forgetWorktree(taskId: string, why: 'merged' | 'removed', by: string, path?: string): Result<null> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    if (!t.value.worktree && !t.value.parked.length) return reject('bad-state', `${taskId} has no worktree`);
    this.emit({ kind: 'worktree-removed', taskId, by, why, ...(path === undefined ? {} : { path }) });
    return ok(null);
  }

  /** Issue 47 item 5: a parked folder's uncommitted work was saved under `saved.ref` (ParkedWork), before the
   *  folder is removed: one the task has parked, or its latest while nobody holds it. */
  recordSaved(taskId: string, saved: SavedWork, by: string): Result<null> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    if (!t.value.parked.some((p) => p.path === saved.path) && t.value.worktree?.path !== saved.path) return reject('bad-state', `${taskId} has no folder ${saved.path}`);
    this.emit({ kind: 'worktree-saved', taskId, saved, by });
    return ok(null);
  }

  /** A person deleted a saved work (its ref is removed after this is on the board). */
  deleteSaved(taskId: string, ref: string, by: string = USER): Result<null> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    if (!t.value.saved?.some((w) => w.ref === ref)) return reject('bad-state', `${taskId} has no saved work ${ref}: nothing was deleted.`);
    this.emit({ kind: 'saved-work-deleted', taskId, ref, by });
    return ok(null);
  }

  /**
   * A grant whose worktree could not be made: unfenced work in the shared folder is what worktrees exist to
   * prevent, so the claim ends and the task waits, blocked with the reason, for a person to fix it. Only the
   * claim named by `token` is touched: a later claim is not this failure's business.
   */
  failWorktree(taskId: string, token: number, reason: string): Result<null> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    const c = t.value.claim;
    if (!c || c.token !== token) return reject('stale-token', `the claim ${token} on ${taskId} is over`);
    this.end(taskId, c, 'no-worktree', 'open');
    this.emit({ kind: 'blocked', taskId, by: HOST_ACTOR, reason: reason.slice(0, 4000) });
    return ok(null);
  }

  // ---------------------------------------------------------------- merge queue (issue 34)

  /**
   * Approval of a task with work to merge: it joins the merge queue at the end of the person's order, with the
   * sha `done` froze (the queue merges that and nothing else). Its approval is decided when it lands.
   */
  enqueue(taskId: string, by: string = USER, seal?: (a: SealedApproval) => string): Result<QueueEntry> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    const task = t.value;
    if (task.state !== 'review') return reject('bad-state', `${taskId} ${isInState(task.state)}; only a task in review can be approved`);
    const queue = queuedInRank(this.board.tasks);
    if (task.queued) return reject('bad-state', `${taskId} is already approved and in the merge queue (position ${queue.indexOf(task) + 1} of ${queue.length})`);
    if (queue.length >= Limits.maxQueued) return reject('bad-state', `the merge queue holds ${queue.length} tasks, its limit: let some land before approving more`);
    const rank = (queue.at(-1)?.queued?.rank ?? 0) + 1;
    const sha = (task.submitted ?? task.record)?.sha ?? null;
    // The claim that said done: in review it still holds the task, or it is the last one (ended since).
    const token = submitterToken(task);
    const host = this.here?.id ?? null;
    // Sealed over the position emit gives the event (the next after the board's), so the row holds only there.
    const sealed = seal?.({ threadId: this.board.threadId, taskId, seq: this.board.seq + 1, by, sha, token, host });
    this.emit({ kind: 'queued', taskId, by, rank, sha, token, ...(host !== null ? { host } : {}), ...(sealed ? { seal: sealed } : {}) });
    return ok((this.board.tasks.get(taskId) as Task).queued as QueueEntry);
  }

  /** Move a queued task to just before `before` (null: to the end) in the person's order. */
  moveQueued(taskId: string, before: string | null, by: string = USER): Result<string[]> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    const order = movedOrder(this.board.tasks, taskId, before);
    if (typeof order === 'string') return reject('bad-state', order);
    const now = queuedInRank(this.board.tasks).map((q) => q.id);
    if (!sameList(now, order)) this.emit({ kind: 'queue-moved', taskId, order, by });
    return ok(order);
  }

  /** The queue's runner merged the head entry onto `onto`: said on the board while its verify runs. */
  queueLanding(taskId: string, expect: LandingOf, onto: string, merge: string | null): Result<null> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    const q = t.value.queued;
    if (!q) return reject('bad-state', `${taskId} is no longer in the merge queue (taken out, sent back, reassigned or released while its merge was made): the merge is discarded`);
    const stale = staleEntry(t.value, q, expect);
    if (stale) return reject('stale-token', `${taskId}'s approval no longer stands: ${stale}. The merge is discarded`);
    this.emit({ kind: 'queue-landing', taskId, onto, merge });
    return ok(null);
  }

  /** Take a task out of the queue without landing it: it stays in review, unapproved. */
  unqueue(taskId: string, reason: string, by: string = USER, code?: 'unsealed'): Result<null> {
    const t = this.find(taskId);
    if (!t.ok) return t;
    if (!t.value.queued) return reject('bad-state', `${taskId} is not in the merge queue`);
    const held = this.landingHold(t.value, 'taken out of the queue', by);
    if (held) return held;
    this.emit({ kind: 'unqueued', taskId, by, reason, ...(code ? { code } : {}) });
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
    const f = this.find(taskId);
    if (!f.ok) return f;
    const t = f.value;
    const q = t.queued;
    if (!q) return reject('bad-state', `${taskId} is no longer in the merge queue (taken out, sent back, reassigned or released while its merge was made): the merge is discarded`);
    const stale = staleEntry(t, q, expect);
    if (stale) return reject('stale-token', `${taskId}'s approval no longer stands: ${stale}. The merge is discarded`);
    if ((q.landing?.merge ?? null) !== merge) return reject('stale-token', `${taskId}'s merge ${shortSha(merge ?? '')} is not the one the board was told of (${shortSha(q.landing?.merge ?? '')}): the merge is discarded`);
    const head = nextToLand(this.board.tasks, (x) => x.queued?.host === q.host);
    if (head?.id !== taskId) return reject('bad-state', `${taskId} is no longer the head of the merge queue (${head ? `${head.id} lands first now` : 'none can land'}): its merge is discarded and it lands in its turn`);
    if (!q.committing) this.emit({ kind: 'queue-committed', taskId, onto: q.landing?.onto ?? '', merge });
    return ok(null);
  }

  /** A take-back refused while the task's landing moves the base (queueCommit said yes): it would come too late
   *  to win, so it is not answered as if it had. The queue's own runner (the host's writers) gives it up. */
  private landingHold(task: Task, what: string, by: string): { ok: false; error: { code: RejectionCode; message: string } } | null {
    if (!task.queued?.committing || HOST_WRITERS.has(by)) return null;
    const merge = task.queued.landing?.merge;
    return reject(
      'bad-state',
      `${task.id}'s approved work is landing now (the board agreed to move the base${merge ? ` to its merge ${shortSha(merge)}` : ''}), so it cannot be ${what}: it is done in a moment; then reopen it with a new task if it needs more work`,
    );
  }

  /** A take-back of a queued task (issue 49): its entry leaves the queue in the same step, saying why, so the
   *  queue never lands work after its approval was taken back. */
  private leaveQueue(task: Task, what: string, by: string): void {
    const q = task.queued;
    if (!q) return;
    this.emit({ kind: 'unqueued', taskId: task.id, by, reason: `it was ${what}; the approval was for ${q.sha ? shortSha(q.sha) : 'its work'}${q.token ? ` under token ${q.token}` : ''}` });
  }

  // ---------------------------------------------------------------- usage (issue 47)

  /**
   * What `agentId`'s CLI spent (turns read from its own records, or `forkbench usage`): each turn attributed by
   * its time to the claim the agent held then, grouped into one `usage` event per claim; a turn id recorded
   * before for this agent is skipped (usageRecorder.ts). Changes no claim and renews nothing: spending is not a
   * write on a task, and the liveness check sees a CLI at work already. An agent's own report (`report`) is
   * held to its write quota like any of its writes; the host's readers are not.
   */
  recordUsage(agentId: string, source: UsageSource, turns: readonly UsageTurn[], limits?: readonly RateLimitReading[], window?: UsageReadWindow): Result<UsageRecorded> {
    this.sweep();
    if (source === 'report') {
      const limited = this.admit(agentId, null, 'usage', turns.reduce((n, t) => n + (typeof t?.id === 'string' ? t.id.length : 0), 0), 0);
      if (limited) return limited;
    }
    const held = this.claimsOf(agentId).flatMap((id) => {
      const c = this.board.tasks.get(id)?.claim;
      return c ? [{ taskId: id, token: c.token, from: c.grantedAtWall, to: null }] : [];
    });
    const plan = planUsage(this.board, held, { agentId, source, turns, limits, receivedAt: this.clock.wall(), window });
    if (!plan.ok) return plan;
    for (const e of plan.value.events) this.emit(e);
    return ok(plan.value.recorded);
  }

  // ---------------------------------------------------------------- internals

  private find(taskId: string): Result<Task> {
    this.sweep(); // callers then see the task as it is now, lapses included
    const t = this.board.tasks.get(taskId);
    return t ? ok(t) : reject('no-such-task', `no task ${taskId}`);
  }

  /**
   * The fence. A write lands only if the task's current claim is this agent's, carries this token (when the
   * agent names one; without it, identity alone), and has not reached its deadline.
   */
  private checkWrite(agentId: string, taskId: string, token: number | undefined, op: AgentWriteOp): Result<Claim> {
    this.sweep();
    const tok = token ?? null;
    const t = this.board.tasks.get(taskId);
    if (!t) return this.refuse(agentId, taskId, tok, op, 'no-such-task', `no task ${taskId}`);
    const c = t.claim;
    if (c && c.agentId === agentId) {
      if (token !== undefined && token !== c.token)
        return this.refuse(agentId, taskId, tok, op, 'stale-token', `token ${token} is from an earlier claim of ${taskId}; your current token is ${c.token}`);
      if (claimLapsed({ state: t.state, claim: c }, this.clock.now())) return this.refuse(agentId, taskId, tok, op, 'lapsed', `your lease on ${taskId} has lapsed`);
      return ok(c);
    }
    const last = t.lastClaim;
    if (last && last.agentId === agentId && (token === undefined || token === last.token)) {
      if (last.reason === 'lapsed')
        return this.refuse(agentId, taskId, tok, op, 'lapsed', `your lease on ${taskId} lapsed; claim it again if it is still open`);
      return this.refuse(agentId, taskId, tok, op, 'stale-token', `your claim on ${taskId} ended (${last.reason})`);
    }
    if (token !== undefined && token < this.board.nextToken && (!c || token !== c.token) && last?.agentId === agentId)
      return this.refuse(agentId, taskId, tok, op, 'stale-token', `token ${token} is from an earlier claim of ${taskId}`);
    const who = c ? `${c.agentId} holds ${taskId}` : `nobody holds ${taskId}`;
    return this.refuse(agentId, taskId, tok, op, 'not-holder', `${who}; you do not`);
  }

  /**
   * An agent's write of `chars` characters that grows the board's text by `growth`: within its quota
   * (writeQuota.ts) and the agents' share of the text cap, or refused with which limit and when to retry.
   * The person (USER) is held only to the cap. Checked before the fence, so a loop of writes to a task the
   * agent does not hold costs its quota too (each refusal is a journal line). Of a run of quota refusals only
   * the first is journaled: a loop that keeps calling adds nothing to the journal.
   */
  private admit(by: string, taskId: string | null, op: AgentWriteOp, chars: number, growth: number, token?: number): { ok: false; error: { code: RejectionCode; message: string } } | null {
    if (by === USER) return this.overCap(by, growth);
    const q = this.quota.take(by, chars);
    if (!q.ok) {
      if (q.firstRefusal) return this.refuse(by, taskId, token ?? null, op, 'rate-limited', q.message);
      return reject('rate-limited', q.message);
    }
    const full = this.overCap(by, growth);
    if (full) this.refuse(by, taskId, token ?? null, op, full.error.code, full.error.message);
    return full;
  }

  /** The text cap: the person and the host may fill the board to BoardLimits.maxTextChars, agents to
   *  BoardLimits.agentTextChars, so the person always has room left to write whatever the agents did. */
  private overCap(by: string, growth: number): { ok: false; error: { code: RejectionCode; message: string } } | null {
    if (growth <= 0) return null;
    const agent = by !== USER && !HOST_WRITERS.has(by);
    const cap = agent ? BoardLimits.agentTextChars : BoardLimits.maxTextChars;
    if (this.text + growth <= cap) return null;
    const mi = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} Mi`;
    return reject(
      'board-full',
      `the board holds ${mi(this.text)} characters of text and ${agent ? 'agents may fill it to' : 'its limit is'} ${mi(cap)}; this write would add ${growth}. Nothing was written. ` +
        (agent ? 'Ask the person to make room; waiting does not help.' : 'Shorten or empty the bodies of tasks that are done to make room.'),
    );
  }

  /**
   * Whether one more refusal of `agentId`'s may go into the journal now (its refusals' quota, as `refuse`
   * uses): asked by a keyed write whose refusal made no event of its own, before its key's line is written.
   */
  refusalJournaled(agentId: string): boolean {
    return this.quota.logRefusal(agentId);
  }

  /** Record a refused agent write (while its refusals' quota lasts) and answer it. */
  private refuse(agentId: string, taskId: string | null, token: number | null, op: AgentWriteOp, code: RejectionCode, message: string): { ok: false; error: { code: RejectionCode; message: string } } {
    if (this.quota.logRefusal(agentId)) this.emit({ kind: 'write-rejected', taskId, agentId, token, op, code, message });
    return reject(code, message);
  }

  private grant(taskId: string, agentId: string, by: string): void {
    const token = this.board.nextToken;
    // The agent's profile's lease when the Thread sets one (a person's choice from the evidence), else the Thread's.
    this.emit({ kind: 'grant', taskId, agentId, token, deadline: this.clock.now() + leaseFor(this.board.settings, agentId), by });
  }

  /** Extend a live claim to a full lease (its profile's) from now; never shortens. Returns whether it moved.
   *  `quietMs`: how long the agent had been quiet, when the liveness check renews it (leaseEvidence.ts). */
  private extend(taskId: string, c: Claim, via: RenewVia, quietMs?: number): boolean {
    const deadline = this.clock.now() + leaseFor(this.board.settings, c.agentId);
    if (deadline <= c.deadline) return false;
    this.emit({ kind: 'renew', taskId, agentId: c.agentId, token: c.token, deadline, via, ...(quietMs === undefined ? {} : { quietMs: Math.max(0, Math.round(quietMs)) }) });
    return true;
  }

  private end(taskId: string, c: Claim, reason: ClaimEndReason, to: TaskState): void {
    this.emit({ kind: 'claim-ended', taskId, agentId: c.agentId, token: c.token, reason, to });
  }

  private emit(body: BoardEventBody | DispatchEventBody | CarryEventBody | UsageEventBody | BudgetEventBody | ParkedEventBody): void {
    // Stamped in place: the body is built by the caller for this event alone, and a spread copy of a
    // dozen event shapes was the single largest cost of a renewal.
    const e = body as BoardEvent & { seq: number; at: number; mono: number };
    e.seq = this.board.seq + 1;
    e.at = this.clock.wall();
    e.mono = this.clock.now();
    this.take(e);
  }

  /**
   * Move the board past position `seq` unchanged: what the store holds there was set aside, not applied
   * (storedEvents.ts). The next event, this engine's or another host's, takes the position after it.
   */
  passOver(seq: number): void {
    if (seq <= this.board.seq) throw new Error(`position ${seq} is not after the board's ${this.board.seq}`);
    this.board.seq = seq;
  }

  /**
   * Apply an event another host decided on a shared board, in its place in the board's one order: the
   * same reducer and indexes as this engine's own decisions, so both hosts hold one board.
   */
  follow(e: BoardEvent): void {
    if (e.seq !== this.board.seq + 1) throw new Error(`board event ${e.seq} follows ${this.board.seq}: the log has a gap`);
    this.take(e);
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
    if (before === undefined || before.state !== t.state || before.after !== t.after || before.for !== t.for) this.takers.update(taskId, before, before !== undefined && before.for !== t.for);
    const was = before?.claim;
    const is = t.claim;
    if (was?.agentId !== is?.agentId) this.heldBy.set(taskId, is ? is.agentId : null);
    // Only a claim that counts down is in the deadline queue: one in review is held for the person (leaseRuns).
    const ran = !!was && leaseRuns(before as Task);
    if (is && leaseRuns(t)) {
      if (!ran || is.deadline !== was?.deadline || is.token !== was?.token) this.deadlines.set(taskId, is.deadline);
    } else if (ran) {
      this.deadlines.delete(taskId);
    }
  }
}

/** The token of the claim whose done froze the task's work in review: it still holds the task, or it is the
 *  last claim (ended since; in review no other claim can start). */
export function submitterToken(t: Task): number | null {
  return t.claim?.token ?? t.lastClaim?.token ?? null;
}

/** Why the queue entry `q` of `t` is no longer the approval `expect` the runner merged, or null when it is. */
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
