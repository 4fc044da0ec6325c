import type { BoardEvent } from '../../src-shared/board/events.js';
import { ok, type Result } from '../../src-shared/board/result.js';
import { USER, type Task } from '../../src-shared/board/model.js';
import { taskDetails, windowBoard, windowLogEvent, windowTask } from '../../src-shared/board/windowBoard.js';
import type { CompactTask } from '../../src-shared/board/serialized.js';
import { EventPageLimits } from '../../src-shared/board/eventPage.js';
import { DisposableStore, type IDisposable } from '../../src-shared/lifecycle/disposableStore.js';
import { type BoardStoreView, type KeyedWindowMethod, type ThreadSnapshot, type ThreadSummary, type WindowParams as P, type WindowPush, type WindowResult as R } from '../../src-shared/protocol/windowApi.js';
import { PROFILE_IDS } from '../../src-shared/agents/profileIds.js';
import type { LeaseEngine } from '../board/leaseEngine.js';
import type { WriteKey } from '../board/boardService.js';
import { requestHash } from '../board/writeKeys.js';
import { keyedWrite } from '../board/keyedWrite.js';
import { PROFILES } from '../agents/profiles.js';
import { Refusal, unwrap } from '../base/procedureServer.js';
import type { InstalledProfiles } from './installedProfiles.js';
import type { ThreadHost } from '../thread/threadHost.js';
import { taskCost, threadCost, threadCsv } from '../board/costReads.js';
import { taskCostCsv } from '../../src-shared/usage/costView.js';

/** Events a window gets with its snapshot: enough to fill the log panel without reading the whole history. */
const LOG_TAIL = 300;
/** A task's history as a window shows it: its latest events, enough for a task reworked many times. */
const TASK_HISTORY_LIMIT = 500;

/** The events about `taskId`, oldest first, without renewals (a live claim renews every ~30 s, and a
 *  history of renewals hides what happened), the newest TASK_HISTORY_LIMIT of them. */
function taskHistory(log: readonly BoardEvent[], taskId: string): BoardEvent[] {
  const mine = log.filter((e) => e.kind !== 'renew' && 'taskId' in e && e.taskId === taskId);
  return mine.slice(-TASK_HISTORY_LIMIT);
}

/** A task as the window's answer carries it: as its snapshot does (no notes, the body's start), so a key's
 *  stored outcome stays small however many notes the task has (writeKeys.ts bounds its strings only). */
const asWindowTask = (r: Result<Task>): Result<CompactTask> => (r.ok ? { ok: true, value: windowTask(r.value) } : r);

/**
 * The window's one door into a Thread: one method per window procedure (its validated params, plus the
 * window's `consumer` where flow control needs it), and the few questions the host process asks of a Thread
 * (is any agent running, grace on resume, the pushes its windows hear). The rules a window's request is held
 * to live here, not in the router. On the window's side (router, ThreadManager, the host process, serve,
 * Electron) this is the only file that reaches into a Thread's rooms (the board, the panes, the worktrees,
 * the registry): when a room is renamed or split, this is what changes.
 */
export class ThreadApi {
  constructor(
    private readonly host: ThreadHost,
    private readonly installed: InstalledProfiles,
    /** Where the Thread's board is, as windows may see it (ThreadManager chose the store it opened on). */
    readonly store: BoardStoreView,
  ) {}

  get key(): string {
    return this.host.key;
  }

  get folder(): string {
    return this.host.folder;
  }

  get goal(): string {
    return this.host.board.state.goal;
  }

  summary(): ThreadSummary {
    return { key: this.key, folder: this.folder, goal: this.goal, open: true };
  }

  snapshot(): ThreadSnapshot {
    const h = this.host;
    return {
      key: h.key,
      folder: h.folder,
      board: windowBoard(h.board.state),
      boardNow: h.board.clock.now(),
      agents: h.roster.agents(),
      log: h.board.logTail(LOG_TAIL).map(windowLogEvent),
      profiles: PROFILE_IDS.map((id) => ({ id, label: PROFILES[id].label, available: this.installed.has(id) })),
      git: h.worktrees.isolation(),
      notices: h.notices.current(),
      store: this.store,
    };
  }

