import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import type { Task } from '../../../src-shared/board/model.js';
import type { Result } from '../../../src-shared/board/result.js';
import { Limits } from '../../../src-shared/board/limits.js';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';
import { expectReplays } from '../../helpers/leaseModel.js';
import { expectWaitingGrantsForced, isLifecycle, lifecycleArbs, lifecycleStep, waitsOn, type LifecycleOp } from '../../helpers/lifecycleSteps.js';

/**
 * Issue 34, dependencies, model-based: random sequences of dependency edits (a person's edit, an agent's add
 * with --after, the holder's own edit), claims with and without an id and with and without force, a person's
 * assign, the review cycle (done, approve, reject), releases, resets and lapses into needs-attention, run
 * against the engine. After every step:
 * - no task is granted while a task it waits on is not done, unless the grant was forced and the board noted it;
 * - `claim` with no id takes the lowest-numbered ready task (open, everything it waits on done), or nothing;
 * - a dependency edit is taken exactly when it names only other tasks on the board and closes no cycle;
 * - no cycle is ever stored.
 * The oracles here (readiness, reachability) are written apart from the engine's, so they check it rather
 * than restate it. At the end, the log replays through the reducer to the same board.
 */

const RUNS = Number(process.env.FORKBENCH_DEPS_MODEL_RUNS ?? 1_000);
/** Short, so generated advances lapse claims often enough to reach needs-attention. */
const LEASE = 2_000;
const POISON = 2;
const AGENTS = ['a', 'b'] as const;
/** Ids a step may name: the tasks the board starts with, those `add` makes, and ones that never exist. */
const START_TASKS = 4;
const IDS = ['T-1', 'T-2', 'T-3', 'T-4', 'T-5', 'T-6', 'T-7', 'T-8', 'T-40'] as const;

type Op =
  | { op: 'setAfter'; task: string; after: string[] }
  | { op: 'holderEdit'; agent: string; task: string; after: string[] }
  | { op: 'add'; agent: string; after: string[] }
  | LifecycleOp;

const agent = fc.constantFrom(...AGENTS);
/** Mostly tasks the board starts with, so edits meet and close cycles often; now and then any id. */
const id = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...IDS.slice(0, START_TASKS)) }, { weight: 1, arbitrary: fc.constantFrom(...IDS) });
const deps = fc.array(id, { maxLength: 3 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('setAfter' as const), task: id, after: deps }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('holderEdit' as const), agent, task: id, after: deps }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('add' as const), agent, after: deps }) },
  ...lifecycleArbs(agent, id, { claim: 5, assign: 2, done: 3, review: 4, release: 1, finish: 3, advance: 2 }, [LEASE / 2, LEASE, LEASE + 1]),
);

const afterOf = (t: Task): readonly string[] => t.after ?? [];

/** Whether `to` is reachable from `from` along what tasks wait on (a plain DFS, apart from the engine's BFS). */
function reaches(tasks: ReadonlyMap<string, Task>, from: string, to: string, seen = new Set<string>()): boolean {
  if (from === to) return true;
  if (seen.has(from)) return false;
  seen.add(from);
  const t = tasks.get(from);
  return t ? afterOf(t).some((d) => reaches(tasks, d, to, seen)) : false;
}

/** Whether a dependency list for `taskId` may be stored: other tasks on the board, no cycle through it. */
function acceptable(tasks: ReadonlyMap<string, Task>, taskId: string, after: readonly string[]): boolean {
  return after.every((d) => d !== taskId && tasks.has(d) && !reaches(tasks, d, taskId));
}

function expectAcyclic(tasks: ReadonlyMap<string, Task>): void {
  const state = new Map<string, 'open' | 'closed'>();
  const visit = (tid: string): void => {
    const s = state.get(tid);
    if (s === 'closed') return;
    expect(s, `a cycle through ${tid} was stored`).not.toBe('open');
    state.set(tid, 'open');
    for (const d of afterOf(tasks.get(tid) as Task)) if (tasks.has(d)) visit(d);
    state.set(tid, 'closed');
  };
  for (const tid of tasks.keys()) visit(tid);
}

const taskNo = (tid: string) => Number(tid.slice(2));
const why = (r: Result<unknown>): string => (r.ok ? 'accepted' : `refused ${r.error.code}: ${r.error.message}`);
const unique = (ids: readonly string[]) => [...new Set(ids)];

