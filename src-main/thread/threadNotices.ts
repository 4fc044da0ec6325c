import { basename } from 'node:path';
import type { AgentStateInfo } from '../../src-shared/agents/agentLife.js';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { compareTaskIds } from '../../src-shared/board/reducer.js';
import { DisposableStore } from '../../src-shared/lifecycle/disposableStore.js';
import { Emitter } from '../../src-shared/lifecycle/emitter.js';
import { agentExitedNotice, baseMovedNotice, hostGoneNotice, hostLapsedNotice, lapseNotice, quarantineNotice, readOnlyNotice, sandboxNotice, sentBackNotice, turnNotice, unsealedApprovalNotice, type Notice, type TurnNoticeKind } from '../../src-shared/notices/notices.js';
import type { WindowPush } from '../../src-shared/protocol/windowApi.js';
import type { BoardService } from '../board/boardService.js';
import type { AgentStates } from '../roster/agentStates.js';
import type { Roster } from '../roster/roster.js';
import type { AgentSandbox } from '../sandbox/agentSandbox.js';
import type { BaseMoved } from './claimWorktrees.js';

export const NoticeLimits = {
  /** Notices kept for windows opened later. Each current one is about a live thing (an agent waiting, a task
   *  that lapsed); past this many the oldest are let go, so a Thread running for weeks keeps no backlog a
   *  window opened then would have to show. Far above what a person reads at once. */
  maxKept: 50,
} as const;

/** What the notices are built from: the parts of a ThreadHost they listen to. */
export interface NoticeSources {
  readonly key: string;
  readonly folder: string;
  readonly board: BoardService;
  readonly roster: Pick<Roster, 'onExit' | 'onAgents' | 'agent' | 'nameOf'>;
  readonly states: Pick<AgentStates, 'onChange'>;
  /** The Thread's git: an approval's merge pushed to the remote's base the person's clone lacks. */
  readonly worktrees?: { readonly onBaseMoved: Pick<Emitter<BaseMoved>, 'event'> };
  /** Whether its agents are contained: the plain warnings where some are not (the machine, a person's choice). */
  readonly sandbox?: Pick<AgentSandbox, 'warnings'>;
}

/** The board events that start a new claim on a task: its lapse notice is no longer the news. */
const CLAIMS_AGAIN: ReadonlySet<BoardEvent['kind']> = new Set(['grant', 'reassign']);
/** The board events after which a send-back's notice is no longer the news: the work was done again, or the
 *  task went to someone else. */
const SENT_BACK_OVER: ReadonlySet<BoardEvent['kind']> = new Set(['submitted', 'grant', 'reassign', 'approved']);

/**
 * A Thread's notices, the host's one source of them (src-shared/notices): an agent starting to wait for the
 * person or finishing its turn (when the Thread's notifyAgents setting is on), a claim that lapsed, an agent
 * that exited, a board that turned read-only, an approval's merge pushed to the remote's base that the
 * person's own branch lacks. It keeps the ones still true, so a window opened later is given
 * them in its snapshot, and withdraws one that stops being true (the agent answered, worked on, or was
 * closed). Each notice is raised as an OS notification by one window only: the first to claim its id here.
 * The claim is the host's, not the browser's (a storage entry or a lock), because the windows may be in
 * different browser profiles or Electron windows that share no storage, yet show on one desktop.
 */
export class ThreadNotices {
  /** A notice arose or went; the Thread's windows are told (ThreadManager forwards these as they are). */
  readonly onPush = new Emitter<WindowPush>();
  /** The current notices by id, oldest first, and whether a window claimed each. */
  private readonly kept = new Map<string, { notice: Notice; claimed: boolean }>();
  private readonly store = new DisposableStore();
  /** The last time given to a notice: two in one ms still get different ids. */
  private lastAt = -1;
  /** The sandbox's warnings as last told, so a settings change that leaves them as they were tells nothing. */
  private sandboxSaid = '';

  constructor(private readonly s: NoticeSources) {
    this.store.add(s.board.onEvent((e) => this.boardEvent(e)));
    // Once per outage: a board that cannot write says so, and then refuses writes (read-only, board-unavailable).
    this.store.add(s.board.onReadOnly((err) => this.raise(readOnlyNotice(s.key, basename(s.folder), err.message, this.at()))));
    // A shared board whose database came back takes writes again: its notice is no longer true.
    this.store.add(s.board.onAvailable(() => this.withdrawAbout(`read-only:${s.key}`)));
    const shared = s.board.membership;
    if (shared) this.store.add(shared.onHostLapsed((ended) => this.raise(hostLapsedNotice(s.key, basename(s.folder), ended, this.at()))));
    // Events of the store set aside: those found as the board opened, then each as it is found. Once each: the
    // board keeps which it has told (quarantine.ts), so a restart does not tell them again.
    for (const q of s.board.quarantine.found()) this.raise(quarantineNotice(s.key, basename(s.folder), q, this.at()));
    this.store.add(s.board.quarantine.onAdded((q) => this.raise(quarantineNotice(s.key, basename(s.folder), q, this.at()))));
    if (s.worktrees) this.store.add(s.worktrees.onBaseMoved.event((moved) => this.raise(baseMovedNotice(s.key, moved, this.at()))));
    // Agents not contained (issue 43): told as the Thread opens, kept for windows opened later, told again only
    // when a person's change of the Thread's setting changes what is true.
    this.sandboxChanged();
    this.store.add(s.states.onChange.event(({ agentId, next, before }) => this.stateChanged(agentId, next, before)));
    this.store.add(
      s.roster.onExit.event(({ agentId, name, exit }) => {
        this.withdrawAbout(`waiting:${agentId}`, `done:${agentId}`);
        this.raise(agentExitedNotice(name, exit, this.at(), agentId));
      }),
    );
    // An agent closed (or relaunched under a new id) leaves the list: nothing about it is current any more.
    this.store.add(
      s.roster.onAgents.event((agents) => {
        const listed = new Set(agents.map((a) => a.id));
        for (const { notice } of [...this.kept.values()]) if (notice.agentId && !listed.has(notice.agentId)) this.withdraw(notice.id);
      }),
    );
  }

