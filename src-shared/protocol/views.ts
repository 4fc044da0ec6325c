import type { Note, Task, TaskState } from '../board/model.js';
import type { Board } from '../board/reducer.js';
import { leaseRuns, remainingMs } from '../board/lease.js';
import type { AgentStateInfo } from '../agents/agentLife.js';
import { afterOf, waitingOn } from '../board/dependencies.js';

/**
 * What crosses a process boundary about claims. The host's monotonic deadlines mean nothing elsewhere, so a
 * claim travels as the time it has left, measured when it was sent; transit makes it end late, never early.
 */
export interface ClaimView {
  readonly taskId: string;
  readonly agentId: string;
  /** The fencing token: name it in every later write so a leftover write from an older claim is refused. */
  readonly token: number;
  readonly remainingMs: number;
  /** The board holds the claim for the person while the task is in review (lease.ts leaseRuns): it does not
   *  run down, whatever `remainingMs` says; a send-back gives a full lease. Absent while it runs. */
  readonly held?: true;
}

/** A task as an agent or the CLI sees it: times as "ms left", never as host clock readings. */
export interface TaskView {
  readonly id: string;
  readonly title: string;
  readonly body: string;
  readonly state: TaskState;
  readonly claim: ClaimView | null;
  readonly attempts: number;
  readonly notes: readonly Note[];
  readonly verify: string | null;
  /** Where to work on the task: its git worktree and branch (none when the Thread's folder is not a repository). */
  readonly worktree: WorktreeView | null;
  /** Every task it waits on (issue 34), done or not; absent when none. */
  readonly after?: readonly string[];
  /** Those of them not done yet: while any is, the task is not ready. Absent when none. */
  readonly waitingOn?: readonly string[];
  /** Who may take it when the board dispatches (profiles, `label:` labels); absent: any agent. */
  readonly for?: readonly string[];
}

export interface WorktreeView {
  readonly path: string;
  readonly branch: string;
  readonly base: string;
}

export interface BoardView {
  readonly threadId: string;
  readonly goal: string;
  readonly leaseMs: number;
  readonly tasks: readonly Omit<TaskView, 'body' | 'notes' | 'worktree' | 'after'>[];
  /** Every agent of the Thread with its state, so agents and scripts see who waits on the person. */
  readonly agents?: readonly AgentStateView[];
}

/** One agent as the board's answer lists it. */
export interface AgentStateView extends AgentStateInfo {
  readonly id: string;
  readonly name: string;
}

export function claimView(task: Task, now: number): ClaimView | null {
  const c = task.claim;
  return c ? { taskId: task.id, agentId: c.agentId, token: c.token, remainingMs: remainingMs(c, now), ...(leaseRuns(task) ? {} : { held: true as const }) } : null;
}

/** What a task waits on, as a view carries it: only when it waits on something, so old answers read the same. */
function dependencyView(tasks: ReadonlyMap<string, Task>, task: Task, all: boolean): { after?: readonly string[]; waitingOn?: readonly string[] } {
  if (afterOf(task).length === 0) return {};
  const waiting = waitingOn(tasks, task);
  return { ...(all ? { after: afterOf(task) } : {}), ...(waiting.length ? { waitingOn: waiting } : {}) };
}

export function taskView(task: Task, now: number, tasks?: ReadonlyMap<string, Task>): TaskView {
  return {
    id: task.id,
    title: task.title,
    body: task.body,
    state: task.state,
    claim: claimView(task, now),
    attempts: task.attempts,
    notes: task.notes,
    verify: task.verify,
    worktree: worktreeView(task),
    ...(tasks ? dependencyView(tasks, task, true) : {}),
    ...(task.for?.length ? { for: task.for } : {}),
  };
}

export function worktreeView(task: Task): WorktreeView | null {
  const w = task.worktree;
  return w ? { path: w.path, branch: w.branch, base: w.base } : null;
}

export function boardView(board: Readonly<Board>, now: number): BoardView {
  return {
    threadId: board.threadId,
    goal: board.goal,
    leaseMs: board.settings.leaseMs,
    tasks: [...board.tasks.values()].map((t) => ({
      id: t.id,
      title: t.title,
      state: t.state,
      claim: claimView(t, now),
      attempts: t.attempts,
      verify: t.verify,
      ...dependencyView(board.tasks, t, false),
    })),
  };
}
