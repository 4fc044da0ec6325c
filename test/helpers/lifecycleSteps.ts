import fc from 'fast-check';
import { expect } from 'vitest';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { HOST_ACTOR, type Task } from '../../src-shared/board/model.js';
import type { Result } from '../../src-shared/board/result.js';
import type { ManualClock } from '../../src-main/base/clock.js';
import type { LeaseEngine } from '../../src-main/board/leaseEngine.js';

/**
 * The steps of a task's life that the board's model-based tests share (dependencies.model, dispatch.model):
 * claims with and without an id and force, a person's assign, the review cycle, releases, resets, time
 * passing. Each test adds its own steps beside them.
 */
export type LifecycleOp =
  | { op: 'claim'; agent: string; task: string | null; force: boolean }
  | { op: 'assign'; agent: string; task: string; force: boolean }
  | { op: 'done'; agent: string; task: string }
  | { op: 'approve' | 'reject' | 'reset' | 'userRelease'; task: string }
  | { op: 'release'; agent: string; task: string }
  /** Its holder says done and a person approves: the shortest way to a task being done, so tasks that wait
   *  on it become ready often. */
  | { op: 'finish'; task: string }
  | { op: 'advance'; ms: number };

type Weights = Record<'claim' | 'assign' | 'done' | 'review' | 'release' | 'finish' | 'advance', number>;

/** The lifecycle steps as weighted arbitraries, for `fc.oneof` beside a test's own. */
export function lifecycleArbs(agent: fc.Arbitrary<string>, id: fc.Arbitrary<string>, w: Weights, advances: readonly number[]) {
  return [
    { weight: w.claim, arbitrary: fc.record({ op: fc.constant('claim' as const), agent, task: fc.option(id, { nil: null }), force: fc.boolean() }) },
    { weight: w.assign, arbitrary: fc.record({ op: fc.constant('assign' as const), agent, task: id, force: fc.boolean() }) },
    { weight: w.done, arbitrary: fc.record({ op: fc.constant('done' as const), agent, task: id }) },
    { weight: w.review, arbitrary: fc.record({ op: fc.constantFrom('approve' as const, 'reject' as const, 'reset' as const, 'userRelease' as const), task: id }) },
    { weight: w.release, arbitrary: fc.record({ op: fc.constant('release' as const), agent, task: id }) },
    { weight: w.finish, arbitrary: fc.record({ op: fc.constant('finish' as const), task: id }) },
    { weight: w.advance, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.constantFrom(...advances) }) },
  ] as const;
}

const LIFECYCLE = new Set(['claim', 'assign', 'done', 'approve', 'reject', 'reset', 'userRelease', 'release', 'finish', 'advance']);

export function isLifecycle(s: { op: string }): s is LifecycleOp {
  return LIFECYCLE.has(s.op);
}

/** Runs a lifecycle step on the engine: its answer (null for time passing). */
export function lifecycleStep(engine: LeaseEngine, clock: ManualClock, s: LifecycleOp): Result<unknown> | null {
  switch (s.op) {
    case 'claim':
      return engine.claim(s.agent, s.task ?? undefined, s.force);
    case 'assign':
      return engine.assign(s.task, s.agent, 'user', s.force);
    case 'done':
      return engine.done(s.agent, s.task);
    case 'approve':
      return engine.approve(s.task);
    case 'reject':
      return engine.rejectReview(s.task, 'not yet');
    case 'reset':
      return engine.reset(s.task);
    case 'userRelease':
      return engine.userRelease(s.task);
    case 'release':
      return engine.release(s.agent, s.task);
    case 'finish': {
      const holder = engine.task(s.task)?.claim?.agentId;
      if (holder) engine.done(holder, s.task);
      return engine.approve(s.task);
    }
    case 'advance':
      clock.advance(s.ms);
      engine.sweep();
      return null;
  }
}

/** Done, every one: the oracle's readiness (fail closed: a missing task is not done). */
export const waitsOn = (tasks: ReadonlyMap<string, Task>, t: Task): string[] => (t.after ?? []).filter((d) => tasks.get(d)?.state !== 'done');

/**
 * The grants among `fresh`: each task granted while it waited on a task not done (as the board was `before`
 * the step) must have been forced by the step and noted on the task; `also` checks each such grant further.
 */
export function expectWaitingGrantsForced(s: { op: string }, before: ReadonlyMap<string, Task>, fresh: readonly BoardEvent[], also?: (e: Extract<BoardEvent, { kind: 'grant' | 'reassign' }>, waited: string[]) => void): void {
  for (const e of fresh) {
    if (e.kind !== 'grant' && e.kind !== 'reassign') continue;
    const granted = e.taskId;
    const waited = waitsOn(before, before.get(granted) as Task);
    if (waited.length === 0) continue;
    also?.(e, waited);
    expect('force' in s && s.force, `${granted} was granted while it waited on ${waited.join(', ')}, unforced`).toBe(true);
    const noted = fresh.some((n) => n.kind === 'note' && n.taskId === granted && n.by === HOST_ACTOR && n.text.includes(`before ${waited.join(', ')}`) && n.text.endsWith('forced'));
    expect(noted, `the forced grant of ${granted} was not noted`).toBe(true);
  }
}