  /** The current notices, oldest first, for a window's snapshot. */
  current(): Notice[] {
    return [...this.kept.values()].map((k) => k.notice);
  }

  /** A notice another room of the Thread raises (its budgets, issue 47), made with the time its id takes: kept
   *  and pushed as this Thread's own. */
  raiseNotice(make: (at: number) => Notice): void {
    this.raise(make(this.at()));
  }

  /** The notice about `about` is no longer true (a budget raised): windows drop it. */
  withdrawNotice(about: string): void {
    this.withdrawAbout(about);
  }

  /** True for the first window to claim a current notice: that window raises its OS notification. */
  claim(id: string): boolean {
    const k = this.kept.get(id);
    if (!k || k.claimed) return false;
    k.claimed = true;
    return true;
  }

  dispose(): void {
    this.store.dispose();
    this.onPush.dispose();
    this.kept.clear();
  }

  private boardEvent(e: BoardEvent): void {
    if (e.kind === 'settings-set') this.sandboxChanged();
    if (e.kind === 'claim-ended' && e.reason === 'lapsed') {
      const title = this.s.board.state.tasks.get(e.taskId)?.title ?? '';
      this.raise(lapseNotice(e.taskId, this.s.roster.nameOf(e.agentId), title, e.to, this.at()));
    } else if (e.kind === 'host-gone') {
      // Another host of the board left or was lost: said once here (this host follows each event once). Of
      // this host itself, its own windows were told otherwise (it stopped, or hostLapsedNotice).
      if (e.host.id !== this.s.board.engine.here?.id) this.raise(hostGoneNotice(this.s.key, e, this.at()));
    } else if (e.kind === 'unqueued' && e.code === 'unsealed') {
      this.raise(unsealedApprovalNotice(e.taskId, this.s.board.state.tasks.get(e.taskId)?.title ?? '', this.at()));
    } else if (e.kind === 'returned' && e.cause) {
      const t = this.s.board.state.tasks.get(e.taskId);
      const holder = t?.claim?.agentId;
      this.raise(sentBackNotice(e.taskId, t?.title ?? '', e.cause, e.reason, holder ? this.s.roster.nameOf(holder) : null, this.at(), holder));
    } else {
      if (CLAIMS_AGAIN.has(e.kind) && 'taskId' in e) this.withdrawAbout(`lapse:${e.taskId}`);
      if (SENT_BACK_OVER.has(e.kind) && 'taskId' in e) this.withdrawAbout(`sent-back:${e.taskId}`);
    }
  }

  private stateChanged(agentId: string, next: AgentStateInfo, before: AgentStateInfo): void {
    if (next.state === before.state) return;
    if (before.state === 'needs-input') this.withdrawAbout(`waiting:${agentId}`);
    if (next.state === 'working' || next.state === 'needs-input') this.withdrawAbout(`done:${agentId}`);
    // A turn the host only presumed (the CLI starting up) ending in "ready" finished nothing.
    const kind: TurnNoticeKind | null =
      next.state === 'needs-input' ? 'waiting' : next.state === 'idle' && before.state === 'working' && !before.presumed ? 'done' : null;
    if (!kind || !this.s.board.state.settings.notifyAgents) return;
    const agent = this.s.roster.agent(agentId);
    if (!agent) return;
    // The first of its claims as the window lists them: one agent's claims, not every agent's list.
    const taskId = this.s.board.engine.claimsOf(agentId).sort(compareTaskIds)[0];
    const task = taskId ? this.s.board.state.tasks.get(taskId) : undefined;
    this.raise(turnNotice(kind, { id: agentId, name: agent.name, text: next.text }, task ? { id: task.id, title: task.title } : null, this.at()));
  }

  private sandboxChanged(): void {
    const lines = this.s.sandbox?.warnings() ?? [];
    const said = lines.join('\n');
    if (said === this.sandboxSaid) return;
    this.sandboxSaid = said;
    if (lines.length) this.raise(sandboxNotice(this.s.key, lines, this.at()));
    else this.withdrawAbout(`sandbox:${this.s.key}`);
  }

  /** The board's clock in whole ms: it resumes from the journal, so ids stay apart across host restarts too. */
  private at(): number {
    this.lastAt = Math.max(Math.floor(this.s.board.clock.now()), this.lastAt + 1);
    return this.lastAt;
  }

  /** A notice arose: it replaces any older one about the same thing, is kept, and goes to the windows. */
  private raise(notice: Notice): void {
    this.withdrawAbout(notice.about);
    this.kept.set(notice.id, { notice, claimed: false });
    for (const old of [...this.kept.keys()].slice(0, -NoticeLimits.maxKept)) this.withdraw(old);
    this.onPush.fire({ type: 'notify', key: this.s.key, ...notice });
  }

  private withdrawAbout(...abouts: string[]): void {
    for (const { notice } of [...this.kept.values()]) if (abouts.includes(notice.about)) this.withdraw(notice.id);
  }

  private withdraw(id: string): void {
    if (this.kept.delete(id)) this.onPush.fire({ type: 'notice-gone', key: this.s.key, id });
  }
}
