import type { Task } from '../../src-shared/board/model.js';
import { backoffLeft, LABEL_PREFIX, profileOfAgent, takersOf } from '../../src-shared/board/dispatch.js';
import { ReadyIndex } from './readyIndex.js';

/** What dispatch found for one idle agent: the task to grant, or none and when one it backs off from frees. */
export interface DispatchPick {
  readonly taskId: string | null;
  /** Board time at which the earliest back-off that kept a ready task from this agent ends; null when none did. */
  readonly wakeAt: number | null;
}

/** The name under which tasks that name no one are kept: any agent may take them. */
const ANYONE = '*';

/**
 * Where dispatch finds the next ready task an agent may take without walking the ready tasks it may not: one
 * ReadyIndex per name a task's filter lists (`claude`, `label:frontend`), and one of the tasks that list none.
 * An agent may take exactly the tasks in the indexes of its profile, its labels and `*`, so its task is the
 * lowest of those indexes' first ready tasks: each amortized O(log n), as claim-next is, however many ready
 * tasks ahead are for others (a single walk in order passed them all: 20-30 ms at 10k here).
 *
 * Built on the first dispatch, from the board as it is then, so a board that never dispatches pays nothing.
 * An index hears its members' changes, and every task's finishing (or coming back from done): a task's
 * readiness turns on tasks of any filter, and an index must see the task it waits on finish to find it again
 * below its cursor. A claim or a release is one O(1) call on its own index; renewals and notes call none.
 */
export class TakerIndexes {
  private readonly byName = new Map<string, ReadyIndex>();
  private built = false;

  constructor(
    private readonly tasks: ReadonlyMap<string, Task>,
    private readonly end: () => number,
  ) {}

  /** `taskId` changed from `before` (undefined: new); `filterChanged`: what it lists changed. */
  update(taskId: string, before: Task | undefined, filterChanged: boolean): void {
    if (!this.built) return;
    const t = this.tasks.get(taskId);
    if (!t) return;
    for (const name of takersOf(t)) this.indexOf(name);
    // A task that changed what it lists is new to every index: each registers what it waits on and finds it
    // again if it is now its member and ready below its cursor. A task done or no longer done may ready (or
    // hold back) members of any index, each of which finds them by its own reverse edges.
    const doneChanged = before !== undefined && (before.state === 'done') !== (t.state === 'done');
    if (before === undefined || filterChanged || doneChanged) {
      for (const idx of this.byName.values()) idx.update(taskId, filterChanged ? undefined : before);
      return;
    }
    // Anything else (a claim, a release, what it waits on) concerns only the indexes it is a member of.
    const takers = takersOf(t);
    if (takers.length === 0) this.byName.get(ANYONE)?.update(taskId, before);
    else for (const name of takers) this.byName.get(name)?.update(taskId, before);
  }

  /**
   * The lowest ready task `agentId` (with `labels`) may take and is not backing off from, or none and when
   * the earliest back-off that kept one from it ends. An index whose first ready task is backing off from
   * the agent is walked on in order (O(its ready tasks passed)): back-offs are few and short. `held`: tasks
   * never given now (their budget is spent, issue 47), walked past the same way: they are few.
   */
  pick(agentId: string, labels: readonly string[], now: number, held: (t: Task) => boolean = () => false): DispatchPick {
    this.build();
    const names = [ANYONE, ...labels.map((l) => `${LABEL_PREFIX}${l}`)];
    const profile = profileOfAgent(agentId);
    if (profile !== null) names.push(profile);
    let best: string | null = null;
    let bestN = Infinity;
    let wakeAt: number | null = null;
    for (const name of names) {
      const idx = this.byName.get(name);
      if (!idx) continue;
      const first = idx.next();
      if (first === undefined || Number(first.slice(2)) >= bestN) continue;
      const free = (t: Task): boolean => backoffLeft(t, agentId, now) === 0 && !held(t);
      for (const id of free(this.tasks.get(first) as Task) ? [first] : idx.inOrder()) {
        const n = Number(id.slice(2));
        if (n >= bestN) break;
        // Held back for good (a spent budget, issue 47) until a person acts: no wake-up for it.
        if (held(this.tasks.get(id) as Task)) continue;
        const left = backoffLeft(this.tasks.get(id) as Task, agentId, now);
        if (left > 0) {
          wakeAt = Math.min(wakeAt ?? Infinity, now + left);
          continue;
        }
        best = id;
        bestN = n;
        break;
      }
    }
    return { taskId: best, wakeAt: best === null ? wakeAt : null };
  }

  private build(): void {
    if (this.built) return;
    this.built = true;
    this.indexOf(ANYONE);
    for (const t of this.tasks.values()) for (const name of takersOf(t)) this.indexOf(name);
  }

  private indexOf(name: string): ReadyIndex {
    let idx = this.byName.get(name);
    if (idx) return idx;
    const member = name === ANYONE ? (t: Task) => takersOf(t).length === 0 : (t: Task) => takersOf(t).includes(name);
    idx = new ReadyIndex(this.tasks, this.end, member);
    this.byName.set(name, idx);
    for (const id of this.tasks.keys()) idx.update(id, undefined);
    return idx;
  }
}
