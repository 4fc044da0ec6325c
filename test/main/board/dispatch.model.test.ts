import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import type { Task } from '../../../src-shared/board/model.js';
import type { Result } from '../../../src-shared/board/result.js';
import { DISPATCH_ACTOR, type DispatchMode } from '../../../src-shared/board/dispatch.js';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';
import { expectReplays } from '../../helpers/leaseModel.js';
import { expectWaitingGrantsForced, isLifecycle, lifecycleArbs, lifecycleStep, waitsOn, type LifecycleOp } from '../../helpers/lifecycleSteps.js';

/**
 * Issue 34, dispatch, model-based: random sequences of dispatch to idle agents mixed with dependency edits,
 * claims (forced or not), a person's assign, the review cycle, releases, lapses into needs-attention, who
 * may take a task, agents' dispatch settings and labels and the Thread's default. After every step:
 * - no task is granted while a task it waits on is not done, unless the grant was forced and the board noted
 *   it (dispatch never forces);
 * - a dispatch grants only to an agent with dispatch on that held nothing, which then holds exactly one task:
 *   an idle dispatched agent holds at most one;
 * - the task dispatched is, by an oracle written apart from the engine, the lowest-numbered ready task the
 *   agent may take (its profile or a label named, or no one named) that it has not given up within its
 *   back-off (30 s, doubling per give-up by that agent); none when there is none.
 * At the end, the log replays through the reducer to the same board (back-off state included).
 */

const RUNS = Number(process.env.FORKBENCH_DISPATCH_MODEL_RUNS ?? 500);
/** Short, so generated advances lapse claims and reach needs-attention; back-offs (30 s up) outlast it. */
const LEASE = 2_000;
const POISON = 3;
const AGENTS = ['claude-1-aaaaaaaaaaaa', 'shell-2-bbbbbbbbbbbb', 'codex-3-cccccccccccc'] as const;
const START_TASKS = 5;
const IDS = ['T-1', 'T-2', 'T-3', 'T-4', 'T-5', 'T-6', 'T-7'] as const;
const LABELS = ['frontend', 'gpu'] as const;
const TAKERS = ['claude', 'shell', 'label:frontend', 'label:gpu'] as const;

type Op =
  | { op: 'setAfter'; task: string; after: string[] }
  | { op: 'setTakers'; task: string; takers: string[] }
  | { op: 'agentDispatch'; agent: string; mode: DispatchMode; labels: string[] }
  | { op: 'threadDispatch'; on: boolean }
  | { op: 'dispatch'; agent: string }
  | { op: 'add'; takers: string[] }
  | LifecycleOp;

const agent = fc.constantFrom(...AGENTS);
const id = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...IDS.slice(0, START_TASKS)) }, { weight: 1, arbitrary: fc.constantFrom(...IDS) });
const takers = fc.oneof({ weight: 2, arbitrary: fc.constant([] as string[]) }, { weight: 1, arbitrary: fc.array(fc.constantFrom(...TAKERS), { maxLength: 2 }) });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ op: fc.constant('setAfter' as const), task: id, after: fc.array(id, { maxLength: 2 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('setTakers' as const), task: id, takers }) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('agentDispatch' as const), agent, mode: fc.constantFrom<DispatchMode>('on', 'off', 'thread'), labels: fc.array(fc.constantFrom(...LABELS), { maxLength: 2 }) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('threadDispatch' as const), on: fc.boolean() }) },
  { weight: 8, arbitrary: fc.record({ op: fc.constant('dispatch' as const), agent }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('add' as const), takers }) },
  ...lifecycleArbs(agent, id, { claim: 2, assign: 1, done: 2, review: 3, release: 3, finish: 3, advance: 3 }, [LEASE, LEASE + 1, 29_999, 30_000, 60_000]),
);

