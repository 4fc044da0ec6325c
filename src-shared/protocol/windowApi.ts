import type { Notice } from '../notices/notices.js';
import type { AgentLife, AgentStateInfo } from '../agents/agentLife.js';
import type { Containment } from '../agents/containment.js';
import { z } from 'zod';
import type { BoardEvent } from '../board/events.js';
import type { CompactTask } from '../board/serialized.js';
import { EventPageLimits, type EventPage } from '../board/eventPage.js';
import type { SerializedBoard } from '../board/serialized.js';
import type { TaskDetails } from '../board/windowBoard.js';
import type { CarryOutcome } from '../board/boardCarry.js';
import type { ClaimView } from './views.js';
import { AfterSchema, AgentIdSchema, BodySchema, GoalSchema, NoteTextSchema, ReasonSchema, RejectReasonSchema, SettingsPatchSchema, TaskIdSchema, TitleSchema, VerifySchema, TakersSchema, DispatchModeSchema, LabelsSchema } from '../board/schemas.js';
import type { Result } from '../board/result.js';
import { MAX_METHOD_NAME_CHARS, procedure, typeOnly, type CallError, type InputOf, type OutputOf } from './procedure.js';
import { TerminalSize } from '../terminal/terminalSize.js';
import { PROFILE_IDS, type ProfileIdShared } from '../agents/profileIds.js';
import { WriteKeySchema } from './agentSchemas.js';
import { BudgetSchema } from '../board/schemas.js';
import type { TaskCostView, ThreadCostView } from '../usage/costView.js';

/**
 * The window's API, defined once. Electron's preload exposes it through contextBridge and `serve` carries it
 * over a WebSocket; the renderer cannot tell which. Every request is validated against these schemas by
 * the host before anything runs.
 */

// The window's API names profiles; src-main reads the list here too until its importers move to the list's home.
/** A board URL or name beyond these is refused before the host reads it; the host's own checks (parseBoardUrl,
 *  checkBoardName) hold the exact bounds and say why: a URL of 4096 characters, a name of 200 characters,
 *  each at most two UTF-16 units. */
const MAX_BOARD_URL_CHARS = 4096;
const MAX_BOARD_NAME_CHARS = 400;
/** A notice's id is what it concerns (an agent's name or id, a task id) and a time: far shorter than this. */
const MAX_NOTICE_ID_CHARS = 512;
const key = z.string().regex(/^[0-9a-f]{16}$/, 'a thread key is 16 hex digits');
const taskId = TaskIdSchema;
const agentId = AgentIdSchema;
/** Terminal sizes a screen can show; the bounds keep a bad message from allocating a huge buffer. */
const cols = z.number().int().min(TerminalSize.minCols).max(TerminalSize.maxCols);
const rows = z.number().int().min(TerminalSize.minRows).max(TerminalSize.maxRows);
/**
 * A board write's idempotency key (issue 31): the page makes one per action a person takes and sends it again
 * with the same request when it retries (the connection went before the answer came), and the host answers
 * that retry with the first outcome instead of doing the write twice. Optional, so a page without keys still
 * works; `key` is the Thread's, hence the longer name.
 */
const writeKey = WriteKeySchema.optional();
/** A git commit's full name: 40 hex digits (SHA-1), or 64 (SHA-256 repositories). */
const CommitShaSchema = z.string().regex(/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/, 'a commit is named by its full sha: 40 or 64 hex digits');

/** A window procedure: its params' schema, and its answer's type (the page trusts its own host's answers). */
const method =
  <O>() =>
  <I extends z.ZodType>(input: I) =>
    procedure(input, typeOnly<O>());

