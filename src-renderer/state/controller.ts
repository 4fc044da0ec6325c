import { createStore, type StoreApi } from 'zustand/vanilla';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { USER } from '../../src-shared/board/model.js';
import { DisposableStore } from '../../src-shared/lifecycle/disposableStore.js';
import type { AgentInfo, ThreadSummary, WindowError, WindowParams, WindowPush } from '../../src-shared/protocol/windowApi.js';
import type { ProfileIdShared } from '../../src-shared/agents/profileIds.js';
import type { PaneHost } from '../terminal/paneHost.js';
import { AckBatcher } from '../terminal/ackBatcher.js';
import type { Transport } from '../transport/types.js';
import { agentLabel, splitEnded, keepUnchanged, localIds, pickActive, runsElsewhere, sameOrder } from './agentList.js';
import { initialState, noThreadShown, nullPanes, type AppState, type ControllerOptions } from './appState.js';
import { BoardActions } from './actions.js';
import { applyLiveEvent, boardFromSnapshot, computeColumns, updateColumns } from './boardState.js';
import { appendLog, toLogEntry, type LogEntry } from './eventLog.js';
import { FOLLOWING, LogHistory } from './logHistory.js';
import { changesWorktrees } from './worktreeStatus.js';
import { hostCaller, valueOf, type CallHost } from './hostCall.js';
import { HostClock } from './hostClock.js';
import { PageNotices } from './notices.js';
import { WorktreesPanel } from './worktreesPanel.js';
import { nameFromAgentId } from '../../src-shared/agents/agentIds.js';

