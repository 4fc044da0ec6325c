import type { Task } from '../../src-shared/board/model.js';
import { afterOf, isReady, NO_DEPENDENCIES } from '../../src-shared/board/dependencies.js';
import { taskNumber } from '../../src-shared/board/reducer.js';
import { IndexedHeap } from './indexedHeap.js';

/**
 * Where "claim the next ready task" finds it (ready: open, and every task it waits on done), in amortized
 * O(log n) however many tasks wait, without a cost on every claim and release.
 *
 * A cursor, `floor`, only ever moves forward: the scan moves it past tasks that are not ready. Every task
 * below it that becomes ready since (it opens with its dependencies done, or the last task it waited on is
 * done, found by the reverse edges) goes into `below`, a heap by number; an entry that is no longer ready
 * (claimed since) is dropped when it reaches the top. The lowest ready task is then `below`'s valid top, or
 * else the scan's next find. Task numbers are dense (T-1…T-n, never deleted), so the scan, over the board's
 * whole life, passes each number once. Claims and releases at or above the cursor (claims by id, agents
 * working in order) touch no heap: a heap of every ready task made claim by id a third slower at 10k tasks,
 * and a cursor alone that moved back rescanned the waiting tasks between (7.5 ms p99 at 10k). A renewal or a
 * note changes neither state nor dependencies, so the fenced write path pays nothing.
 */
export class ReadyIndex {
  private floor = 1;
  /** Tasks below the floor that became ready after the scan passed them (some since claimed: dropped lazily). */
  private readonly below = new IndexedHeap<string>();
  /** For each task, the tasks that wait on it. */
  private readonly dependents = new Map<string, Set<string>>();

  constructor(
    private readonly tasks: ReadonlyMap<string, Task>,
    /** One past the highest task number on the board. */
    private readonly end: () => number,
    /** The tasks this index finds (dispatch keeps one per name a task's filter lists: takerIndexes.ts); all by default. */
    private readonly member: (t: Task) => boolean = () => true,
  ) {}

  /** The lowest-numbered ready task. */
  next(): string | undefined {
    for (let top = this.below.peek(); top; top = this.below.peek()) {
      const t = this.tasks.get(top.key);
      if (t && this.member(t) && isReady(this.tasks, t)) return top.key;
      this.below.delete(top.key);
    }
    const end = this.end();
    for (let n = this.floor; n < end; n++) {
      const id = `T-${n}`;
      const t = this.tasks.get(id);
      if (t && this.member(t) && isReady(this.tasks, t)) {
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
    // A budget set or raised may make a task a member again (the engine's index leaves out spent ones).
    if (before === undefined || before.state !== t.state || was !== is || before.budget !== t.budget) this.readied(t);
    if (before !== undefined && (before.state === 'done') !== (t.state === 'done')) {
      const waiting = this.dependents.get(taskId);
      if (waiting) for (const id of waiting) this.readied(this.tasks.get(id));
    }
  }

  /** A task that may have become ready: below the floor the scan will not see it again, so `below` keeps it. */
  private readied(t: Task | undefined): void {
    if (!t || t.state !== 'open' || !this.member(t)) return;
    const n = taskNumber(t.id);
    if (n < this.floor && isReady(this.tasks, t)) this.below.set(t.id, n);
  }

  /**
   * Every ready task, lowest number first, found lazily: what dispatch walks until a task fits the idle agent
   * (its filter, its back-off). The tasks below the cursor that became ready come first (each is below it),
   * then the scan from the cursor. Read only: the cursor does not move, so a caller may stop anywhere; it must
   * not change the board while it walks.
   */
  *inOrder(): Generator<string> {
    const below: number[] = [];
    for (const id of this.below.keys()) {
      const t = this.tasks.get(id);
      if (t && this.member(t) && isReady(this.tasks, t)) below.push(taskNumber(id));
    }
    below.sort((a, b) => a - b);
    for (const n of below) yield `T-${n}`;
    const end = this.end();
    for (let n = this.floor; n < end; n++) {
      const t = this.tasks.get(`T-${n}`);
      if (t && this.member(t) && isReady(this.tasks, t)) yield t.id;
    }
  }
}