export const windowMethods = {
  'threads.list': method<ThreadSummary[]>()(z.object({}).strict()),
  'threads.open': method<ThreadSummary>()(z.object({ folder: z.string().min(1).max(4096) }).strict()),
  'thread.snapshot': method<ThreadSnapshot>()(z.object({ key }).strict()),
  'board.setGoal': method<null>()(z.object({ key, goal: GoalSchema, writeKey }).strict()),
  'board.setSettings': method<null>()(z.object({ key, patch: SettingsPatchSchema, writeKey }).strict()),
  /** `after`: the tasks it waits on (issue 34); on an edit it replaces what the task waited on ([] for none). */
  'task.add': method<CompactTask>()(z.object({ key, title: TitleSchema, body: BodySchema.optional(), verify: VerifySchema.optional(), after: AfterSchema.optional(), writeKey }).strict()),
  'task.edit': method<CompactTask>()(
    z.object({ key, taskId, title: TitleSchema.optional(), body: BodySchema.optional(), verify: VerifySchema.optional(), after: AfterSchema.optional(), writeKey }).strict(),
  ),
  /** Who may take a task when the board dispatches (issue 34): profiles and `label:` labels; [] for anyone. */
  'task.setTakers': method<CompactTask>()(z.object({ key, taskId, for: TakersSchema, writeKey }).strict()),
  /** An agent's own dispatch setting (`thread`: the Thread's default) and its labels. */
  'agent.setDispatch': method<null>()(z.object({ key, agentId, mode: DispatchModeSchema, labels: LabelsSchema, writeKey }).strict()),
  'task.note': method<null>()(z.object({ key, taskId, text: NoteTextSchema, writeKey }).strict()),
  /** `force`: give a task that waits on others before they are done (the board notes it). */
  'task.assign': method<ClaimView>()(z.object({ key, taskId, agentId, force: z.boolean().optional(), writeKey }).strict()),
  'task.release': method<null>()(z.object({ key, taskId, writeKey }).strict()),
  /** `seen`: the commit the person was shown (the review dialog's diff head, issue 45). The host approves
   *  only work it can show, and with `seen` only if that is still the work in review: the queue lands it. */
  'task.approve': method<null>()(z.object({ key, taskId, seen: CommitShaSchema.optional(), writeKey }).strict()),
  'task.reject': method<null>()(z.object({ key, taskId, reason: RejectReasonSchema, writeKey }).strict()),
  'task.block': method<null>()(z.object({ key, taskId, reason: ReasonSchema, writeKey }).strict()),
  'task.unblock': method<null>()(z.object({ key, taskId, writeKey }).strict()),
  'task.reset': method<null>()(z.object({ key, taskId, writeKey }).strict()),
  /** The merge queue (issue 34): move a queued task to just before `before` (null: the end) in the person's
   *  order; take one out (it stays in review, unapproved). */
  'queue.move': method<null>()(z.object({ key, taskId, before: taskId.nullable(), writeKey }).strict()),
  'queue.remove': method<null>()(z.object({ key, taskId, writeKey }).strict()),
  'agent.launch': method<AgentInfo>()(z.object({ key, profile: z.enum(PROFILE_IDS), command: z.string().min(1).max(4096).optional(), cols, rows }).strict()),
  'agent.close': method<null>()(z.object({ key, agentId }).strict()),
  'agent.relaunch': method<AgentInfo>()(z.object({ key, agentId }).strict()),
  /** Starts an exited agent's CLI again on its own conversation: same agent, new process and secret. */
  'agent.resume': method<AgentInfo>()(z.object({ key, agentId }).strict()),
  'agent.input': method<null>()(z.object({ key, agentId, data: z.string().max(1024 * 1024) }).strict()),
  'agent.resize': method<null>()(z.object({ key, agentId, cols, rows }).strict()),
  'agent.ack': method<null>()(z.object({ key, agentId, chars: z.number().int().min(0).max(1e9) }).strict()),
  'agent.screen': method<string>()(z.object({ key, agentId }).strict()),
  'agent.detach': method<null>()(z.object({ key, agentId }).strict()),
  'task.diff': method<TaskDiff>()(z.object({ key, taskId }).strict()),
  /** A task's whole body and newest notes: the window's snapshot carries neither (windowBoard.ts). */
  'task.details': method<TaskDetails>()(z.object({ key, taskId }).strict()),
  /** The task's events from the board's journal, oldest first, renewals left out (windowRouter's limit). */
  'task.history': method<BoardEvent[]>()(z.object({ key, taskId }).strict()),
  /** A page of the board's history, newest first, from its store (the journal's kept segments or the shared
   *  board's table): events below `before`, at most `limit`, only `taskId`'s if given. */
  'board.events': method<EventPage>()(
    z
      .object({
        key,
        before: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
        limit: z.number().int().min(1).max(EventPageLimits.maxEvents, `at most ${EventPageLimits.maxEvents} events a page`).optional(),
        taskId: taskId.optional(),
      })
      .strict(),
  ),
  'worktree.list': method<WorktreeInfo[]>()(z.object({ key }).strict()),
  /** `force` is the person saying yes to losing uncommitted changes in it; without it such a worktree stays. */
  'worktree.remove': method<null>()(z.object({ key, taskId, force: z.boolean() }).strict()),
  /** Claim folders in this host's data folder for the Thread that the board on screen does not record (another
   *  board's of the same Thread folder, or from before boards were named): listed apart from `worktree.list`. */
  'worktree.others': method<OtherBoardFolder[]>()(z.object({ key }).strict()),
  /** Remove one of `worktree.others`' folders (never its branch). `force` as for `worktree.remove`: without it a
   *  folder whose removal would lose uncommitted changes or a commit on no branch stays. */
  'worktree.clear': method<null>()(z.object({ key, path: z.string().min(1).max(4096), force: z.boolean() }).strict()),
  /** Issue 47 item 5: a parked folder's saved work (Task.saved, under refs/forkbench/parked/) put back into a new
   *  folder of the person's (answered with its path), or deleted (the window asks first). */
  'worktree.restoreSaved': method<{ path: string }>()(z.object({ key, taskId, ref: z.string().min(1).max(4096) }).strict()),
  'worktree.deleteSaved': method<null>()(z.object({ key, taskId, ref: z.string().min(1).max(4096) }).strict()),
  /** A window that would raise the OS notification for a host notice asks first: true for the first window
   *  to ask while the notice is current, false for every other, so one notice is raised once among them. */
  'notice.claim': method<boolean>()(z.object({ key, id: z.string().min(1).max(MAX_NOTICE_ID_CHARS) }).strict()),
  /**
   * The Thread's board store, chosen in the window: a PostgreSQL URL (kept by the host, owner-only; never shown
   * back), or null for the journal. The host checks that it connects before anything changes, then closes the
   * Thread and opens it again on the new board (its windows get `thread-reopened`). A host started with
   * `--board` (or FORKBENCH_BOARD_URL) refuses: its board is set there. The bound is the host's URL bound.
   * `move` (issue 45): leaving a local board that has tasks, what happens to them: `copy` them onto the shared
   * board, or start there `empty` (the local board stays, whole, for a switch back). Without it such a switch is
   * refused `move-needed`, naming how many tasks, and nothing changes.
   */
  'thread.setBoard': method<BoardSwitch>()(
    z
      .object({
        key,
        url: z.string().min(1).max(MAX_BOARD_URL_CHARS).nullable(),
        name: z.string().min(1).max(MAX_BOARD_NAME_CHARS).optional(),
        move: z.enum(['copy', 'empty']).optional(),
      })
      .strict(),
  ),
  /** Issue 47: a person's budget for a task, or for the Thread (`taskId` null), in dollars or tokens; null
   *  removes it. Raising a spent one lets the board dispatch the task again; to stop the agent instead, the
   *  window closes it (`agent.close`). */
  'budget.set': method<null>()(z.object({ key, taskId: taskId.nullable(), budget: BudgetSchema.nullable(), writeKey }).strict()),
  /** Issue 47: the Thread's cost: its total and budget, today and this week, the dearest tasks, per agent,
   *  profile and day (src-shared/usage/costView.ts). */
  'cost.thread': method<ThreadCostView>()(z.object({ key }).strict()),
  /** One task's cost: tokens by kind, money, per agent, its sparkline and budget, its claims' time, lapses, commits. */
  'cost.task': method<TaskCostView>()(z.object({ key, taskId }).strict()),
  /** The Thread's cost (or one task's) as CSV text (RFC 4180), for the person to save. */
  'cost.csv': method<string>()(z.object({ key, taskId: taskId.optional() }).strict()),
} as const;

