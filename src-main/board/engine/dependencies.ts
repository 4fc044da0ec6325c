import { HOST_ACTOR, type Task } from '../../../src-shared/board/model.js';
import { ok, reject, type Result } from '../../../src-shared/board/result.js';
import { Limits } from '../../../src-shared/board/limits.js';
import { cycleText, cycleThrough, waitingOn, waitingText } from '../../../src-shared/board/dependencies.js';
import type { EngineCore } from './engineCore.js';

/** What tasks wait on (issue 34): which waits are allowed, and what a grant ahead of them says. */
export class Dependencies {
  constructor(private readonly core: EngineCore) {}

  /**
   * What `taskId` may wait on: tasks on the board, not itself, and none that waits on it already (a cycle
   * would keep every task in it waiting for ever), each refused with a reason that names the task or the cycle.
   */
  checkAfter(taskId: string, after: readonly string[]): Result<string[]> {
    const tasks = this.core.board.tasks;
    const ids = [...new Set(after)];
    if (ids.length > Limits.maxAfter) return reject('invalid-input', `a task waits on at most ${Limits.maxAfter} others`);
    for (const id of ids) {
      if (id === taskId) return reject('invalid-input', `${taskId} cannot wait on itself`);
      if (!tasks.has(id)) return reject('no-such-task', `${taskId} cannot wait on ${id}: there is no task ${id}`);
    }
    const cycle = cycleThrough(tasks, taskId, ids);
    if (cycle) return reject('invalid-input', `${taskId} cannot wait on ${cycle[1]}: that would close a cycle, ${cycleText(cycle)}`);
    return ok(ids);
  }

  /** An open task that waits on others: refused naming them, or with `force` the ones it goes ahead of. */
  notReady(t: Task, force: boolean): Result<string[]> {
    const tasks = this.core.board.tasks;
    const ids = waitingOn(tasks, t);
    if (force) return ok(ids);
    const hint = 'claim it by id with force (forkbench claim ID --force) to start it anyway';
    return reject('not-ready', `${t.id} waits on ${waitingText(tasks, ids)}; it is ready once ${ids.length === 1 ? 'that is' : 'they are all'} done, or ${hint}`);
  }

  /** The board's note on a grant that went ahead of what the task waits on. */
  noteForced(taskId: string, agentId: string, waited: string[]): Task {
    return this.core.step({ kind: 'note', taskId, by: HOST_ACTOR, text: `claimed by ${agentId} before ${waited.join(', ')} ${waited.length === 1 ? 'was' : 'were'} done, forced` });
  }

  /** Why `claim` with no id found nothing: none open, or every open one waits on others (how many, which first). */
  nothingReady(): string {
    const tasks = this.core.board.tasks;
    let waiting = 0;
    let first: Task | undefined;
    for (const t of tasks.values()) {
      if (t.state !== 'open') continue;
      waiting++;
      first ??= t;
    }
    if (!first) return 'no open task to claim';
    return `no ready task to claim: ${waiting} open task${waiting === 1 ? ' waits' : 's wait'} on others (${first.id} on ${waitingText(tasks, waitingOn(tasks, first))}); forkbench why ID says what each waits on`;
  }
}
