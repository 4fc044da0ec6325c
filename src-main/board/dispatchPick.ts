import type { Task } from '../../src-shared/board/model.js';
import { backoffLeft, takerTest } from '../../src-shared/board/dispatch.js';

/** What dispatch found for one idle agent: the task to grant, or none and when one it backs off from frees. */
export interface DispatchPick {
  readonly taskId: string | null;
  /** Board time at which the earliest back-off that kept a ready task from this agent ends; null when none did. */
  readonly wakeAt: number | null;
}

/**
 * The task the board grants an idle dispatching agent: the lowest-numbered ready one (`ready`, in order) that
 * it may take (the task's profiles and labels) and that is not backing off from it. O(ready tasks walked):
 * the first fit ends the walk, so an agent any task fits costs one step.
 */
export function pickForAgent(tasks: ReadonlyMap<string, Task>, ready: Iterable<string>, agentId: string, labels: readonly string[], now: number): DispatchPick {
  let wakeAt: number | null = null;
  const mayTake = takerTest(agentId, labels);
  for (const id of ready) {
    const t = tasks.get(id);
    if (!t || !mayTake(t)) continue;
    const left = backoffLeft(t, agentId, now);
    if (left === 0) return { taskId: id, wakeAt: null };
    wakeAt = Math.min(wakeAt ?? Infinity, now + left);
  }
  return { taskId: null, wakeAt };
}
