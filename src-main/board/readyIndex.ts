import type { Task } from '../../src-shared/board/model.js';
import { afterOf, isReady, NO_DEPENDENCIES } from '../../src-shared/board/dependencies.js';
import { taskNumber } from '../../src-shared/board/reducer.js';
import { IndexedHeap } from './indexedHeap.js';

/**
 * The ready tasks (open, every task they wait on done), lowest number first, so "claim the next ready task"
 * is a peek on a 10k-task board however many open tasks wait on others ahead of it. Kept in step one task
 * change at a time: a change of what a task waits on, or of its state, rechecks that task; a task becoming
 * done or leaving done rechecks the tasks that wait on it (the reverse edges), and nothing else. A renewal or
 * a note changes neither, so the fenced write path pays one comparison of two fields.
 */
export class ReadyIndex {
  private readonly ready = new IndexedHeap<string>();
  /** For each task, the tasks that wait on it. */
  private readonly dependents = new Map<string, Set<string>>();

  constructor(private readonly tasks: ReadonlyMap<string, Task>) {}

  /** The lowest-numbered ready task. */
  next(): string | undefined {
    return this.ready.peek()?.key;
  }

  has(taskId: string): boolean {
    return this.ready.has(taskId);
  }

  /** `taskId` changed from `before` (undefined: new to the index). */
  update(taskId: string, before: Task | undefined): void {
    const t = this.tasks.get(taskId);
    if (!t) return;
    const was = before ? afterOf(before) : NO_DEPENDENCIES;
    const is = afterOf(t);
    if (was !== is) {
      for (const id of was) this.dependents.get(id)?.delete(taskId);
      for (const id of is) {
        let set = this.dependents.get(id);
        if (!set) this.dependents.set(id, (set = new Set()));
        set.add(taskId);
      }
    }
    if (before === undefined || before.state !== t.state || was !== is) this.recheck(t);
    if (before === undefined || (before.state === 'done') !== (t.state === 'done')) {
      const waiting = this.dependents.get(taskId);
      if (waiting) for (const id of waiting) this.recheck(this.tasks.get(id));
    }
  }

  private recheck(t: Task | undefined): void {
    if (!t) return;
    if (isReady(this.tasks, t)) this.ready.set(t.id, taskNumber(t.id));
    else this.ready.delete(t.id);
  }
}