export type WindowMethod = keyof typeof windowMethods;
/** The board writes a window sends with an idempotency key (`writeKey`). */
export type KeyedWindowMethod = { [M in WindowMethod]: 'writeKey' extends keyof WindowParams<M> ? M : never }[WindowMethod];
export type WindowParams<M extends WindowMethod> = InputOf<typeof windowMethods, M>;
export type WindowResult<M extends WindowMethod> = OutputOf<typeof windowMethods, M>;

/** How an agent of an earlier run of the host ended: its process exited by itself, the host stopped and ended
 *  it (Ctrl-C, quit), or the next host found it gone (it went down with a host that crashed, or died while a
 *  pty host kept it and no board host ran). */
export const AGENT_ENDINGS = ['exited', 'host-stopped', 'found-gone'] as const;
export type AgentEnding = (typeof AGENT_ENDINGS)[number];

/** An agent the last run of the host ended, as the next run lists it (roster/agentStore.ts keeps it). */
export interface AgentLastRun {
  how: AgentEnding;
  /** The tasks it held as it ended (their claims ended with it). */
  held: string[];
  /** Their titles on the board they were on, as it ended: the board on screen now may be another (a board
   *  switch) and give the same id to another task, or the title may have changed since. Absent in records
   *  from before titles were kept. */
  titles?: Record<string, string>;
  /** The board it held them on, when that is not the board on screen (the Thread moved since, issue 45): the
   *  ids are that board's, and name other tasks here. Absent: this board. */
  elsewhere?: string;
  /** Of those, the ones copied onto this board, by their ids here. */
  now?: Record<string, string>;
  /** Its exit status, when the host saw it. */
  exit: { code: number; signal: number | null } | null;
  /** When it ended (wall clock, ms), recorded as it happened by its host or its pty host; absent when nobody saw. */
  at?: number;
}

