import type { Task } from './model.js';
import { isInState } from './stateWords.js';

/**
 * Dependencies between tasks (issue 34): a task waits on others and is ready only once every one of them is
 * done (AND). Fail closed: a task it waits on that is anywhere but done (reset, sent back, in needs-attention,
 * even missing from the board) keeps it waiting. The engine decides with these, the window draws with them,
 * and `why` explains with them, so the three cannot disagree.
 */

/** The tasks a task waits on, as the board holds them (none for a task from before dependencies). */
export const NO_DEPENDENCIES: readonly string[] = [];
export const afterOf = (t: Task): readonly string[] => t.after ?? NO_DEPENDENCIES;

type Tasks = ReadonlyMap<string, Task>;

/** The tasks `t` waits on that are not done yet, in the order it names them. */
export function waitingOn(tasks: Tasks, t: Task): string[] {
  const out: string[] = [];
  for (const id of afterOf(t)) if (tasks.get(id)?.state !== 'done') out.push(id);
  return out;
}

/** Whether every task `t` waits on is done (true for a task that waits on none). O(its dependencies). */
export function dependenciesDone(tasks: Tasks, t: Task): boolean {
  for (const id of afterOf(t)) if (tasks.get(id)?.state !== 'done') return false;
  return true;
}

/** Open and waiting on nothing that is not done: what `claim` with no id may take. */
export function isReady(tasks: Tasks, t: Task): boolean {
  return t.state === 'open' && dependenciesDone(tasks, t);
}

/** "T-3 (in review), T-5 (open)": what a task still waits on, each with where it is. */
export function waitingText(tasks: Tasks, ids: readonly string[]): string {
  return ids.map((id) => `${id} (${stateOf(tasks, id)})`).join(', ');
}

function stateOf(tasks: Tasks, id: string): string {
  const d = tasks.get(id);
  return d ? isInState(d.state).replace(/^is /, '') : 'not on the board';
}

/**
 * The cycle that making `taskId` wait on `after` would close, as the ids around it (`['T-3', 'T-5', 'T-3']`),
 * or null when there is none. A breadth-first walk from the new dependencies along what each task waits on
 * (so the cycle named is a shortest one): reaching `taskId` is the cycle. Iterative, since a chain can be as
 * long as the board; the stored graph never has a cycle, so the walk ends. O(tasks + edges).
 */
export function cycleThrough(tasks: Tasks, taskId: string, after: readonly string[]): string[] | null {
  // Each task reached, with the one whose dependency led to it (taskId itself for the new ones).
  const from = new Map<string, string>();
  const queue: string[] = [];
  for (const id of after) {
    if (from.has(id)) continue;
    from.set(id, taskId);
    queue.push(id);
  }
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i] as string;
    if (id === taskId) {
      const path = [taskId];
      for (let at: string = from.get(taskId) as string; at !== taskId; at = from.get(at) as string) path.push(at);
      path.push(taskId);
      return path.reverse();
    }
    const t = tasks.get(id);
    for (const next of t ? afterOf(t) : NO_DEPENDENCIES) {
      if (from.has(next)) continue;
      from.set(next, id);
      queue.push(next);
    }
  }
  return null;
}

/** Words that clear what a task waits on, typed where a list of ids goes (`--after ''`, `--after none`). */
export const NO_AFTER_WORDS: readonly string[] = ['', 'none'];

/** What a task waits on, as a person or agent types it: `T-3, t-5` (commas, spaces, any case); '' or `none`
 *  for none. Ids are checked by whoever reads the list (the board's schema). */
export function parseAfterText(s: string): string[] {
  const trimmed = s.trim();
  if (NO_AFTER_WORDS.includes(trimmed.toLowerCase())) return [];
  return trimmed.split(/[\s,]+/).filter((id) => id !== '').map((id) => id.toUpperCase());
}

/** "T-3 → T-5 → T-3" */
export const cycleText = (ids: readonly string[]): string => ids.join(' → ');
