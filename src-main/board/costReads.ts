import type { CostAnswer } from '../../src-shared/protocol/agentMethods.js';
import { taskCostCsv, taskCostView, threadCostCsv, threadCostView, type TaskCostView } from '../../src-shared/usage/costView.js';
import { reject, ok, type Result } from '../../src-shared/board/result.js';
import type { BoardService } from './boardService.js';

/**
 * The board's cost reads (issue 47), one for every surface: `forkbench cost` and its MCP tool (the agents' API),
 * and the window's cost methods. A task's view reads its events for the facts the board keeps only there (how
 * long its claims worked, their lapses and commits); the Thread's reads what the fold keeps.
 */
export async function taskCost(board: BoardService, taskId: string): Promise<Result<TaskCostView>> {
  const t = board.state.tasks.get(taskId);
  if (!t) return reject('no-such-task', `no task ${taskId}`);
  const events = await board.taskLog(taskId);
  // The task as it is after its log was read: a usage event that landed meanwhile is in both or neither.
  return ok(taskCostView(board.state.tasks.get(taskId) ?? t, events, board.clock.wall()));
}

export function threadCost(board: BoardService): ReturnType<typeof threadCostView> {
  const b = board.state;
  return threadCostView(b.tasks.values(), b.costs, b.settings.budget, board.clock.wall());
}

export function threadCsv(board: BoardService): string {
  return threadCostCsv(board.state.tasks.values(), board.state.costs);
}

/** `cost`'s answer: a task's view (or its CSV), else the Thread's (or its CSV). */
export async function costAnswer(board: BoardService, taskId: string | undefined, csv: boolean): Promise<Result<CostAnswer>> {
  if (taskId === undefined) return ok(csv ? { csv: threadCsv(board) } : { thread: threadCost(board) });
  const v = await taskCost(board, taskId);
  if (!v.ok) return v;
  return ok(csv ? { csv: taskCostCsv(v.value) } : { task: v.value });
}