export interface AgentInfo {
  id: string;
  name: string;
  profile: string;
  /** Its life (agentLife.ts), as the one Agent that owns it says. */
  status: AgentLife;
  pid: number | null;
  exit: { code: number; signal: number | null } | null;
  /** Task ids it holds a live claim on. */
  claims: string[];
  /** Its process is gone and its CLI's conversation can be started again (`agent.resume`). */
  resumable?: boolean;
  /** Its activity (working, waiting for you, idle, stalled, exited) and which signal said so: the same Agent's. */
  state?: AgentStateInfo | null;
  /** An agent of an earlier run of the host, which ended with it or before it: listed apart from the tabs, with
   *  how it ended and what it held, to relaunch, resume or dismiss. Gone once it is resumed or closed. */
  lastRun?: AgentLastRun;
  /** It runs on another host of a shared board (that host's name): its terminal is in that host's window;
   *  here it shows its claims, and a task can be given to it. */
  host?: string;
  /** Whether its process runs in a sandbox, and which, or why not (issue 43): what the host started its pane
   *  with, kept through a host restart. Absent where this host has no pane of it (another host's agent, one of
   *  an earlier run). */
  containment?: Containment;
}

export interface ThreadSummary {
  key: string;
  folder: string;
  goal: string;
  open: boolean;
}

/** Everything a window needs to draw a Thread from scratch; events then keep it current. */
export interface ThreadSnapshot {
  key: string;
  folder: string;
  /** Titles, states, claims and counts; bodies only begun and no notes (windowBoard.ts): `task.details`. */
  board: SerializedBoard;
  /** The host's board clock when the snapshot was taken: deadlines are in this clock. */
  boardNow: number;
  agents: AgentInfo[];
  /** The latest events, oldest first, for the event-log panel. */
  log: BoardEvent[];
  profiles: Array<{ id: ProfileIdShared; label: string; available: boolean }>;
  git: GitIsolation;
  /** The host's current notices for this Thread, oldest first: a window opened after one arose still shows it. */
  notices: Notice[];
  /** Which store the Thread's board is in: what the window may show of it, never its URL. */
  store: BoardStoreView;
}

