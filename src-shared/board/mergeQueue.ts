import type { Task } from './model.js';
import { afterOf } from './dependencies.js';
import type { SpendFigures } from '../usage/usage.js';

/**
 * The merge queue's order (issue 34), as one set of functions over the board's state: the host's runner lands
 * with them, `why` and the CLI explain with them, the window draws with them, so none can disagree.
 *
 * Two orders. The person's order is the entries' ranks (approval appends; a move reorders). The landing order
 * is the person's order with one rule on top: a task that waits on another queued task lands after it, however
 * the person ordered them. An entry whose dependency is neither done nor queued is held (fail closed, as a
 * claim is): the queue lands the entries behind it meanwhile.
 */

type Tasks = ReadonlyMap<string, Task>;

/** The queued tasks in the person's order. O(tasks): the queue is read when it changes, not per write. */
export function queuedInRank(tasks: Tasks): Task[] {
  const out: Task[] = [];
  for (const t of tasks.values()) if (t.queued) out.push(t);
  return out.sort((a, b) => (a.queued?.rank ?? 0) - (b.queued?.rank ?? 0));
}

/**
 * The queued tasks in the order they land: repeatedly the first in the person's order none of whose queued
 * dependencies is still to place. The board never stores a dependency cycle, so each round places one.
 * O(queue² · dependencies): the queue is at most Limits.maxQueued long.
 */
export function landingOrder(tasks: Tasks): Task[] {
  const rest = queuedInRank(tasks);
  const out: Task[] = [];
  const placed = new Set<string>();
  const queued = new Set(rest.map((t) => t.id));
  while (rest.length) {
    let i = rest.findIndex((t) => afterOf(t).every((id) => !queued.has(id) || placed.has(id)));
    // Unreachable with an acyclic board; a damaged one still lands in the person's order rather than stall.
    if (i < 0) i = 0;
    const [t] = rest.splice(i, 1) as [Task];
    placed.add(t.id);
    out.push(t);
  }
  return out;
}

/** The tasks `t` waits on that hold its landing: not done yet (queued ahead of it, or elsewhere on the board). */
export function landingWaitsOn(tasks: Tasks, t: Task): string[] {
  return afterOf(t).filter((id) => tasks.get(id)?.state !== 'done');
}

/** The entry to land next: the first in landing order whose every dependency is done; null: none can land. */
export function nextToLand(tasks: Tasks, mine: (t: Task) => boolean = () => true): Task | null {
  for (const t of landingOrder(tasks)) if (mine(t) && landingWaitsOn(tasks, t).length === 0) return t;
  return null;
}

/** One entry as the CLI, MCP and the window list it. */
export interface QueueItem {
  readonly taskId: string;
  readonly title: string;
  /** 1-based place in the landing order. */
  readonly position: number;
  readonly by: string;
  readonly sha: string | null;
  /** Being merged and verified now. */
  readonly landing: boolean;
  /** Tasks it waits on that are not done (queued ahead of it, or held elsewhere): it lands after them. */
  readonly waitsOn: readonly string[];
  /** What the work cost (issue 47): what landing it cost, its totals only (the task's details have the rest);
   *  null when no usage was counted to it. */
  readonly cost: SpendFigures | null;
}

export interface QueueView {
  readonly items: readonly QueueItem[];
  /** The verify command the queue runs on each merge result; null: entries land unchecked, as approval did. */
  readonly verify: string | null;
}

export function queueView(tasks: Tasks, verify: string | null): QueueView {
  const items = landingOrder(tasks).map((t, i) => ({
    taskId: t.id,
    title: t.title,
    position: i + 1,
    by: t.queued?.by ?? '',
    sha: t.queued?.sha ?? null,
    landing: !!t.queued?.landing,
    waitsOn: landingWaitsOn(tasks, t),
    cost: t.cost ? { tokens: t.cost.tokens, usd: t.cost.usd, unpriced: t.cost.unpriced, turns: t.cost.turns } : null,
  }));
  return { items, verify };
}

/**
 * The person's order after moving `taskId` to just before `before` (null: to the end). The ids, or a
 * sentence saying why not. Used by the engine to decide and by the window to show a drop before it is sent.
 */
export function movedOrder(tasks: Tasks, taskId: string, before: string | null): string[] | string {
  const ids = queuedInRank(tasks).map((t) => t.id);
  if (!ids.includes(taskId)) return `${taskId} is not in the merge queue`;
  if (before !== null && !ids.includes(before)) return `${before} is not in the merge queue`;
  if (before === taskId) return `${taskId} cannot move before itself`;
  const out = ids.filter((id) => id !== taskId);
  out.splice(before === null ? out.length : out.indexOf(before), 0, taskId);
  return out;
}