  /** A window asks to raise a notice's OS notification: yes for the first to ask, once per notice. */
  claimNotice(p: P<'notice.claim'>): R<'notice.claim'> {
    return this.host.notices.claim(p.id);
  }

  // The board: a person's decisions, each the engine's to accept or refuse.

  setGoal(p: P<'board.setGoal'>): Promise<R<'board.setGoal'>> {
    return this.decide('board.setGoal', p, (e) => e.setGoal(p.goal));
  }

  setSettings(p: P<'board.setSettings'>): Promise<R<'board.setSettings'>> {
    return this.decide('board.setSettings', p, (e) => e.setSettings(p.patch));
  }

  addTask(p: P<'task.add'>): Promise<R<'task.add'>> {
    return this.decide('task.add', p, (e) => asWindowTask(e.addTask({ title: p.title, body: p.body, verify: p.verify }, USER, p.after)));
  }

  editTask(p: P<'task.edit'>): Promise<R<'task.edit'>> {
    return this.decide('task.edit', p, (e) => asWindowTask(e.editTask(p.taskId, { title: p.title, body: p.body, verify: p.verify }, USER, p.after)));
  }

  setTakers(p: P<'task.setTakers'>): Promise<R<'task.setTakers'>> {
    return this.decide('task.setTakers', p, (e) => asWindowTask(e.setTakers(p.taskId, p.for, USER)));
  }

  /** A person sets an agent's dispatch: one of this Thread's agents (here or, on a shared board, a peer's). */
  setAgentDispatch(p: P<'agent.setDispatch'>): Promise<R<'agent.setDispatch'>> {
    return this.decide('agent.setDispatch', p, (e) => e.setAgentDispatch(p.agentId, p.mode, p.labels, USER), () => {
      if (!this.host.roster.agent(p.agentId) && !this.host.roster.isPeer(p.agentId)) throw new Refusal('no-such-agent', `no agent ${p.agentId} in this Thread`);
    });
  }

  noteTask(p: P<'task.note'>): Promise<R<'task.note'>> {
    return this.decide('task.note', p, (e) => e.userNote(p.taskId, p.text));
  }

  /** Only an agent whose process runs may be handed a task: an exited one would hold it until it lapsed. A
   *  retried drag whose agent has exited since still gets its first outcome: the check comes after the key's.
   *  On a shared board, an agent another live host runs may be handed one too: that host types it in. */
  assignTask(p: P<'task.assign'>): Promise<R<'task.assign'>> {
    return this.decide('task.assign', p, (e) => e.assign(p.taskId, p.agentId, USER, p.force === true), () => {
      if (!this.host.roster.isRunning(p.agentId) && !this.host.roster.isPeer(p.agentId)) throw new Refusal('no-such-agent', `agent ${p.agentId} is not running`);
    });
  }

  releaseTask(p: P<'task.release'>): Promise<R<'task.release'>> {
    return this.decide('task.release', p, (e) => e.userRelease(p.taskId));
  }

  async approveTask(p: P<'task.approve'>): Promise<R<'task.approve'>> {
    // A window answers once the task is queued: a verify of the merge may take minutes, and the queue panel and
    // the card show how it goes (landed, or sent back with the reason).
    // `seen`: the commit the person's review dialog showed; the host approves only that (issue 45).
    await this.host.worktrees.approve(p.taskId, USER, this.writeKeyOf('task.approve', p), { wait: false, ...(p.seen ? { seen: p.seen } : {}) });
    return null;
  }

  rejectTask(p: P<'task.reject'>): Promise<R<'task.reject'>> {
    return this.decide('task.reject', p, (e) => e.rejectReview(p.taskId, p.reason));
  }

  blockTask(p: P<'task.block'>): Promise<R<'task.block'>> {
    return this.decide('task.block', p, (e) => e.block(p.taskId, p.reason));
  }

  unblockTask(p: P<'task.unblock'>): Promise<R<'task.unblock'>> {
    return this.decide('task.unblock', p, (e) => e.unblock(p.taskId));
  }

