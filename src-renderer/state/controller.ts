import type { NotifyPermission } from '../notifications.js';
import type { PaneHost } from '../terminal/paneHost.js';
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { USER } from '../../src-shared/board/model.js';
import { DisposableStore, type TimerHandle } from '../../src-shared/lifecycle/disposableStore.js';
import type { Board } from '../../src-shared/board/reducer.js';
import type {
  AgentInfo,
  GitIsolation,
  ProfileIdShared,
  TaskDiff,
  ThreadSnapshot,
  ThreadSummary,
  WindowError,
  WindowMethod,
  WindowParams,
  WindowPush,
  WindowResult,
  WorktreeInfo,
} from '../../src-shared/protocol/windowApi.js';
import { HostCallError, toWindowError, type ConnectionState, type Transport } from '../transport/types.js';
import { AckBatcher } from '../terminal/ackBatcher.js';
import {
  applyLiveEvent,
  boardFromSnapshot,
  computeAgentClaims,
  computeColumns,
  EMPTY_COLUMNS,
  NO_CLAIMS,
  updateIndex,
  type AgentClaims,
  type Columns,
} from './boardState.js';
import { appendLog, toLogEntry, type LogEntry } from './eventLog.js';
import { changesWorktrees } from './gitView.js';
import { HostClock } from './hostClock.js';

export interface Banner {
  readonly id: number;
  readonly code: string;
  readonly message: string;
  /** What the person was doing, e.g. "approve T-3". */
  readonly action: string;
}

export interface Toast {
  readonly id: number;
  readonly title: string;
  readonly body: string;
}


export interface AppState {
  connection: ConnectionState;
  threads: readonly ThreadSummary[];
  threadsLoaded: boolean;
  /** The Thread on screen, or null while choosing one. */
  activeKey: string | null;
  folder: string;
  profiles: ThreadSnapshot['profiles'];
  /** The renderer's copy of the board. The shared reducer mutates it in place (task objects themselves are
   *  replaced, never mutated); `boardVersion` changes whenever it does, so selectors re-run. */
  board: Board | null;
  boardVersion: number;
  goal: string;
  leaseMs: number;
  /** Task ids per column in display order, kept up to date per event (only the changed columns get new arrays). */
  columns: Columns;
  /** Task ids each agent holds a claim on, kept up to date per event (grant, claim end, reassign, return). */
  agentClaims: AgentClaims;
  agentIds: readonly string[];
  agents: Readonly<Record<string, AgentInfo>>;
  activeAgentId: string | null;
  log: readonly LogEntry[];
  errors: readonly Banner[];
  toasts: readonly Toast[];
  notifyPermission: NotifyPermission;
  /** Whether claims in this Thread get git worktrees; null until the snapshot says (or from a host that does not). */
  git: GitIsolation | null;
  /** The Worktrees panel: open or not, and the host's list (null until fetched). Fetched only while open. */
  worktreesOpen: boolean;
  worktrees: readonly WorktreeInfo[] | null;
  /** The task whose diff the review dialog shows. */
  reviewTaskId: string | null;
}

/** What removing a worktree came to: `confirm` carries the host's warning about work that would be lost. */
export type RemoveOutcome = { kind: 'removed' } | { kind: 'failed' } | { kind: 'confirm'; message: string };


export interface ControllerOptions {
  panes?: PaneHost;
  /** Show a system notification; false if it could not (no permission): a toast is shown instead. */
  systemNotify?: (title: string, body: string) => boolean;
  notifyPermission?: () => NotifyPermission;
  requestNotifyPermission?: () => Promise<NotifyPermission>;
  clock?: HostClock;
  /** The Thread this window is for (Electron opens one window per Thread with `?thread=KEY`). */
  initialThread?: string | null;
  /** How long a toast stays (ms). */
  toastMs?: number;
  setTimeout?: (f: () => void, ms: number) => unknown;
  clearTimeout?: (handle: unknown) => void;
}

