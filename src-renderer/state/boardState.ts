import type { BoardEvent } from '../../src-shared/board/events.js';
import { TASK_STATES, type Task, type TaskState } from '../../src-shared/board/model.js';
import { applyEvent, taskNumber, type Board } from '../../src-shared/board/reducer.js';
import type { AgentInfo, ThreadSnapshot } from '../../src-shared/protocol/windowApi.js';

/** Task ids per column, in display order. */
export type Columns = Readonly<Record<TaskState, readonly string[]>>;

export function boardFromSnapshot(s: ThreadSnapshot['board']): Board {
  return {
    threadId: s.threadId,
    goal: s.goal,
    settings: s.settings,
    tasks: new Map(s.tasks.map((t) => [t.id, t])),
    nextToken: s.nextToken,
    nextTaskNumber: s.nextTaskNumber,
    seq: s.seq,
  };
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

/** Event kinds that can change which column a task is in (or add a task). The rest leave columns alone. */
const COLUMN_KINDS: ReadonlySet<BoardEvent['kind']> = new Set([
  'task-added',
  'grant',
  'claim-ended',
  'reassign',
  'submitted',
  'approved',
  'returned',
  'blocked',
  'unblocked',
  'reset',
  'thread-created',
]);

export function changesColumns(kind: BoardEvent['kind']): boolean {
  return COLUMN_KINDS.has(kind);
}

function byNumber(a: Task, b: Task): number {
  const d = taskNumber(a.id) - taskNumber(b.id);
  return Number.isNaN(d) ? a.id.localeCompare(b.id) : d;
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

/** The soonest deadline among the live claims an agent holds, or null when it holds none. */
export function nearestDeadline(board: Board | null, agentId: string): number | null {
  if (!board) return null;
  let best: number | null = null;
  for (const t of board.tasks.values()) {
    const c = t.claim;
    if (c && c.agentId === agentId && (best === null || c.deadline < best)) best = c.deadline;
  }
  return best;
}

/** Amber: the holder looks stuck, or less than a quarter of the lease is left. */
export function isWarning(remainingMs: number, leaseMs: number, stalled: boolean): boolean {
  return stalled || (leaseMs > 0 && remainingMs < leaseMs / 4);
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
