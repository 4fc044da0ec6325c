import type { BoardEvent } from '../../src-shared/board/events.js';
import { TASK_STATES, type Task, type TaskState } from '../../src-shared/board/model.js';
import { applyEvent, compareTaskIds, type Board } from '../../src-shared/board/reducer.js';
import { deserializeBoard } from '../../src-shared/board/serialized.js';
import type { AgentInfo, ThreadSnapshot } from '../../src-shared/protocol/windowApi.js';
import { LeaseFractions } from '../../src-shared/board/limits.js';
import { leaseRuns } from '../../src-shared/board/lease.js';

/** Task ids per column, in display order. */
export type Columns = Readonly<Record<TaskState, readonly string[]>>;

/** The host's snapshot, read by the same function the host reads its snapshot files with. */
export function boardFromSnapshot(s: ThreadSnapshot['board']): Board {
  return deserializeBoard(s);
}

export type ApplyOutcome =
  /** Applied; the board moved on by one event. */
  | 'applied'
  /** Already reflected (seq at or below the board's): e.g. an event that raced a snapshot. Ignored. */
  | 'duplicate'
  /** One or more events are missing (a push was lost): the board must be fetched again. */
  | 'gap'
  /** The event does not fit this board (the shared reducer refused it): fetch again. */
  | 'mismatch';

/** Apply one pushed event to the renderer's copy of the board with the shared reducer, or say why not. */
export function applyLiveEvent(board: Board, e: BoardEvent): ApplyOutcome {
  if (e.seq <= board.seq) return 'duplicate';
  if (e.seq !== board.seq + 1) return 'gap';
  try {
    applyEvent(board, e);
    return 'applied';
  } catch {
    return 'mismatch';
  }
}


/** Display order of task ids (shared with the host, which sends each agent's claims in it). */
export { compareTaskIds };

function byNumber(a: Task, b: Task): number {
  return compareTaskIds(a.id, b.id);
}

/**
 * Group tasks into columns, oldest task first. A column whose ids did not change keeps the previous array,
 * so a component selecting `columns.open` re-renders only when the open column really changed.
 */
export function computeColumns(board: Board, prev?: Columns): Columns {
  const groups = Object.fromEntries(TASK_STATES.map((s) => [s, [] as Task[]])) as Record<TaskState, Task[]>;
  for (const t of board.tasks.values()) groups[t.state].push(t);
  const out = {} as Record<TaskState, readonly string[]>;
  for (const s of TASK_STATES) {
    const ids = groups[s].sort(byNumber).map((t) => t.id);
    const old = prev?.[s];
    out[s] = old && sameIds(old, ids) ? old : ids;
  }
  return out;
}

export const EMPTY_COLUMNS: Columns = computeColumns({ tasks: new Map() } as Board);

/** The board holds no task in any state (a new Thread). */
export const noTasks = (cols: Columns): boolean => Object.values(cols).every((ids) => ids.length === 0);

/** Where `id` is, or would go, in an array sorted by compareTaskIds: the first index not before it. */
function lowerBound(ids: readonly string[], id: string): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareTaskIds(ids[mid] as string, id) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A copy of a sorted id list with `id` in its place (the same array if it is there already). */
export function insertSorted(ids: readonly string[], id: string): readonly string[] {
  const i = lowerBound(ids, id);
  if (ids[i] === id) return ids;
  // New tasks get the next number, so the common case is an append.
  return i === ids.length ? [...ids, id] : [...ids.slice(0, i), id, ...ids.slice(i)];
}

/** A copy of a sorted id list without `id` (the same array if it was not there). */
export function removeSorted(ids: readonly string[], id: string): readonly string[] {
  let i = lowerBound(ids, id);
  if (ids[i] !== id) i = ids.indexOf(id); // only if the list was not in order: never drop a card silently
  if (i < 0) return ids;
  return [...ids.slice(0, i), ...ids.slice(i + 1)];
}

/**
 * One task changed column (`from` null: it is new; `to` null: it is gone). Only the two columns it left and
 * entered get new arrays, found by binary search, so a board event costs O(log n + column length) copies
 * instead of regrouping and sorting every task; the other columns keep their arrays, and their components
 * do not re-render.
 */