function step(engine: LeaseEngine, clock: ManualClock, s: Op): Result<unknown> | null {
  if (isLifecycle(s)) return lifecycleStep(engine, clock, s);
  switch (s.op) {
    case 'setAfter':
      return engine.editTask(s.task, {}, 'user', s.after);
    case 'holderEdit':
      return engine.edit(s.agent, s.task, { after: s.after });
    case 'add':
      return engine.addTask({ title: 'more work' }, s.agent, s.after);
  }
}

function checkStep(s: Op, answer: Result<unknown> | null, before: ReadonlyMap<string, Task>, engine: LeaseEngine, fresh: readonly BoardEvent[]): void {
  const tasks = engine.state.tasks;
  // Grants: none of a task that waited on something not done, unless forced and noted on the task.
  expectWaitingGrantsForced(s, before, fresh);
  if (s.op === 'claim') {
    const res = answer as Result<{ taskId: string }>;
    // The Thread's claim limit (issue 42): an agent's own claims stop once it holds that many claimed tasks.
    const atLimit = [...before.values()].filter((t) => t.state === 'claimed' && t.claim?.agentId === s.agent).length >= Limits.defaultClaimLimit;
    if (s.task === null) {
      // The lowest-numbered ready task, by the oracle, from the board as it was before the step.
      const ready = [...before.values()].filter((t) => t.state === 'open' && waitsOn(before, t).length === 0).sort((x, y) => taskNo(x.id) - taskNo(y.id));
      // (a lapse the claim's own sweep makes can only open tasks later than none: no time passes in a claim)
      expect(res.ok ? res.value.taskId : null, why(res)).toBe(atLimit ? null : (ready[0]?.id ?? null));
      if (atLimit && ready[0]) expect(!res.ok && res.error.code).toBe('claim-limit');
    } else {
      const t = before.get(s.task);
      const want = t !== undefined && t.state === 'open' && !atLimit && (s.force || waitsOn(before, t).length === 0);
      expect(res.ok, why(res)).toBe(want);
      if (!res.ok && t?.state === 'open') {
        expect(res.error.code).toBe(atLimit ? 'claim-limit' : 'not-ready');
        if (!atLimit) for (const d of waitsOn(before, t)) expect(res.error.message).toContain(d);
      }
    }
  }
  if (s.op === 'setAfter' || s.op === 'holderEdit') {
    const res = answer as Result<unknown>;
    const t = before.get(s.task);
    const holds = s.op === 'setAfter' || (t?.claim?.agentId === s.agent);
    const want = t !== undefined && holds && acceptable(before, s.task, s.after);
    expect(res.ok, `${JSON.stringify(s)}: ${why(res)}`).toBe(want);
    if (res.ok) {
      expect(afterOf(tasks.get(s.task) as Task)).toEqual(unique(s.after));
      // The claim stands: a dependency edit changes no holder.
      expect(tasks.get(s.task)?.claim?.token).toBe(t?.claim?.token);
    } else if (t && holds) {
      expect(afterOf(tasks.get(s.task) as Task)).toEqual(afterOf(t));
      const cycle = s.after.find((d) => d !== s.task && before.has(d) && reaches(before, d, s.task));
      if (cycle && !s.after.some((d) => d === s.task || !before.has(d))) expect(res.error.message).toMatch(new RegExp(`cycle, ${s.task} → .* → ${s.task}$`));
    }
  }
  if (s.op === 'add') {
    const res = answer as Result<Task>;
    const next = `T-${engine.state.nextTaskNumber - (res.ok ? 1 : 0)}`;
    expect(res.ok, why(res)).toBe(acceptable(before, next, s.after));
    if (res.ok) expect(afterOf(res.value)).toEqual(unique(s.after));
  }
  expectAcyclic(tasks);
}

describe('dependencies against an oracle', () => {
  it(`gate claims, refuse cycles and keep the log replayable over ${RUNS} generated sequences`, () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 10, maxLength: 40, size: 'max' }), (ops) => {
        const clock = new ManualClock();
        const engine = new LeaseEngine(clock);
        const events: BoardEvent[] = [];
        engine.onEvent((e) => events.push(e));
        engine.createThread('deps');
        engine.setSettings({ leaseMs: LEASE, poisonLimit: POISON });
        for (let i = 0; i < START_TASKS; i++) engine.addTask({ title: 'work' });
        for (const s of ops) {
          engine.sweep(); // lapses due by now happen before the step, as the host's timer would make them
          const before = new Map(engine.state.tasks);
          const n = events.length;
          const answer = step(engine, clock, s);
          checkStep(s, answer, before, engine, events.slice(n));
        }
        expectReplays(events, engine.state);
      }),
      { numRuns: RUNS },
    );
  });
});