/** The oracle's own record of who gave which task up, and when: from the log, not the engine's state. */
class GiveUps {
  private readonly by = new Map<string, { tries: number; at: number }>();
  /** Ends after which the same agent is not dispatched the task for a while: what the issue names
   *  (released, lapsed) and a person's taking it away. */
  private static readonly REASONS = new Set(['released', 'lapsed', 'waited-too-long', 'user-released', 'reassigned', 'no-worktree']);
  follow(e: BoardEvent): void {
    if (e.kind === 'claim-ended' && GiveUps.REASONS.has(e.reason)) this.add(e.taskId, e.agentId, e.mono);
    if (e.kind === 'reassign') this.add(e.taskId, e.from.agentId, e.mono);
  }
  private add(task: string, agent: string, at: number): void {
    const k = `${task} ${agent}`;
    this.by.set(k, { tries: (this.by.get(k)?.tries ?? 0) + 1, at });
  }
  /** 30 s after the first give-up, 60 s after the second, … 16 min at most. */
  keepsFrom(task: string, agent: string, now: number): boolean {
    const g = this.by.get(`${task} ${agent}`);
    if (!g) return false;
    const wait = Math.min(16 * 60_000, 30_000 * 2 ** (g.tries - 1));
    return now < g.at + wait;
  }
}

interface Oracle {
  threadOn: boolean;
  agents: Map<string, { mode: DispatchMode; labels: string[] }>;
  giveUps: GiveUps;
}

const taskNo = (tid: string) => Number(tid.slice(2));
const why = (r: Result<unknown>): string => (r.ok ? 'accepted' : `refused ${r.error.code}: ${r.error.message}`);

function oracleOn(o: Oracle, agentId: string): boolean {
  const mode = o.agents.get(agentId)?.mode ?? 'thread';
  return mode === 'thread' ? o.threadOn : mode === 'on';
}

function oracleMayTake(o: Oracle, t: Task, agentId: string): boolean {
  const named = t.for ?? [];
  if (named.length === 0) return true;
  const profile = agentId.split('-')[0];
  const labels = o.agents.get(agentId)?.labels ?? [];
  return named.some((w) => (w.startsWith('label:') ? labels.includes(w.slice(6)) : w === profile));
}

function step(engine: LeaseEngine, clock: ManualClock, s: Op): Result<unknown> | null {
  if (isLifecycle(s)) return lifecycleStep(engine, clock, s);
  switch (s.op) {
    case 'setAfter':
      return engine.editTask(s.task, {}, 'user', s.after);
    case 'setTakers':
      return engine.setTakers(s.task, s.takers);
    case 'agentDispatch':
      return engine.setAgentDispatch(s.agent, s.mode, s.labels);
    case 'threadDispatch':
      return engine.setSettings({ dispatch: s.on });
    case 'dispatch':
      return engine.dispatch(s.agent);
    case 'add':
      return engine.addTask({ title: 'more' }, 'user', undefined, s.takers);
  }
}

function checkStep(o: Oracle, s: Op, answer: Result<unknown> | null, before: ReadonlyMap<string, Task>, engine: LeaseEngine, fresh: readonly BoardEvent[], now: number): void {
  const tasks = engine.state.tasks;
  expectWaitingGrantsForced(s, before, fresh, (e, waited) =>
    expect(e.kind === 'grant' && e.by === DISPATCH_ACTOR, `dispatch granted ${e.taskId} while it waited on ${waited.join(', ')}`).toBe(false),
  );
  if (s.op === 'dispatch') {
    const res = answer as Result<{ taskId: string }>;
    const heldBefore = [...before.values()].filter((t) => t.claim?.agentId === s.agent).map((t) => t.id);
    const want =
      !oracleOn(o, s.agent) || heldBefore.length
        ? null
        : ([...before.values()]
            .filter((t) => t.state === 'open' && waitsOn(before, t).length === 0 && oracleMayTake(o, t, s.agent) && !o.giveUps.keepsFrom(t.id, s.agent, now))
            .sort((x, y) => taskNo(x.id) - taskNo(y.id))[0]?.id ?? null);
    expect(res.ok ? res.value.taskId : null, `${JSON.stringify(s)} holding [${heldBefore}]: ${why(res)}`).toBe(want);
    if (res.ok) {
      const held = [...tasks.values()].filter((t) => t.claim?.agentId === s.agent).map((t) => t.id);
      expect(held, 'a dispatched agent holds exactly the task it was given').toEqual([res.value.taskId]);
      expect(fresh.filter((e) => e.kind === 'grant').map((e) => (e as { by: string }).by)).toEqual([DISPATCH_ACTOR]);
    } else {
      expect(fresh.filter((e) => e.kind === 'grant'), 'a refused dispatch grants nothing').toEqual([]);
    }
  }
  // The oracle follows what the step was taken as.
  if (s.op === 'agentDispatch' && answer?.ok) {
    if (s.mode === 'thread' && s.labels.length === 0) o.agents.delete(s.agent);
    else o.agents.set(s.agent, { mode: s.mode, labels: [...new Set(s.labels)] });
  }
  if (s.op === 'threadDispatch') o.threadOn = s.on;
}