export * from './appState.js';
export { NoticeConstants } from './notices.js';

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
  private readonly backgroundAcks = new Map<string, AckBatcher>();
  /** Names of every agent seen in this window (agentName's words), so log lines about a closed agent still read "shell 2". */
  private readonly knownNames = new Map<string, string>();
  /** Everything this controller owns that outlives a call: the transport subscriptions, the own-notice
   *  delays and the toast timers. Disposed once, by dispose(). */
  private readonly disposables: DisposableStore;
  private started = false;
  /** What the page tells the person: the host's notices, toasts and error banners. */
  readonly notices: PageNotices;
  /** The review dialog and the worktrees panel. */
  readonly worktrees: WorktreesPanel;
  /** The one way this window calls the host (components call through it too). */
  readonly call: CallHost;
  /** What a person does to the board of the Thread on screen. */
  readonly actions: BoardActions;
  /** The event log's older pages, read from the board's store. */
  readonly history: LogHistory;
  /** The "exactly one open Thread: show it" shortcut is taken once, never again after a person chose. */
  private autoOpened = false;

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
    this.notices = new PageNotices(this.store, this.disposables, opts, {
      // Not through the call verb: a claim lost with the connection has nothing to say in a banner.
      claim: (key, id) => this.transport.call('notice.claim', { key, id }).then((won) => won === true, () => false),
      select: (id) => this.selectAgent(id),
    });
    this.call = hostCaller(transport, this.notices);
    this.worktrees = new WorktreesPanel(this.store, this.call);
    this.actions = new BoardActions(this.store, this.call, (id) => this.agentName(id));
    this.history = new LogHistory(this.store, this.call, (id) => this.agentName(id));
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
    const threads = valueOf(await this.call('threads.list', {}, 'list threads'));
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
    const summary = valueOf(await this.call('threads.open', { folder: f }, `open ${f}`));
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
    // A remembered Thread that is not open on the host is no error to show: the caller decides.
    const isNotOpen = (e: WindowError) => tentative && e.code === 'no-such-thread';
    const got = await this.call('thread.snapshot', { key }, 'load the thread', { handled: isNotOpen });
    const snap = valueOf(got);
    const notOpen = !got.ok && isNotOpen(got.error);
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
    for (const a of snap.agents) this.knownNames.set(a.id, agentLabel(a));
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
    // Panes first, so a component rendering the new agent list finds its terminal. Only this host's agents
    // have one: another host's pane is in that host's window.
    this.panes.setThread(key);
    const { tabs, ended } = splitEnded(snap.agents);
    this.panes.sync(localIds(tabs), reconnect);
    this.store.setState({
      activeKey: key,
      folder: snap.folder,
      profiles: snap.profiles,
      board,
      boardVersion: this.state.boardVersion + 1,
      goal: board.goal,
      leaseMs: board.settings.leaseMs,
      columns: computeColumns(board, this.state.columns),
      agentIds: tabs.map((a) => a.id),
      endedAgentIds: ended.map((a) => a.id),
      agents,
      activeAgentId: pickActive(prevActive, tabs),
      log: appendLog(
        snap.log.map((e) => toLogEntry(e, name)),
        live,
      ),
      logPaging: FOLLOWING,
      git: snap.git ?? null,
      boardStore: snap.store ?? null,
    });
    this.notices.fromSnapshot(key, snap.notices);
    // Events pushed while away may have made or removed worktrees.
    if (this.state.worktreesOpen) void this.worktrees.refreshWorktrees();
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
      case 'notify': {
        const { type: _type, key, ...notice } = p;
        return this.notices.fromHost(key, notice);
      }
      case 'notice-gone':
        return this.notices.gone(p.key, p.id);
      case 'thread-reopened':
        // Another board store: what this window holds of the Thread is another board's. The snapshot is the truth.
        if (p.key === this.state.activeKey) void this.loadThread(p.key, true);
        return;
    }
  }

  /**
   * Set the Thread's board store: a PostgreSQL URL, or null for the journal. The host connects first and
   * refuses what it cannot use, changing nothing; the refusal is answered here (the panel shows it beside the
   * field), not in the banner. Accepted, the Thread was opened again on the new board: its snapshot is read.
   * `move`: leaving a local board that has tasks, what happens to them (the panel asks the person first); what a
   * copy carried is kept for the panel to show (boardCarried).
   */
  async setBoard(url: string | null, name?: string, move?: 'copy' | 'empty'): Promise<WindowError | null> {
    const key = this.state.activeKey;
    if (!key) return { code: 'no-thread', message: 'no Thread is open' };
    const params = { key, url, ...(name !== undefined ? { name } : {}), ...(move !== undefined ? { move } : {}) };
    const r = await this.call('thread.setBoard', params, url === null ? 'go back to the journal' : 'set the shared board', { handled: () => true });
    if (!r.ok) return r.error;
    this.store.setState({ boardCarried: r.value.carried ? { key, outcome: r.value.carried } : null });
    if (this.state.activeKey === key) {
      this.store.setState({ boardStore: r.value.store });
      await this.loadThread(key, true);
    }
    return null;
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
    // before/after say which column changed, without scanning the board. Who holds it comes with the host's
    // agent list, pushed after this event.
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
      // Read back past the newest lines' room, the panel shows no live line until the person goes back to them.
      log: s.logPaging.following ? appendLog(s.log, [toLogEntry(e, (id) => this.agentName(id))], s.logPaging.keep) : s.log,
    };
    if (e.kind === 'thread-created') patch.columns = computeColumns(board, s.columns);
    else if (taskId) {
      const columns = updateColumns(s.columns, taskId, before, board.tasks.get(taskId));
      if (columns !== s.columns) patch.columns = columns;
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
    if (changesWorktrees(e.kind) && s.worktreesOpen) void this.worktrees.refreshWorktrees();
  }

  private async refreshGit(key: string): Promise<void> {
    const snap = valueOf(await this.call('thread.snapshot', { key }, 'read the git setup'));
    if (snap && this.state.activeKey === key) this.store.setState({ git: snap.git ?? null });
  }

  private onAgents(key: string, list: AgentInfo[]): void {
    if (key !== this.state.activeKey || this.loading?.key === key) return;
    this.setAgents(list);
  }

  private setAgents(list: readonly AgentInfo[]): void {
    for (const a of list) this.knownNames.set(a.id, agentLabel(a));
    const agents = keepUnchanged(this.state.agents, list);
    const { tabs, ended } = splitEnded(list);
    const ids = tabs.map((a) => a.id);
    const sameIds = sameOrder(ids, this.state.agentIds);
    const endedIds = ended.map((a) => a.id);
    if (!sameIds) this.panes.sync(localIds(tabs), false);
    this.store.setState({
      agents,
      agentIds: sameIds ? this.state.agentIds : ids,
      endedAgentIds: sameOrder(endedIds, this.state.endedAgentIds) ? this.state.endedAgentIds : endedIds,
      activeAgentId: pickActive(this.state.activeAgentId, tabs),
    });
  }

  /** Every agent the window lists, tabs first, then those the last run ended. */
  private listed(): AgentInfo[] {
    const s = this.state;
    return [...s.agentIds, ...s.endedAgentIds].map((id) => s.agents[id]).filter((x): x is AgentInfo => !!x);
  }

  /** Output for a pane nobody shows (another Thread, an agent not known yet): acked, or the host would
   *  hold that pane paused waiting for this window. */
  private ackUnshown(key: string, agentId: string, chars: number): void {
    const id = `${key}\n${agentId}`;
    let b = this.backgroundAcks.get(id);
    if (!b) {
      // Not through the call verb: an ack is flow control, not something the person did, so a lost one has
      // nothing to say in a banner (a reconnect resets every batcher, and the host its credit).
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

  /** An agent's name in the window's words: another host's with that host's ("shell 1 on build-box"), since
   *  both hosts may have a "shell 1" and a log line "reassigned from shell 1 to shell 1" says nothing. */
  agentName(id: string): string {
    if (id === USER) return 'you';
    const a = this.state.agents[id];
    return (a ? agentLabel(a) : undefined) ?? this.knownNames.get(id) ?? nameFromAgentId(id) ?? id;
  }

  async launch(profile: ProfileIdShared, command?: string): Promise<AgentInfo | null> {
    const key = this.state.activeKey;
    if (!key) return null;
    const size = this.panes.preferredSize();
    const params: WindowParams<'agent.launch'> = { key, profile, cols: size.cols, rows: size.rows };
    if (command) params.command = command;
    const a = valueOf(await this.call('agent.launch', params, `launch ${command ? `"${command}"` : profile}`));
    if (a) this.adopt(a);
    return a;
  }

  async relaunch(agentId: string): Promise<AgentInfo | null> {
    const key = this.state.activeKey;
    // Another host's agent is that host's to start again.
    if (!key || runsElsewhere(this.state.agents[agentId])) return null;
    const a = valueOf(await this.call('agent.relaunch', { key, agentId }, `relaunch ${this.agentName(agentId)}`));
    if (a) this.adopt(a);
    return a;
  }

  /** The exited agent's CLI started again on its own conversation: same tab, same agent id. */
  async resume(agentId: string): Promise<AgentInfo | null> {
    const key = this.state.activeKey;
    if (!key || runsElsewhere(this.state.agents[agentId])) return null;
    const a = valueOf(await this.call('agent.resume', { key, agentId }, `resume ${this.agentName(agentId)}'s conversation`));
    if (a) this.setAgents(this.listed().map((x) => (x.id === a.id ? a : x)));
    if (a) this.store.setState({ activeAgentId: a.id });
    return a;
  }

  /** A launch answered: show the new agent's tab even if the `agents` push has not come yet. */
  private adopt(a: AgentInfo): void {
    const s = this.state;
    if (!s.agents[a.id]) this.setAgents([...this.listed(), a]);
    this.store.setState({ activeAgentId: a.id });
  }

  selectAgent(agentId: string): void {
    if (this.state.agents[agentId]) this.store.setState({ activeAgentId: agentId });
  }
}