  moveQueued(p: P<'queue.move'>): Promise<R<'queue.move'>> {
    return this.decide('queue.move', p, (e) => {
      const r = e.moveQueued(p.taskId, p.before);
      return r.ok ? ok(null) : r;
    });
  }

  removeQueued(p: P<'queue.remove'>): Promise<R<'queue.remove'>> {
    return this.decide('queue.remove', p, (e) => e.unqueue(p.taskId, 'taken out by a person: it stays in review'));
  }

  // What agents spent (issue 47): budgets are the person's, the reads every surface's (costReads.ts).

  setBudget(p: P<'budget.set'>): Promise<R<'budget.set'>> {
    return this.decide('budget.set', p, (e) => e.setBudget(p.taskId, p.budget));
  }

  threadCost(): R<'cost.thread'> {
    return threadCost(this.host.board);
  }

  async taskCost(p: P<'cost.task'>): Promise<R<'cost.task'>> {
    return unwrap(await taskCost(this.host.board, p.taskId));
  }

  async costCsv(p: P<'cost.csv'>): Promise<R<'cost.csv'>> {
    if (p.taskId === undefined) return threadCsv(this.host.board);
    return taskCostCsv(unwrap(await taskCost(this.host.board, p.taskId)));
  }

  resetTask(p: P<'task.reset'>): Promise<R<'task.reset'>> {
    return this.decide('task.reset', p, (e) => e.reset(p.taskId));
  }

  taskDiff(p: P<'task.diff'>): Promise<R<'task.diff'>> {
    return this.host.worktrees.require().review.diff(p.taskId);
  }

  taskDetails(p: P<'task.details'>): R<'task.details'> {
    const t = this.host.board.state.tasks.get(p.taskId);
    if (!t) throw new Refusal('no-such-task', `no task ${p.taskId}`);
    return taskDetails(t);
  }

  async taskHistory(p: P<'task.history'>): Promise<R<'task.history'>> {
    return taskHistory(await this.host.board.taskLog(p.taskId), p.taskId);
  }

  /** A page of the board's history for the log panel, each event clipped as the snapshot's are. */
  async events(p: P<'board.events'>): Promise<R<'board.events'>> {
    const page = await this.host.board.history({ before: p.before, limit: p.limit ?? EventPageLimits.maxEvents, taskId: p.taskId });
    return { ...page, events: page.events.map(windowLogEvent) };
  }

  async listWorktrees(): Promise<R<'worktree.list'>> {
    return (await this.host.worktrees.git?.folders.list()) ?? [];
  }

  async removeWorktree(p: P<'worktree.remove'>): Promise<R<'worktree.remove'>> {
    await this.host.worktrees.require().folders.remove(p.taskId, p.force);
    return null;
  }

  async otherFolders(): Promise<R<'worktree.others'>> {
    return (await this.host.worktrees.git?.folders.others()) ?? [];
  }

  async clearFolder(p: P<'worktree.clear'>): Promise<R<'worktree.clear'>> {
    await this.host.worktrees.require().folders.clear(p.path, p.force);
    return null;
  }

  async restoreSaved(p: P<'worktree.restoreSaved'>): Promise<R<'worktree.restoreSaved'>> {
    return { path: await this.host.worktrees.require().parked.restore(p.taskId, p.ref) };
  }

  async deleteSaved(p: P<'worktree.deleteSaved'>): Promise<R<'worktree.deleteSaved'>> {
    await this.host.worktrees.require().parked.delete(p.taskId, p.ref, USER);
    return null;
  }

  // The agents: their panes, and the window's part in pacing their output.

  /** A custom agent is its command line: without one there is nothing to run. */
  launchAgent(p: P<'agent.launch'>): Promise<R<'agent.launch'>> {
    if (p.profile === 'custom' && !p.command) throw new Refusal('invalid-input', 'a custom agent needs a command line');
    return this.host.roster.launch(p.profile, { cols: p.cols, rows: p.rows, command: p.command });
  }

  async closeAgent(p: P<'agent.close'>): Promise<R<'agent.close'>> {
    await this.host.roster.close(p.agentId);
    return null;
  }

