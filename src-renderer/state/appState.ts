import type { NotifyPermission } from '../notifications.js';
import type { PaneHost } from '../terminal/paneHost.js';
import type { Board } from '../../src-shared/board/reducer.js';
import type { AgentInfo, BoardStoreView, GitIsolation, OtherBoardFolder, ThreadSnapshot, ThreadSummary, WorktreeInfo } from '../../src-shared/protocol/windowApi.js';
import type { ConnectionState } from '../transport/types.js';
import type { Notice } from '../../src-shared/notices/notices.js';
import { EMPTY_COLUMNS, type Columns } from './boardState.js';
import type { LogEntry } from './eventLog.js';
import { FOLLOWING, type LogPaging } from './logHistory.js';
import type { HostClock } from './hostClock.js';
import type { CarryOutcome } from '../../src-shared/board/boardCarry.js';
import { DEFAULT_TERMINAL_SIZE } from '../../src-shared/terminal/terminalSize.js';

/** The window's state as components draw it, and the ports the controller is given. */
export interface Banner {
  readonly id: number;
  readonly code: string;
  readonly message: string;
  /** What the person was doing, e.g. "approve T-3": the latest of `actions`. */
  readonly action: string;
  /** Every action refused with this same code and message, oldest first, each once: the banner goes when
   *  each of them has since succeeded. */
  readonly actions: readonly string[];
  /** How many times this refusal came (one banner for all of them). */
  readonly count: number;
}

export interface Toast {
  readonly id: number;
  readonly title: string;
  readonly body: string;
  /** What it concerns, as a host notice's `about` (`lapse:T-3`): toasts of one kind collapse into one line. */
  readonly about?: string;
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
  /** The agents with tabs: this run's, and those another host runs. */
  agentIds: readonly string[];
  /** The agents the last run of the host ended (AgentInfo.lastRun), listed apart with Relaunch/Resume/Dismiss. */
  endedAgentIds: readonly string[];
  /** The host's agent list (tabs and ended alike); each agent's `claims` are the host's, pushed after every change of holder. */
  agents: Readonly<Record<string, AgentInfo>>;
  activeAgentId: string | null;
  log: readonly LogEntry[];
  /** How the log's lines stand against the board's history: following its head, or read back (logHistory.ts). */
  logPaging: LogPaging;
  errors: readonly Banner[];
  toasts: readonly Toast[];
  /** The host's current notices for the Thread on screen, oldest first (a window opened later has them too);
   *  each stays until the host withdraws it or the person dismisses it here. */
  hostNotices: readonly Notice[];
  notifyPermission: NotifyPermission;
  /** Whether claims in this Thread get git worktrees; null until the snapshot says (or from a host that does not). */
  git: GitIsolation | null;
  /** Where the Thread's board is (the journal, or a PostgreSQL board by host/database and name); null until
   *  the snapshot says. Never a URL: the host keeps that. */
  boardStore: BoardStoreView | null;
  /** What the last move of a Thread onto a shared board copied (old id → new id), for the settings panel to
   *  show; kept across the Thread's reopen on its new board (not part of noThreadShown), for its Thread only. */
  boardCarried: { key: string; outcome: CarryOutcome } | null;
  /** The Worktrees panel: open or not, and the host's list (null until fetched). Fetched only while open. */
  worktreesOpen: boolean;
  worktrees: readonly WorktreeInfo[] | null;
  /** Claim folders in this host's data folder for the Thread that the board on screen does not record (another
   *  board's of the same folder): listed apart, with a way to clear them. Null until fetched, as `worktrees`. */
  otherFolders: readonly OtherBoardFolder[] | null;
  /** The task whose diff the review dialog shows. */
  reviewTaskId: string | null;
  /** The task whose details panel is open (a click or Enter on its card). */
  detailsTaskId: string | null;
  /** The board search ('' shows every task). */
  boardQuery: string;
}

/** What removing a worktree came to: `confirm` carries the host's warning about work that would be lost. */
export type RemoveOutcome = { kind: 'removed' } | { kind: 'failed' } | { kind: 'confirm'; message: string };


export interface ControllerOptions {
  panes?: PaneHost;
  /** Show a system notification tagged with the notice's id, running `onClick` when clicked; false if it
   *  could not (no permission): a toast is shown instead. */
  systemNotify?: (title: string, body: string, tag: string, onClick: () => void) => boolean;
  /** Close the system notification of that tag, if this page raised it and it still shows. */
  closeSystemNotify?: (tag: string) => void;
  /** Whether the person is looking at the page (focused, visible): no agent notification for the tab they see. */
  looking?: () => boolean;
  notifyPermission?: () => NotifyPermission;
  requestNotifyPermission?: () => Promise<NotifyPermission>;
  clock?: HostClock;
  /** The Thread this window is for (Electron opens one window per Thread with `?thread=KEY`). */
  initialThread?: string | null;
  /** How long a toast stays (ms). */
  toastMs?: number;
  /** How long an error banner stays after its refusal last came (ms). */
  bannerMs?: number;
  setTimeout?: (f: () => void, ms: number) => unknown;
  clearTimeout?: (handle: unknown) => void;
}

export const nullPanes: PaneHost = {
  setThread: () => undefined,
  sync: () => undefined,
  data: () => false,
  preferredSize: () => ({ ...DEFAULT_TERMINAL_SIZE }),
};

/** The part of the state that belongs to the Thread on screen: empty before one loads, and on a switch. */
export function noThreadShown(): Pick<
  AppState,
  'board' | 'columns' | 'agentIds' | 'endedAgentIds' | 'agents' | 'activeAgentId' | 'log' | 'logPaging' | 'git' | 'boardStore' | 'worktreesOpen' | 'worktrees' | 'otherFolders' | 'reviewTaskId' | 'detailsTaskId' | 'boardQuery' | 'hostNotices'
> {
  return { board: null, columns: EMPTY_COLUMNS, agentIds: [], endedAgentIds: [], agents: {}, activeAgentId: null, log: [], logPaging: FOLLOWING, git: null, boardStore: null, worktreesOpen: false, worktrees: null, otherFolders: null, reviewTaskId: null, detailsTaskId: null, boardQuery: '', hostNotices: [] };
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
    boardCarried: null,
  };
}