/**
 * The Thread's board store as a window may see it. A PostgreSQL board is named by "host/database" and the
 * board's name only: its URL may hold a password, and the page never gets it. `fixed`: the host was started
 * with `--board` (or FORKBENCH_BOARD_URL), which wins over the Thread's own setting, so the window cannot change it.
 */
/** `host`: this host's name on the shared board (issue 45), the one other hosts' windows list its agents by. */
export type BoardStoreView = { kind: 'journal' } | { kind: 'postgres'; where: string; name: string; fixed: boolean; host: string };

/** A board switch's answer: where the Thread is now, and what a copy of its local board carried (old id → new
 *  id), or null when nothing was copied. */
export interface BoardSwitch {
  store: BoardStoreView;
  carried: CarryOutcome | null;
}

/** Whether claims get worktrees in this Thread, and if not, why: the window says so rather than leave it silent. */
export type GitIsolation =
  | { isolated: true; repoRoot: string; baseBranch: string }
  | { isolated: false; reason: string };

/** One task worktree as the window lists it. `held` means a live claim works in it; otherwise it is parked. */
export interface WorktreeInfo {
  taskId: string;
  title: string;
  path: string;
  branch: string;
  base: string;
  held: boolean;
  /** The folder is gone (deleted by hand); the branch, with every commit, is still there. */
  missing: boolean;
  /** Files changed but not committed: removing it loses them, so the window asks first. */
  uncommitted: number;
  /** Commits on the branch that the base does not have. */
  ahead: number;
  /** Issue 47 item 5: the bytes the folder takes on disk (0 when it is gone), as measured within the last minute
   *  (DiskUseCache). Absent from hosts from before. */
  bytes?: number;
  /** Issue 47 item 5: the folder is gone because the host's parked clean-up removed it after its grace, never
   *  `missing`: its uncommitted work is saved under `savedAs`, or it had none (null). Absent otherwise. */
  cleaned?: { savedAs: string | null };
}

/**
 * A claim folder in this host's data folder for the Thread that the board on screen does not record: another
 * board's of the same Thread folder (its local board, after it moved onto a shared one), one from before boards
 * were named, or a grant of this board cut short. Never this board's work, never another host's.
 */
export interface OtherBoardFolder {
  path: string;
  /** The key of the board it was made for (the 8 hex digits in its path); null: made before boards were named. */
  board: string | null;
  /** That key is the board on screen's: a grant of its own cut short before the board recorded it. */
  thisBoard: boolean;
  taskId: string;
  token: number;
  /** The branch it has checked out (kept when it is cleared), or null when it is detached. */
  branch: string | null;
  /** Files changed but not committed; null when git no longer knows it as a worktree (its files cannot be judged). */
  uncommitted: number | null;
  /** Its commit is on no branch or ref: clearing the folder loses it. */
  unreachable: boolean;
}

/**
 * Why git work under a claim was refused, as the `code` of a window error: a worktree could not be made,
 * removed or merged. Each comes with a message saying what to do.
 */
export const WORKTREE_PROBLEMS = [
  'detached-head', // no current branch to start from, and no base branch set
  'no-base', // the base branch does not exist
  'branch-taken', // forkbench/T-n exists and Forkbench did not make it
  'path-taken', // the worktree's folder exists and is not a worktree
  'uncommitted', // removal would lose uncommitted changes or unmerged commits (retry with force)
  'held', // a claim works in it: release first
  'no-worktree', // the task has none, or the Thread has no isolation
  'merge-conflict', // the branch does not merge cleanly: base untouched
  'wrong-token', // the branch head was not written under the claim that submitted the work
  'base-dirty', // uncommitted changes where the base is checked out would be overwritten
  'base-moved', // the base moved during the merge: approve again
  'stale-approval', // the approved work is no longer the task's work in review (reassigned, released, done again)
  'work-elsewhere', // the work's commit is on another host and could not be fetched here: it cannot be shown, so not approved
  'git', // git itself failed; the message has its words
] as const;
export type WorktreeProblem = (typeof WORKTREE_PROBLEMS)[number];