export function moveTask(cols: Columns, taskId: string, from: TaskState | null, to: TaskState | null): Columns {
  if (from === to) return cols;
  const out: Record<TaskState, readonly string[]> = { ...cols };
  if (from) out[from] = removeSorted(cols[from], taskId);
  if (to) out[to] = insertSorted(cols[to], taskId);
  return out;
}

/**
 * One event changed one task (`before` and `after` are that task's objects; the reducer replaces, never
 * mutates, them): the columns after it. Returns the same columns when the task stayed in its column (a
 * renewal, a note, an edit, a change of holder), so nothing that draws columns re-renders. Which agent holds
 * what is the host's to say: it comes with the agent list (`AgentInfo.claims`), never computed here.
 */
export function updateColumns(columns: Columns, taskId: string, before: Task | undefined, after: Task | undefined): Columns {
  return moveTask(columns, taskId, before?.state ?? null, after?.state ?? null);
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The "lapsed" mark: the task's last claim ran out and nobody has claimed it since. Derived from the task
 * alone (the reducer keeps `lastClaim`), so it survives a reload and goes away exactly when a new claim
 * starts (grant or reassign sets `claim`; the next claim end replaces `lastClaim`).
 */
export function isLapsed(task: Pick<Task, 'claim' | 'lastClaim'>): boolean {
  return task.claim === null && task.lastClaim?.reason === 'lapsed';
}

/** The soonest deadline among the live claims an agent holds that count down (`countsDown`), or null. Scans every task:
 *  the window uses `nearestDeadlineOf` with the agent's claims as the host sent them instead. */
export function nearestDeadline(board: Board | null, agentId: string): number | null {
  if (!board) return null;
  let best: number | null = null;
  for (const t of board.tasks.values()) {
    const c = t.claim;
    if (c && countsDown(t) && c.agentId === agentId && (best === null || c.deadline < best)) best = c.deadline;
  }
  return best;
}

/**
 * Whether a task's lease is a deadline its holder works against, shown as a countdown (the card's bar, the
 * tab's ring, the agent list). A task in review keeps its claim, held by the board for the person (lease.ts
 * leaseRuns; a reject gives it back to its holder with a full lease): counting it down on the agent's tab
 * said the agent was late on work it had finished (issue 32). The board's rule and the drawing are one.
 */
export function countsDown(task: Pick<Task, 'claim' | 'state'>): boolean {
  return task.claim !== null && leaseRuns(task);
}

/** The soonest deadline among the given tasks' live claims (an agent's, as the host sent them) that count
 *  down (`countsDown`): O(its claims). */
export function nearestDeadlineOf(board: Board | null, taskIds: readonly string[] | undefined): number | null {
  if (!board || !taskIds) return null;
  let best: number | null = null;
  for (const id of taskIds) {
    const t = board.tasks.get(id);
    const c = t?.claim;
    if (t && c && countsDown(t) && (best === null || c.deadline < best)) best = c.deadline;
  }
  return best;
}

/** Amber: the holder looks stuck, or less than the warning part of the lease is left. */
export function isWarning(remainingMs: number, leaseMs: number, stalled: boolean): boolean {
  return stalled || (leaseMs > 0 && remainingMs < leaseMs * LeaseFractions.warnBelow);
}

/** Agents whose status just became `exited`, for notifications. */
export function newlyExited(prev: readonly AgentInfo[], next: readonly AgentInfo[]): AgentInfo[] {
  const before = new Map(prev.map((a) => [a.id, a.status]));
  return next.filter((a) => a.status === 'exited' && before.has(a.id) && before.get(a.id) !== 'exited');
}

/** "exited with code 1", "killed by signal 9" — as a tab shows it. */
export function describeExit(a: Pick<AgentInfo, 'exit'>): string {
  const x = a.exit;
  if (!x) return 'exited';
  return x.signal ? `killed by signal ${x.signal}` : `exited with code ${x.code}`;
}