describe('dispatch against an oracle', () => {
  it(`grants the lowest ready task an idle agent may take, one per agent, never a waiting one, over ${RUNS} sequences`, () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 10, maxLength: 50, size: 'max' }), (ops) => {
        const clock = new ManualClock();
        const engine = new LeaseEngine(clock);
        const events: BoardEvent[] = [];
        const o: Oracle = { threadOn: false, agents: new Map(), giveUps: new GiveUps() };
        engine.onEvent((e) => {
          events.push(e);
          o.giveUps.follow(e);
        });
        engine.createThread('dispatch');
        engine.setSettings({ leaseMs: LEASE, poisonLimit: POISON });
        for (let i = 0; i < START_TASKS; i++) engine.addTask({ title: 'work' });
        for (const s of ops) {
          engine.sweep();
          const before = new Map(engine.state.tasks);
          const n = events.length;
          const now = clock.now();
          const answer = step(engine, clock, s);
          checkStep(o, s, answer, before, engine, events.slice(n), now);
        }
        expectReplays(events, engine.state);
      }),
      { numRuns: RUNS },
    );
  });

  it('a task for a label, ready once what it waits on is done, goes to an agent with that label (its index saw the other task finish)', () => {
    const clock = new ManualClock();
    const engine = new LeaseEngine(clock);
    engine.createThread('labels');
    engine.setSettings({ dispatch: true });
    const [gpu] = AGENTS;
    engine.setAgentDispatch(gpu, 'on', ['gpu']);
    engine.addTask({ title: 'any' });
    engine.addTask({ title: 'needs the gpu' }, 'user', ['T-1'], ['label:gpu']);
    engine.addTask({ title: 'for codex' }, 'user', [], ['codex']);
    // The gpu agent's first dispatch looks at T-2 (waiting) and takes T-1.
    const first = engine.dispatch(gpu);
    expect(first.ok && first.value.taskId).toBe('T-1');
    expect(engine.done(gpu, 'T-1').ok && engine.approve('T-1').ok).toBe(true);
    const second = engine.dispatch(gpu);
    expect(second.ok ? second.value.taskId : why(second)).toBe('T-2');
    // Nothing it may take is left: T-3 is for codex.
    expect(engine.done(gpu, 'T-2').ok && engine.approve('T-2').ok).toBe(true);
    expect(why(engine.dispatch(gpu))).toMatch(/no ready task/);
  });

  it('two agents idle at the same moment get one task each, never one task both', () => {
    const clock = new ManualClock();
    const engine = new LeaseEngine(clock);
    engine.createThread('race');
    engine.setSettings({ dispatch: true });
    engine.addTask({ title: 'one' });
    engine.addTask({ title: 'two' });
    const [a, b, c] = AGENTS;
    const first = engine.dispatch(a);
    const second = engine.dispatch(b);
    const third = engine.dispatch(c);
    expect(first.ok && second.ok && first.value.taskId !== second.value.taskId).toBe(true);
    expect(why(third)).toMatch(/no ready task/);
    // The same agent again: it holds one already.
    expect(why(engine.dispatch(a))).toMatch(/holds T-1/);
  });
});