export const NoticeConstants = {
  /** The same notice (same task lapsing, same agent exiting) is not repeated within this window. */
  dedupeMs: 2_000,
  /** How long an in-page toast stays. */
  toastMs: 8_000,
} as const;

/** Banners kept at once: older ones drop off so a storm of errors cannot bury the page. */
const MAX_BANNERS = 5;
const MAX_TOASTS = 5;

const nullPanes: PaneHost = {
  setThread: () => undefined,
  sync: () => undefined,
  data: () => false,
  preferredSize: () => ({ cols: 100, rows: 30 }),
};

/** The part of the state that belongs to the Thread on screen: empty before one loads, and on a switch. */
function noThreadShown(): Pick<AppState, 'board' | 'columns' | 'agentClaims' | 'agentIds' | 'agents' | 'activeAgentId' | 'log' | 'git' | 'worktreesOpen' | 'worktrees' | 'reviewTaskId'> {
  return { board: null, columns: EMPTY_COLUMNS, agentClaims: NO_CLAIMS, agentIds: [], agents: {}, activeAgentId: null, log: [], git: null, worktreesOpen: false, worktrees: null, reviewTaskId: null };
}

export function initialState(): AppState {
  return {
    connection: 'connecting',
    threads: [],
    threadsLoaded: false,
    activeKey: null,
    folder: '',
    profiles: [],
    ...noThreadShown(),
    boardVersion: 0,
    goal: '',
    leaseMs: 0,
    errors: [],
    toasts: [],
    notifyPermission: 'unsupported',
  };
}

/**
 * The renderer's state and every action a person can take. Pushes from the host come in through
 * `onPush`; the store holds only what components draw. Pane output never enters the store (it goes
 * straight to the PaneHost), and countdowns are computed by the components that show them from
 * deadlines + `clock`, so neither a busy terminal nor a ticking lease re-renders anything else.
 */
export class AppController {
  readonly store: StoreApi<AppState>;
  readonly clock: HostClock;
  private readonly panes: PaneHost;
  private loading: { key: string; buffered: BoardEvent[] } | null = null;
  private nextBannerId = 1;
  private readonly backgroundAcks = new Map<string, AckBatcher>();
  private readonly recentNotices = new Map<string, number>();
  /** Names of every agent seen in this window, so log lines about a closed agent still read "shell 2". */
  private readonly knownNames = new Map<string, string>();
  /** Everything this controller owns that outlives a call: the transport subscriptions, the own-notice
   *  delays and the toast timers. Disposed once, by dispose(). */
  private readonly disposables: DisposableStore;
  private started = false;
  /** The "exactly one open Thread: show it" shortcut is taken once, never again after a person chose. */
  private autoOpened = false;
  /** The worktree list being fetched; `again` asks for one more fetch after it, for events that came meanwhile. */
  private worktreeFetch: { key: string; again: boolean } | null = null;

