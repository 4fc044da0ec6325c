import type { Task, ThreadSettings } from './model.js';
import { withDefaults, type Board } from './reducer.js';

/** A board as plain JSON (tasks as an array): what a snapshot file and a window's snapshot both carry. */
export interface SerializedBoard {
  threadId: string;
  goal: string;
  settings: ThreadSettings;
  tasks: Task[];
  nextToken: number;
  nextTaskNumber: number;
  seq: number;
}

export function serializeBoard(b: Readonly<Board>): SerializedBoard {
  return {
    threadId: b.threadId,
    goal: b.goal,
    settings: b.settings,
    tasks: [...b.tasks.values()],
    nextToken: b.nextToken,
    nextTaskNumber: b.nextTaskNumber,
    seq: b.seq,
  };
}

export function deserializeBoard(s: SerializedBoard): Board {
  const { tasks, ...rest } = s;
  // Snapshots from before worktrees existed lack the field: such tasks have none.
  return { ...rest, settings: withDefaults(s.settings), tasks: new Map(tasks.map((t) => [t.id, t.worktree === undefined ? { ...t, worktree: null } : t])) };
}
