import type { AgentState, StateSource } from '../../../src-shared/agents/agentLife.js';
import { planCarry, type CarryOutcome, type CarrySource } from '../../../src-shared/board/boardCarry.js';
import { afterOf } from '../../../src-shared/board/dependencies.js';
import { USER, type Task } from '../../../src-shared/board/model.js';
import { ok, reject, type Result } from '../../../src-shared/board/result.js';
import type { SettingsPatch } from '../../../src-shared/board/schemas.js';
import { isInState } from '../../../src-shared/board/stateWords.js';
import type { EngineCore } from './engineCore.js';
import type { WriteLimits } from './writeLimits.js';
import type { Dependencies } from './dependencies.js';
import { sameList } from './lists.js';

/** A task's text as the edge validated it (src-shared/board/schemas.ts): the title trimmed, one line. */
export interface TaskText {
  title: string;
  body?: string;
  verify?: string | null;
}

/** What an edit changes a task's text by. */
export function editGrowth(t: Task, patch: Partial<TaskText>): number {
  let d = 0;
  if (patch.title !== undefined) d += patch.title.length - t.title.length;
  if (patch.body !== undefined) d += patch.body.length - t.body.length;
  if (patch.verify !== undefined) d += (patch.verify?.length ?? 0) - (t.verify?.length ?? 0);
  return d;
}

/** The fields an edit changes; an edit that changes none is refused rather than logged as a change. */
export function changes(patch: Partial<TaskText>, after?: readonly string[]): Result<Partial<TaskText>> {
  const out = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<TaskText>;
  if (Object.keys(out).length === 0 && after === undefined) return reject('invalid-input', 'nothing to change: give a title, body, verify command or the tasks it waits on');
  return ok(out);
}

/** The Thread and its tasks as a person (or an agent adding one) shapes them: goal, settings, a carried-in
 *  board, adding and editing tasks, notes, blocking, and the agents' state lines. */
export class TaskSteps {
  constructor(
    private readonly core: EngineCore,
    private readonly limits: WriteLimits,
    private readonly deps: Dependencies,
  ) {}

  createThread(threadId: string, goal = ''): Result<null> {
    const { board } = this.core;
    if (board.seq !== 0) return reject('bad-state', 'the board already has a thread');
    this.core.emit({ kind: 'thread-created', threadId, goal, settings: board.settings });
    return ok(null);
  }

  setGoal(goal: string, by: string = USER): Result<null> {
    this.core.sweep();
    const full = this.limits.overCap(by, goal.length - this.core.board.goal.length);
    if (full) return full;
    if (goal !== this.core.board.goal) this.core.emit({ kind: 'goal-set', goal, by });
    return ok(null);
  }

  setSettings(patch: SettingsPatch, by: string = USER): Result<null> {
    this.core.sweep();
    const next = { ...this.core.board.settings };
    for (const [k, v] of Object.entries(patch)) if (v !== undefined) (next as Record<string, unknown>)[k] = v;
    this.core.emit({ kind: 'settings-set', settings: next, by });
    return ok(null);
  }

  /** A Thread's local board carried onto this one (issue 45, boardCarry.ts): planned against this board as it is
   *  now and made in one decision, or refused whole when the board's text would pass its cap. */
  carryIn(src: CarrySource, by: string = USER): Result<CarryOutcome> {
    this.core.sweep();
    const plan = planCarry(src, this.core.board, by);
    const full = this.limits.overCap(by, plan.growth);
    if (full) return full;
    for (const e of plan.events) this.core.emit(e);
    return ok(plan.outcome);
  }

  /** `after`: the tasks the new one waits on (issue 34), each of which must be on the board. */
  addTask(input: TaskText, by: string = USER, after?: readonly string[], takers?: readonly string[]): Result<Task> {
    this.core.sweep();
    const chars = input.title.length + (input.body?.length ?? 0) + (input.verify?.length ?? 0);
    const limited = this.limits.admit(by, null, 'add', chars, chars);
    if (limited) return limited;
    const taskId = `T-${this.core.board.nextTaskNumber}`;
    const deps = after?.length ? this.deps.checkAfter(taskId, after) : ok([]);
    if (!deps.ok) return by === USER ? deps : this.limits.refuse(by, null, null, 'add', deps.error.code, deps.error.message);
    return ok(
      this.core.step({
        kind: 'task-added',
        taskId,
        title: input.title,
        body: input.body ?? '',
        verify: input.verify ?? null,
        by,
        ...(deps.value.length ? { after: deps.value } : {}),
        ...(takers?.length ? { for: [...takers] } : {}),
      }),
    );
  }

  /** A person edits a task: allowed in any state. `after` replaces what it waits on (empty: nothing); a held
   *  task may gain dependencies, and its claim stands. */
  editTask(taskId: string, patch: Partial<TaskText>, by: string = USER, after?: readonly string[]): Result<Task> {
    const t = this.core.find(taskId);
    if (!t.ok) return t;
    const edit = changes(patch, after);
    if (!edit.ok) return edit;
    const deps = after === undefined ? null : this.deps.checkAfter(taskId, after);
    if (deps && !deps.ok) return deps;
    const full = this.limits.overCap(by, editGrowth(t.value, edit.value));
    if (full) return full;
    return ok(this.applyEdit(t.value, edit.value, deps?.value, by));
  }

  /** An edit's events: its text (if any) and what it waits on (if that changes), both checked already. Answers
   *  the task as the edit leaves it. */
  applyEdit(task: Task, text: Partial<TaskText>, after: readonly string[] | undefined, by: string): Task {
    let t = task;
    if (Object.keys(text).length) t = this.core.step({ kind: 'task-edited', taskId: t.id, ...text, by });
    if (after !== undefined && !sameList(after, afterOf(t))) t = this.core.step({ kind: 'after-set', taskId: t.id, after: [...after], by });
    return t;
  }

  userNote(taskId: string, text: string, by: string = USER): Result<null> {
    const t = this.core.find(taskId);
    if (!t.ok) return t;
    const full = this.limits.overCap(by, text.length);
    if (full) return full;
    this.core.emit({ kind: 'note', taskId, by, text });
    return ok(null);
  }

  block(taskId: string, reason: string, by: string = USER): Result<null> {
    const t = this.core.find(taskId);
    if (!t.ok) return t;
    const state = t.value.state;
    if (state !== 'open') return reject('bad-state', `${taskId} ${isInState(state)}; only an open task can be blocked`);
    this.core.emit({ kind: 'blocked', taskId, by, reason });
    return ok(null);
  }

  unblock(taskId: string, by: string = USER): Result<null> {
    const t = this.core.find(taskId);
    if (!t.ok) return t;
    if (t.value.state !== 'blocked') return reject('bad-state', `${taskId} ${isInState(t.value.state)}, not blocked`);
    this.core.emit({ kind: 'unblocked', taskId, by });
    return ok(null);
  }

  /** A person took a task out of needs-attention; it is open again with its failure count reset. */
  reset(taskId: string, by: string = USER): Result<null> {
    const t = this.core.find(taskId);
    if (!t.ok) return t;
    if (t.value.state !== 'needs-attention') return reject('bad-state', `${taskId} ${isInState(t.value.state)}, not in needs-attention`);
    this.core.emit({ kind: 'reset', taskId, by });
    return ok(null);
  }

  /** An agent's state changed: one line in the journal and the log, nothing else on the board. */
  agentState(agentId: string, state: AgentState, source: StateSource, text: string | null): void {
    this.core.emit({ kind: 'agent-state', agentId, state, source, text });
  }
}