/** A task branch's work against its base, for review. */
export interface TaskDiff {
  taskId: string;
  branch: string;
  base: string;
  /** The branch head, and the fencing token its trailer names (null when the head carries none). */
  head: string;
  headToken: number | null;
  /** The task the head was written for (its trailer, or the board's record), null where it names none. */
  headTask: string | null;
  /** The token of the claim whose work is under review; approval merges only if headToken equals it. */
  finalToken: number | null;
  commits: number;
  files: Array<{ path: string; status: string; added: number | null; deleted: number | null }>;
  /** Unified diff against the merge base, cut at a size a window can show. */
  patch: string;
  truncated: boolean;
  /** Changes in the worktree not yet committed: not part of the merge. */
  uncommitted: number;
  /** Set when this host cannot show the work (issue 45): its commit is on another host and could not be
   *  fetched. Then there are no files and no patch, and the host refuses to approve it until it can. */
  elsewhere?: WorkElsewhere;
}

/** Why this host cannot show a task's work: it is not in this clone, and could not be fetched here. */
export const WORK_ELSEWHERE = [
  'no-remote', // the Thread names no remote to fetch it from
  'not-pushed', // the remote answered, and does not hold it (its host has not pushed it yet, or could not)
  'unreachable', // the remote could not be reached from this host
  'not-arrived', // something else arrived from the remote than the commit the board recorded
] as const;

/** Where a task's work is when this host cannot show it, for the person to act on. */
export interface WorkElsewhere {
  why: (typeof WORK_ELSEWHERE)[number];
  /** The commit the board recorded as the work. */
  sha: string;
  /** The host that recorded it (its name), null where the board does not say (a board of one host). */
  host: string | null;
  /** The agent that made it (its name where this host knows it, else its id). */
  agent: string;
  /** What a person reads: where the work is, why it is not here, and what to do. */
  message: string;
}


/** What the host pushes to windows. `now` is the host's board clock at sending, for countdowns. */
export type WindowPush =
  | { type: 'board-event'; key: string; event: BoardEvent }
  | { type: 'pane-data'; key: string; agentId: string; data: string }
  | { type: 'agents'; key: string; agents: AgentInfo[] }
  /** A notice for a person, built by the host (src-shared/notices); `about` names what it concerns. */
  | ({ type: 'notify'; key: string } & Notice)
  /** A notice is no longer true (the agent answered, was closed; a newer notice replaced it): windows drop it. */
  | { type: 'notice-gone'; key: string; id: string }
  /** The Thread was closed and opened again on another board store: what windows hold of it is stale. */
  | { type: 'thread-reopened'; key: string };

/** A refused window request: the board's rejection code, or a transport-level one. */
export type WindowError = CallError;

/** The one interface the renderer programs against, whatever carries it. */
export interface WindowApi {
  call<M extends WindowMethod>(method: M, params: WindowParams<M>): Promise<WindowResult<M>>;
  subscribe(listener: (push: WindowPush) => void): () => void;
}

/**
 * A request frame on the WebSocket (serve mode), checked before any of its fields is read: a frame is
 * untrusted JSON, and `{"method":{"toString":1}}` must be refused, not stringified. The method's name is
 * checked against `windowMethods` next (an unknown one is `unknown-method`), then its params against its schema.
 * `id` is a non-negative safe integer so it survives the round trip through JSON unchanged.
 */
export const WsRequestSchema = z
  .object({
    id: z.number().int().min(0),
    method: z.string().max(MAX_METHOD_NAME_CHARS),
    params: z.unknown().optional(),
  })
  .strict();

/** Messages on the WebSocket (serve mode). Electron IPC carries the same request/response shapes. A
 *  `pane-data` push comes as a binary message instead (paneFrame.ts); everything else as this JSON text. */
export type WsClientMessage = Omit<z.infer<typeof WsRequestSchema>, 'method'> & { method: WindowMethod };
export type WsServerMessage = ({ id: number } & WindowReply) | { push: WindowPush };
/** A window call's answer as Electron's IPC and serve's WebSocket both carry it. */
export type WindowReply = Result<unknown, WindowError>;

/** The page address's parameter naming the Thread a window shows (`?thread=KEY`): Electron opens each
 *  window with it, and a reloaded tab reads it before the host has listed the Threads. */
export const THREAD_PARAM = 'thread';
