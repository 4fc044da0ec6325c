import type { Task } from '../../src-shared/board/model.js';
import { afterOf, isReady, NO_DEPENDENCIES } from '../../src-shared/board/dependencies.js';
import { taskNumber } from '../../src-shared/board/reducer.js';

/**
 * Where "claim the next ready task" starts looking (ready: open, and every task it waits on done). A cursor:
 * no ready task has a number below `floor`. Task numbers are dense (T-1…T-n, never deleted), so a claim or a
 * release costs a comparison, where a sorted set of ready tasks cost a heap operation on every change of state
 * (a third of a claim's time at 10k tasks). The scan moves the cursor past tasks that wait, so a board whose
 * first 9,999 tasks wait is scanned once, not at every claim; the cursor moves back only when a task becomes
 * ready: it opens with its dependencies done, or the last task it waited on is done. The reverse edges (who
 * waits on whom) make that second case a walk over the tasks that wait on the one that changed, and nothing
 * else. A renewal or a note changes neither state nor dependencies, so the fenced write path pays nothing.
 */
export class ReadyIndex {
  private floor = 1;
  /** For each task, the tasks that wait on it. */
  private readonly dependents = new Map<string, Set<string>>();

  constructor(
    private readonly tasks: ReadonlyMap<string, Task>,
    /** One past the highest task number on the board. */
    private readonly end: () => number,
  ) {}

  /** The lowest-numbered ready task. */
  next(): string | undefined {
    const end = this.end();
    for (let n = this.floor; n < end; n++) {
      const id = `T-${n}`;
      const t = this.tasks.get(id);
      if (t && isReady(this.tasks, t)) {
        this.floor = n;
        return id;
      }
    }
    this.floor = end;
    return undefined;
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
    if (before === undefined || before.state !== t.state || was !== is) this.readied(t);
    if (before !== undefined && (before.state === 'done') !== (t.state === 'done')) {
      const waiting = this.dependents.get(taskId);
      if (waiting) for (const id of waiting) this.readied(this.tasks.get(id));
    }
  }

  /** A task that may have become ready: the cursor comes back to it if it has. */
  private readied(t: Task | undefined): void {
    if (t && isReady(this.tasks, t)) this.floor = Math.min(this.floor, taskNumber(t.id));
  }
}