  constructor(
    readonly transport: Transport,
    private readonly opts: ControllerOptions = {},
  ) {
    this.panes = opts.panes ?? nullPanes;
    this.disposables = new DisposableStore({
      setTimeout: opts.setTimeout ?? ((f, ms) => setTimeout(f, ms)),
      clearTimeout: opts.clearTimeout ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>)),
    });
    this.clock = opts.clock ?? new HostClock();
    this.store = createStore<AppState>(() => ({
      ...initialState(),
      connection: transport.state,
      notifyPermission: opts.notifyPermission?.() ?? 'unsupported',
    }));
  }

  get state(): AppState {
    return this.store.getState();
  }

  start(): void {
    if (this.started || this.disposables.isDisposed) return;
    this.started = true;
    this.disposables.addListener(this.transport.subscribe((p) => this.onPush(p)));
    this.disposables.addListener(
      this.transport.onState((s) => {
        this.store.setState({ connection: s });
        if (s === 'connected') void this.onConnected();
      }),
    );
    if (this.transport.state === 'connected') void this.onConnected();
  }

  /** The window is going away: no more pushes, and no notice or toast timer fires after this. */
  dispose(): void {
    this.disposables.dispose();
  }

  // ------------------------------------------------------------------ connection and threads

  /**
   * (Re)connected: everything pushed while away is lost, so fetch it all again. When the Thread to show is
   * already known (a reconnect, or a window opened for one: Electron's, or a reloaded tab that showed one),
   * its snapshot is asked for together with the Thread list, not after it: one round trip to a drawn board
   * instead of two, and the page is waiting rather than busy drawing the list when the snapshot comes.
   */
  private async onConnected(): Promise<void> {
    for (const b of this.backgroundAcks.values()) b.reset();
    const active = this.state.activeKey;
    if (active) {
      await Promise.all([this.refreshThreads(), this.loadThread(active, true)]);
      return;
    }
    const wanted = this.autoOpened ? null : (this.opts.initialThread ?? null);
    if (!wanted) {
      await this.refreshThreads();
      this.maybeAutoOpen();
      return;
    }
    this.autoOpened = true;
    const [, shown] = await Promise.all([this.refreshThreads(), this.loadThread(wanted, false, true)]);
    if (shown || this.state.activeKey !== null) return;
    // Not open on the host (it restarted, or the Thread was shut): open it from its folder if the list knows
    // it; if not even that, the window is as if it had not asked for one.
    const t = this.state.threads.find((x) => x.key === wanted);
    if (t && !t.open) {
      await this.openFolder(t.folder);
      return;
    }
    this.autoOpened = false;
    this.maybeAutoOpen();
  }

  async refreshThreads(): Promise<void> {
    const threads = await this.run('threads.list', {}, 'list threads');
    if (threads) this.store.setState({ threads, threadsLoaded: true });
  }

  /** If exactly one Thread is open on the host, there is nothing to choose: show it. */
  private maybeAutoOpen(): void {
    if (this.autoOpened || this.state.activeKey) return;
    const open = this.state.threads.filter((t) => t.open);
    if (open.length === 1 && open[0]) {
      this.autoOpened = true;
      void this.loadThread(open[0].key);
    }
  }

  /** "Open folder": the host opens (or finds) the Thread for it, then it is shown. */
  async openFolder(folder: string): Promise<boolean> {
    const f = folder.trim();
    if (!f) return false;
    const summary = await this.run('threads.open', { folder: f }, `open ${f}`);
    if (!summary) return false;
    this.upsertThread(summary);
    await this.loadThread(summary.key);
    return true;
  }

  /** Pick a Thread from the list; one that is not open on the host is opened first. */
  async selectThread(t: ThreadSummary): Promise<void> {
    if (t.open) await this.loadThread(t.key);
    else await this.openFolder(t.folder);
  }

  private upsertThread(t: ThreadSummary): void {
    const threads = this.state.threads.filter((x) => x.key !== t.key);
    this.store.setState({ threads: [...threads, t] });
  }

  /**
   * Fetch a Thread's snapshot and show it; false if it was not shown. Events that arrive meanwhile are
   * buffered and applied after. `tentative`: the Thread may not be open on the host (a remembered one); if
   * so nothing is said and nothing stays shown, and the caller decides what to do.
   */
  async loadThread(key: string, reconnect = false, tentative = false): Promise<boolean> {
    const switching = this.state.activeKey !== key;
    this.loading = { key, buffered: [] };
    if (switching) {
      this.store.setState({ activeKey: key, ...noThreadShown() });
      this.panes.setThread(key);
    }
    let snap: ThreadSnapshot | null = null;
    let notOpen = false;
    try {
      snap = await this.transport.call('thread.snapshot', { key });
    } catch (err) {
      notOpen = tentative && err instanceof HostCallError && err.code === 'no-such-thread';
      if (!notOpen) this.showError('load the thread', err);
    }
    if (this.loading?.key !== key) return false; // superseded by another load
    const buffered = this.loading.buffered;
    this.loading = null;
    if (notOpen && this.state.activeKey === key) {
      this.store.setState({ activeKey: null });
      this.panes.setThread(null);
    }
    if (!snap) return false;
    this.clock.reset(snap.boardNow);
    const board = boardFromSnapshot(snap.board);
    const agents = Object.fromEntries(snap.agents.map((a) => [a.id, a]));
    for (const a of snap.agents) this.knownNames.set(a.id, a.name);
    const name = (id: string) => this.agentName(id);
    const live: LogEntry[] = [];
    for (const e of buffered) {
      const r = applyLiveEvent(board, e);
      if (r === 'applied') {
        this.clock.observe(e.mono);
        live.push(toLogEntry(e, name));
      }
    }
    const prevActive = this.state.activeAgentId;
    // Panes first, so a component rendering the new agent list finds its terminal.
    this.panes.setThread(key);
    this.panes.sync(snap.agents.map((a) => a.id), reconnect);
    this.store.setState({
      activeKey: key,
      folder: snap.folder,
      profiles: snap.profiles,
      board,
      boardVersion: this.state.boardVersion + 1,
      goal: board.goal,
      leaseMs: board.settings.leaseMs,
      columns: computeColumns(board, this.state.columns),
      agentClaims: computeAgentClaims(board, this.state.agentClaims),
      agentIds: snap.agents.map((a) => a.id),
      agents,
      activeAgentId: pickActive(prevActive, snap.agents),
      log: appendLog(
        snap.log.map((e) => toLogEntry(e, name)),
        live,
      ),
      git: snap.git ?? null,
    });
    // Events pushed while away may have made or removed worktrees.
    if (this.state.worktreesOpen) void this.refreshWorktrees();
    return true;
  }

  // ------------------------------------------------------------------ pushes

  onPush(p: WindowPush): void {
    switch (p.type) {
      case 'board-event':
        return this.onBoardEvent(p.key, p.event);
      case 'pane-data':
        if (p.key !== this.state.activeKey || !this.panes.data(p.agentId, p.data)) this.ackUnshown(p.key, p.agentId, p.data.length);
        return;
      case 'agents':
        return this.onAgents(p.key, p.agents);
      case 'notify':
        return this.notify(p.title, p.body, p.about);
    }
  }

  private onBoardEvent(key: string, e: BoardEvent): void {
    if (key !== this.state.activeKey) {
      if (e.kind === 'goal-set') this.patchThread(key, { goal: e.goal });
      return;
    }
    if (this.loading?.key === key) {
      this.loading.buffered.push(e);
      return;
    }
    const board = this.state.board;
    if (!board) return;
    const baseBefore = board.settings.baseBranch;
    // Every event changes at most the one task it names (the reducer replaces that task's object): its
    // before/after say which column and which agent's claims changed, without scanning the board.
    const taskId = 'taskId' in e ? e.taskId : null;
    const before = taskId ? board.tasks.get(taskId) : undefined;
    const r = applyLiveEvent(board, e);
    if (r === 'duplicate') return;
    if (r !== 'applied') {
      // A lost push or a board that diverged: the snapshot is the truth.
      void this.loadThread(key, true);
      return;
    }
    this.clock.observe(e.mono);
    const s = this.state;
    const patch: Partial<AppState> = {
      boardVersion: s.boardVersion + 1,
      log: appendLog(s.log, [toLogEntry(e, (id) => this.agentName(id))]),
    };
    if (e.kind === 'thread-created') {
      patch.columns = computeColumns(board, s.columns);
      patch.agentClaims = computeAgentClaims(board, s.agentClaims);
    } else if (taskId) {
      const index = { columns: s.columns, agentClaims: s.agentClaims };
      const next = updateIndex(index, taskId, before, board.tasks.get(taskId));
      if (next.columns !== index.columns) patch.columns = next.columns;
      if (next.agentClaims !== index.agentClaims) patch.agentClaims = next.agentClaims;
    }
    if (e.kind === 'goal-set') {
      patch.goal = e.goal;
      this.patchThread(key, { goal: e.goal });
    }
    if (e.kind === 'settings-set' || e.kind === 'thread-created') patch.leaseMs = board.settings.leaseMs;
    this.store.setState(patch);
    // A new base branch changes what the git line says; null means "the folder's current branch", which only
    // the host knows, so its snapshot is read again for that (a settings change is rare).
    if (e.kind === 'settings-set' && e.settings.baseBranch !== baseBefore) void this.refreshGit(key);
    if (changesWorktrees(e.kind) && s.worktreesOpen) void this.refreshWorktrees();
  }

  private async refreshGit(key: string): Promise<void> {
    const snap = await this.run('thread.snapshot', { key }, 'read the git setup');
    if (snap && this.state.activeKey === key) this.store.setState({ git: snap.git ?? null });
  }

  private onAgents(key: string, list: AgentInfo[]): void {
    if (key !== this.state.activeKey || this.loading?.key === key) return;
    this.setAgents(list);
  }

  private setAgents(list: readonly AgentInfo[]): void {
    for (const a of list) this.knownNames.set(a.id, a.name);
    const agents = Object.fromEntries(list.map((a) => [a.id, a]));
    // Keep unchanged AgentInfo objects identical, so a tab whose agent did not change does not re-render.
    const old = this.state.agents;
    for (const a of list) {
      const o = old[a.id];
      if (o && sameAgent(o, a)) agents[a.id] = o;
    }
    const ids = list.map((a) => a.id);
    const sameIds = ids.length === this.state.agentIds.length && ids.every((id, i) => this.state.agentIds[i] === id);
    if (!sameIds) this.panes.sync(ids, false);
    this.store.setState({
      agents,
      agentIds: sameIds ? this.state.agentIds : ids,
      activeAgentId: pickActive(this.state.activeAgentId, list),
    });
  }

  /** Output for a pane nobody shows (another Thread, an agent not known yet): acked, or the host would
   *  hold that pane paused waiting for this window. */
  private ackUnshown(key: string, agentId: string, chars: number): void {
    const id = `${key}\n${agentId}`;
    let b = this.backgroundAcks.get(id);
    if (!b) {
      b = new AckBatcher((n) => void this.transport.call('agent.ack', { key, agentId, chars: n }).catch(() => undefined));
      this.backgroundAcks.set(id, b);
    }
    b.parsed(chars);
  }

  private patchThread(key: string, patch: Partial<ThreadSummary>): void {
    const threads = this.state.threads;
    if (!threads.some((t) => t.key === key)) return;
    this.store.setState({ threads: threads.map((t) => (t.key === key ? { ...t, ...patch } : t)) });
  }

  agentName(id: string): string {
    if (id === USER) return 'you';
    return this.state.agents[id]?.name ?? this.knownNames.get(id) ?? id;
  }

  // ------------------------------------------------------------------ notifications, banners

  /** A notice pushed by the host, its one source (src-shared/notices): shown at once. */
  notify(title: string, body: string, about: string): void {
    this.showNotice(about, title, body);
  }

  /** A system notification if allowed, else an in-page toast; the same notice at most once per window. */
  private showNotice(key: string, title: string, body: string): void {
    const now = Date.now();
    const last = this.recentNotices.get(key);
    if (last !== undefined && now - last < NoticeConstants.dedupeMs) return;
    this.recentNotices.set(key, now);
    if (this.recentNotices.size > 200) this.recentNotices.clear();
    if (this.opts.systemNotify?.(title, body)) return;
    this.toast(title, body);
  }

  toast(title: string, body: string): void {
    const t: Toast = { id: this.nextBannerId++, title, body };
    this.store.setState({ toasts: [...this.state.toasts, t].slice(-MAX_TOASTS) });
    if (!this.disposables.isDisposed) this.disposables.timeout(() => this.dismissToast(t.id), this.opts.toastMs ?? NoticeConstants.toastMs);
  }

  dismissToast(id: number): void {
    this.store.setState({ toasts: this.state.toasts.filter((t) => t.id !== id) });
  }

  showError(action: string, err: unknown): WindowError {
    const e = toWindowError(err);
    const b: Banner = { id: this.nextBannerId++, code: e.code, message: e.message, action };
    this.store.setState({ errors: [...this.state.errors, b].slice(-MAX_BANNERS) });
    return e;
  }

  dismissError(id: number): void {
    this.store.setState({ errors: this.state.errors.filter((b) => b.id !== id) });
  }

  async requestNotifications(): Promise<void> {
    if (!this.opts.requestNotifyPermission) return;
    const p = await this.opts.requestNotifyPermission();
    this.store.setState({ notifyPermission: p });
  }

  // ------------------------------------------------------------------ calls

  /** Call the host; on failure show the error in the banner and return null. Nothing is swallowed. */
  async run<M extends WindowMethod>(method: M, params: WindowParams<M>, action: string): Promise<WindowResult<M> | null> {
    try {
      return await this.transport.call(method, params);
    } catch (err) {
      this.showError(action, err);
      return null;
    }
  }

  /** Call the host for its side effect; true when it accepted. A refusal goes to the banner. */
  async exec<M extends WindowMethod>(method: M, params: WindowParams<M>, action: string): Promise<boolean> {
    return (await this.attempt(method, params, action)) === null;
  }

  /** Like exec, but answers the refusal (also in the banner) for a caller that shows it where it happened. */
  async attempt<M extends WindowMethod>(method: M, params: WindowParams<M>, action: string): Promise<WindowError | null> {
    try {
      await this.transport.call(method, params);
      return null;
    } catch (err) {
      return this.showError(action, err);
    }
  }

  private key(): string | null {
    return this.state.activeKey;
  }

  /** Run a board action on the active Thread; true when the host accepted it. */
  private act<M extends WindowMethod>(method: M, params: Omit<WindowParams<M>, 'key'>, action: string): Promise<boolean> {
    const key = this.key();
    if (!key) return Promise.resolve(false);
    return this.exec(method, { ...params, key } as WindowParams<M>, action);
  }

  setGoal = (goal: string) => this.act('board.setGoal', { goal }, 'set the goal');
  setSettings = (patch: WindowParams<'board.setSettings'>['patch']) => this.act('board.setSettings', { patch }, 'change the Thread settings');
  addTask = (title: string, body?: string) => this.act('task.add', body ? { title, body } : { title }, 'add a task');
  editTask = (taskId: string, patch: { title?: string; body?: string }) => this.act('task.edit', { taskId, ...patch }, `edit ${taskId}`);
  blockTask = (taskId: string, reason: string) => this.act('task.block', { taskId, reason }, `block ${taskId}`);
  unblockTask = (taskId: string) => this.act('task.unblock', { taskId }, `unblock ${taskId}`);
  releaseTask = (taskId: string) => this.act('task.release', { taskId }, `release ${taskId}`);
  approveTask = async (taskId: string) => (await this.approveWithReason(taskId)) === null;
  /** Approve, answering why not: a refused merge (conflict, wrong token, a dirty or moved base) is shown in the
   *  review dialog beside the diff, as well as in the banner. */
  approveWithReason = (taskId: string): Promise<WindowError | null> => {
    const key = this.key();
    if (!key) return Promise.resolve({ code: 'no-thread', message: 'no Thread is open' });
    return this.attempt('task.approve', { key, taskId }, `approve ${taskId}`);
  };
  rejectTask = (taskId: string, reason: string) => this.act('task.reject', { taskId, reason }, `reject ${taskId}`);
  resetTask = (taskId: string) => this.act('task.reset', { taskId }, `reset ${taskId}`);
  assignTask = (taskId: string, agentId: string) => this.act('task.assign', { taskId, agentId }, `assign ${taskId} to ${this.agentName(agentId)}`);
  closeAgent = (agentId: string) => this.act('agent.close', { agentId }, `close ${this.agentName(agentId)}`);

  async launch(profile: ProfileIdShared, command?: string): Promise<AgentInfo | null> {
    const key = this.key();
    if (!key) return null;
    const size = this.panes.preferredSize();
    const params: WindowParams<'agent.launch'> = { key, profile, cols: size.cols, rows: size.rows };
    if (command) params.command = command;
    const a = await this.run('agent.launch', params, `launch ${command ? `"${command}"` : profile}`);
    if (a) this.adopt(a);
    return a;
  }

  async relaunch(agentId: string): Promise<AgentInfo | null> {
    const key = this.key();
    if (!key) return null;
    const a = await this.run('agent.relaunch', { key, agentId }, `relaunch ${this.agentName(agentId)}`);
    if (a) this.adopt(a);
    return a;
  }

  /** A launch answered: show the new agent's tab even if the `agents` push has not come yet. */
  private adopt(a: AgentInfo): void {
    const s = this.state;
    if (!s.agents[a.id]) this.setAgents([...s.agentIds.map((id) => s.agents[id]).filter((x): x is AgentInfo => !!x), a]);
    this.store.setState({ activeAgentId: a.id });
  }

  // ------------------------------------------------------------------ review and worktrees

  openReview(taskId: string): void {
    this.store.setState({ reviewTaskId: taskId });
  }

  closeReview(): void {
    this.store.setState({ reviewTaskId: null });
  }

  /** A task branch's work against its base; null (and the reason in the banner) when the host cannot tell. */
  async taskDiff(taskId: string): Promise<TaskDiff | null> {
    const key = this.key();
    if (!key) return null;
    return this.run('task.diff', { key, taskId }, `show the diff of ${taskId}`);
  }

  toggleWorktrees(): void {
    const open = !this.state.worktreesOpen;
    this.store.setState({ worktreesOpen: open });
    if (open) void this.refreshWorktrees();
  }

  /**
   * Fetch the worktree list. Board events come in bursts (an approval is `approved`, `claim-ended` and
   * `worktree-removed` at once), so a call made while a fetch runs only asks for one more after it.
   */
  async refreshWorktrees(): Promise<void> {
    const key = this.key();
    if (!key) return;
    if (this.worktreeFetch?.key === key) {
      this.worktreeFetch.again = true;
      return;
    }
    const mine = { key, again: true };
    this.worktreeFetch = mine;
    try {
      while (mine.again) {
        mine.again = false;
        const list = await this.run('worktree.list', { key }, 'list the worktrees');
        if (!list || this.state.activeKey !== key) return;
        this.store.setState({ worktrees: list });
      }
    } finally {
      if (this.worktreeFetch === mine) this.worktreeFetch = null;
    }
  }

  /**
   * Remove a parked worktree. Without `force` the host keeps one holding uncommitted changes or unmerged
   * commits and says so (`uncommitted`): that is a question for the person, not an error, so it comes back
   * as `confirm` with the host's message instead of going to the banner.
   */
  async removeWorktree(taskId: string, force: boolean): Promise<RemoveOutcome> {
    const key = this.key();
    if (!key) return { kind: 'failed' };
    try {
      await this.transport.call('worktree.remove', { key, taskId, force });
    } catch (err) {
      const e = toWindowError(err);
      if (e.code === 'uncommitted' && !force) return { kind: 'confirm', message: e.message };
      this.showError(`remove the worktree of ${taskId}`, err);
      return { kind: 'failed' };
    }
    // The `worktree-removed` event refreshes the list too, but it may have come before this answer.
    await this.refreshWorktrees();
    return { kind: 'removed' };
  }

  selectAgent(agentId: string): void {
    if (this.state.agents[agentId]) this.store.setState({ activeAgentId: agentId });
  }
}

function sameAgent(a: AgentInfo, b: AgentInfo): boolean {
  return (
    a.name === b.name &&
    a.status === b.status &&
    a.pid === b.pid &&
    a.profile === b.profile &&
    a.exit?.code === b.exit?.code &&
    a.exit?.signal === b.exit?.signal &&
    a.claims.length === b.claims.length &&
    a.claims.every((c, i) => b.claims[i] === c)
  );
}

/** Keep the selected tab if it still exists; else the first running agent, else the first. */
function pickActive(current: string | null, list: readonly AgentInfo[]): string | null {
  if (current && list.some((a) => a.id === current)) return current;
  return (list.find((a) => a.status !== 'exited') ?? list[0])?.id ?? null;
}