  relaunchAgent(p: P<'agent.relaunch'>): Promise<R<'agent.relaunch'>> {
    return this.host.roster.relaunch(p.agentId);
  }

  /** The window already shows this agent's terminal (it asks no new screen): it paces the new pty from now on. */
  async resumeAgent(p: P<'agent.resume'>, consumer: string): Promise<R<'agent.resume'>> {
    const roster = this.host.roster;
    const a = await roster.resume(p.agentId);
    roster.get(a.id)?.session.attach(consumer);
    return a;
  }

  input(p: P<'agent.input'>): R<'agent.input'> {
    this.host.roster.relay.input(p.agentId, p.data);
    return null;
  }

  resize(p: P<'agent.resize'>): R<'agent.resize'> {
    this.host.roster.relay.resize(p.agentId, p.cols, p.rows);
    return null;
  }

  ack(p: P<'agent.ack'>, consumer: string): R<'agent.ack'> {
    this.host.roster.get(p.agentId)?.session.ack(p.chars, consumer);
    return null;
  }

  /** From now on this window consumes the pane's output and its acks pace the pty. It starts afresh: a
   *  reloaded page (same consumer in Electron) will never ack what its previous incarnation was sent. */
  screen(p: P<'agent.screen'>, consumer: string): Promise<R<'agent.screen'>> {
    const roster = this.host.roster;
    const session = roster.get(p.agentId)?.session;
    session?.detach(consumer);
    session?.attach(consumer);
    return roster.relay.screen(p.agentId);
  }

  detach(p: P<'agent.detach'>, consumer: string): R<'agent.detach'> {
    this.host.roster.get(p.agentId)?.session.detach(consumer);
    return null;
  }

  // What the host process asks of the Thread.

  /** A window stopped showing this Thread (it switched, closed, or its page crashed): no pane waits on its acks. */
  detachEverywhere(consumer: string): void {
    this.host.roster.relay.detachEverywhere(consumer);
  }

  /** Agents whose processes still run: what quitting would end. */
  runningAgents(): number {
    return this.host.roster.agents().filter((a) => a.status !== 'exited').length;
  }

  /** The machine woke up: live agents' claims get a fresh lease before the liveness check judges them. */
  async resumeGrace(): Promise<void> {
    const h = this.host;
    await h.board.resumeGrace((id) => h.roster.isRunning(id));
  }

  /** The Thread's happenings as the pushes its windows hear: board events, notices, pane output, the agent list. */
  pushes(fire: (push: WindowPush) => void): IDisposable {
    const { key, host } = this;
    const store = new DisposableStore();
    store.add(host.onBoardEvent.event((event: BoardEvent) => fire({ type: 'board-event', key, event })));
    // Waiting, finished, lapsed, exited, read-only: every notice is the Thread's own (threadNotices.ts).
    store.add(host.notices.onPush.event(fire));
    store.add(host.roster.relay.onData.event(({ agentId, data }) => fire({ type: 'pane-data', key, agentId, data })));
    store.add(host.roster.onAgents.event((agents) => fire({ type: 'agents', key, agents })));
    return store;
  }

  /**
   * A person's board write, under its idempotency key when the window sent one: a retry of it (the page's
   * connection went before the answer) is answered with the first outcome. Every window of the host is one
   * person, so the keys are the person's (USER: never an agent's id); the page makes a random one per action.
   */
  private async decide<M extends KeyedWindowMethod, T>(method: M, p: P<M>, op: (e: LeaseEngine) => Result<T>, check?: () => void): Promise<T> {
    // A check outside the engine's rules comes after the key's record, so a retry gets its first outcome.
    return unwrap((await keyedWrite(this.host.board, this.writeKeyOf(method, p), op, (v: T) => v, check)).result);
  }

  private writeKeyOf<M extends KeyedWindowMethod>(method: M, p: P<M>): WriteKey | undefined {
    const { writeKey, ...request } = p;
    return writeKey === undefined ? undefined : { agentId: USER, key: writeKey, hash: requestHash(method, request) };
  }
}
