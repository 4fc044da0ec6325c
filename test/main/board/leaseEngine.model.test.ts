import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import type { Task, TaskState } from '../../../src-shared/board/model.js';
import { applyEvent, emptyBoard } from '../../../src-shared/board/reducer.js';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';

/**
 * Model-based test: random sequences of agent writes, host signals, user actions and "advance the clock"
 * run against the engine and against a deliberately small reference model, with the safety properties
 * checked after every step. fast-check shrinks a failure to the shortest sequence that shows it.
 */

const LEASE = 2_000;
const POISON = 3;
const AGENTS = ['a', 'b', 'c'] as const;
const TASKS = ['T-1', 'T-2', 'T-3'] as const;
const RUNS = Number(process.env.FORKBENCH_MODEL_RUNS ?? 10_000);

interface MTask {
  state: TaskState;
  holder: string | null;
  token: number | null;
  deadline: number;
  failures: number;
  /** Every agent that ever held it: a write from one of them is stale or lapsed, never "not holder". */
  pastHolders: Set<string>;
}

class Model {
  now = 0;
  nextToken = 1;
  tasks = new Map<string, MTask>(TASKS.map((id) => [id, { state: 'open', holder: null, token: null, deadline: 0, failures: 0, pastHolders: new Set() }]));
  tokensOf = new Map<string, number[]>(AGENTS.map((a) => [a, []]));

  t(id: string): MTask {
    return this.tasks.get(id) as MTask;
  }

  sweep(): void {
    for (const t of this.tasks.values()) if (t.holder !== null && t.deadline <= this.now) this.end(t, true);
  }

  end(t: MTask, counts: boolean): void {
    if (t.state === 'claimed' && counts) {
      t.failures++;
      t.state = t.failures >= POISON ? 'needs-attention' : 'open';
    } else if (t.state === 'claimed') {
      t.state = 'open';
    }
    t.pastHolders.add(t.holder as string);
    t.holder = null;
    t.token = null;
  }

  grant(t: MTask, agent: string): void {
    t.state = 'claimed';
    t.holder = agent;
    t.token = this.nextToken++;
    t.deadline = this.now + LEASE;
    this.tokensOf.get(agent)?.push(t.token);
  }

  /** Would a fenced write by `agent` with `token` be accepted? (after sweep) */
  accepts(t: MTask, agent: string, token: number | undefined): boolean {
    return t.holder === agent && (token === undefined || token === t.token) && this.now < t.deadline;
  }
}

type TokenMode = 'current' | 'none' | 'old' | 'foreign';
type Op =
  | { op: 'claim'; agent: string; task: string | null }
  | { op: 'renew' | 'note' | 'done' | 'release'; agent: string; task: string; mode: TokenMode; pick: number }
  | { op: 'advance'; ms: number }
  | { op: 'hard'; agent: string }
  | { op: 'live'; agent: string }
  | { op: 'assign'; agent: string; task: string }
  | { op: 'userRelease' | 'approve' | 'reject' | 'reset'; task: string };

interface Real {
  clock: ManualClock;
  engine: LeaseEngine;
  events: BoardEvent[];
  maxGranted: number;
}

function tokenFor(m: Model, op: { agent: string; task: string; mode: TokenMode; pick: number }): number | undefined {
  const t = m.t(op.task);
  switch (op.mode) {
    case 'none':
      return undefined;
    case 'current':
      return t.token ?? 1 + (op.pick % m.nextToken);
    case 'old': {
      const mine = m.tokensOf.get(op.agent) ?? [];
      return mine.length ? mine[op.pick % mine.length] : 1 + (op.pick % m.nextToken);
    }
    case 'foreign': {
      const all = [...m.tokensOf.entries()].filter(([a]) => a !== op.agent).flatMap(([, ts]) => ts);
      return all.length ? all[op.pick % all.length] : 1 + (op.pick % m.nextToken);
    }
  }
}

class Step implements fc.Command<Model, Real> {
  constructor(readonly s: Op) {}
  check(): boolean {
    return true;
  }
  toString(): string {
    return JSON.stringify(this.s);
  }
  run(m: Model, r: Real): void {
    const s = this.s;
    const before = new Map<string, Task>(TASKS.map((id) => [id, r.engine.task(id) as Task]));
    const eventsBefore = r.events.length;
    if (s.op === 'advance') {
      m.now += s.ms;
      r.clock.advance(s.ms);
      // the host's timer would fire here; sweeping is idempotent
      r.engine.sweep();
      m.sweep();
    } else {
      m.sweep();
      this.apply(m, r, before);
    }
    this.invariants(m, r, before, r.events.slice(eventsBefore));
  }

  private apply(m: Model, r: Real, before: Map<string, Task>): void {
    const s = this.s;
    const e = r.engine;
    switch (s.op) {
      case 'claim': {
        const id = s.task ?? TASKS.find((x) => m.t(x).state === 'open') ?? null;
        const res = e.claim(s.agent, s.task ?? undefined);
        if (id === null || m.t(id).state !== 'open') {
          expect(res.ok).toBe(false);
        } else {
          expect(res.ok).toBe(true);
          m.grant(m.t(id), s.agent);
          expect(res.ok && res.value).toMatchObject({ taskId: id, token: m.t(id).token, remainingMs: LEASE });
        }
        break;
      }
      case 'renew':
      case 'note':
      case 'done':
      case 'release': {
        const t = m.t(s.task);
        const token = tokenFor(m, s);
        let want = m.accepts(t, s.agent, token);
        if (s.op === 'done' && t.state !== 'claimed') want = false;
        const res =
          s.op === 'renew'
            ? e.renew(s.agent, s.task, token)
            : s.op === 'note'
              ? e.note(s.agent, s.task, 'progress', token)
              : s.op === 'done'
                ? e.done(s.agent, s.task, token)
                : e.release(s.agent, s.task, token);
        expect(res.ok, `${s.op} by ${s.agent} on ${s.task} with ${String(token)}`).toBe(want);
        if (!res.ok) {
          // a refused write changes nothing but the log
          expect(e.task(s.task)).toBe(before.get(s.task));
          const expected = t.holder === s.agent ? ['stale-token', 'bad-state'] : t.pastHolders.has(s.agent) ? ['stale-token', 'lapsed', 'not-holder'] : ['not-holder'];
          expect(expected).toContain(res.error.code);
          break;
        }
        if (s.op === 'release') {
          const review = t.state === 'review';
          m.end(t, false);
          if (review) t.state = 'review';
        } else {
          if (s.op === 'done') t.state = 'review';
          t.deadline = Math.max(t.deadline, m.now + LEASE);
        }
        break;
      }
      case 'hard': {
        for (const t of m.tasks.values()) {
          if (t.holder !== s.agent) continue;
          const review = t.state === 'review';
          m.end(t, true);
          if (review) t.state = 'review';
        }
        e.releaseAllHeldBy(s.agent, 'process-exited');
        break;
      }
      case 'live': {
        for (const t of m.tasks.values()) if (t.holder === s.agent) t.deadline = Math.max(t.deadline, m.now + LEASE);
        e.renewLive(s.agent);
        break;
      }
      case 'assign': {
        const t = m.t(s.task);
        const res = e.assign(s.task, s.agent);
        const can = t.holder !== s.agent && (t.holder !== null || t.state === 'open' || t.state === 'needs-attention');
        expect(res.ok).toBe(can);
        if (can) {
          if (t.holder) t.pastHolders.add(t.holder);
          if (t.state === 'needs-attention') t.failures = 0;
          m.grant(t, s.agent);
        }
        break;
      }
      case 'userRelease': {
        const t = m.t(s.task);
        const res = e.userRelease(s.task);
        const can = t.holder !== null || t.state === 'review';
        expect(res.ok).toBe(can);
        if (can) {
          if (t.holder) m.end(t, false);
          t.state = 'open';
        }
        break;
      }
      case 'approve': {
        const t = m.t(s.task);
        const res = e.approve(s.task);
        expect(res.ok).toBe(t.state === 'review');
        if (res.ok) {
          if (t.holder) t.pastHolders.add(t.holder);
          Object.assign(t, { state: 'done', holder: null, token: null });
        }
        break;
      }
      case 'reject': {
        const t = m.t(s.task);
        const res = e.rejectReview(s.task, 'not yet');
        expect(res.ok).toBe(t.state === 'review');
        if (res.ok) t.state = t.holder ? 'claimed' : 'open';
        break;
      }
      case 'reset': {
        const t = m.t(s.task);
        const res = e.reset(s.task);
        expect(res.ok).toBe(t.state === 'needs-attention');
        if (res.ok) Object.assign(t, { state: 'open', failures: 0 });
        break;
      }
    }
  }

  private invariants(m: Model, r: Real, before: Map<string, Task>, fresh: BoardEvent[]): void {
    const now = r.clock.now();
    for (const id of TASKS) {
      const t = r.engine.task(id) as Task;
      const mt = m.t(id);
      // the engine and the model agree on state, holder, token and deadline
      expect({ state: t.state, holder: t.claim?.agentId ?? null, token: t.claim?.token ?? null }).toEqual({ state: mt.state, holder: mt.holder, token: mt.token });
      if (t.claim) {
        expect(t.claim.deadline).toBe(mt.deadline);
        // at most one holder, and it is unexpired: no claim outlives its deadline past a step
        expect(t.claim.deadline).toBeGreaterThan(now);
      }
      // no claim ends without an event naming it
      const old = before.get(id)?.claim;
      if (old && (!t.claim || t.claim.token !== old.token)) {
        const named = fresh.some(
          (e) => (e.kind === 'claim-ended' && e.token === old.token && e.taskId === id) || (e.kind === 'reassign' && e.from.token === old.token),
        );
        expect(named, `claim ${old.token} on ${id} ended without an event`).toBe(true);
      }
    }
    // tokens strictly increase per grant
    for (const e of fresh) {
      const granted = e.kind === 'grant' ? e.token : e.kind === 'reassign' ? e.to.token : null;
      if (granted !== null) {
        expect(granted).toBeGreaterThan(r.maxGranted);
        r.maxGranted = granted;
      }
      // a write lands only inside the lease with the current token: every accepted renew extends a live claim
      if (e.kind === 'renew') expect(e.deadline).toBe(e.mono + LEASE);
    }
  }
}

const agent = fc.constantFrom(...AGENTS);
const task = fc.constantFrom(...TASKS);
const mode = fc.constantFrom<TokenMode>('current', 'current', 'none', 'old', 'foreign');
const ms = fc.oneof(fc.constantFrom(1, LEASE / 2, LEASE - 1, LEASE, LEASE + 1), fc.integer({ min: 0, max: LEASE * 1.5 }));
const step = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('claim' as const), agent, task: fc.option(task, { nil: null }) }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constantFrom('renew' as const, 'note' as const, 'done' as const, 'release' as const), agent, task, mode, pick: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('advance' as const), ms }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('hard' as const), agent }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('live' as const), agent }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('assign' as const), agent, task }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('userRelease' as const, 'approve' as const, 'reject' as const, 'reset' as const), task }) },
);

describe('lease engine against a reference model', () => {
  it(`keeps the safety properties over ${RUNS} generated sequences`, () => {
    fc.assert(
      fc.property(fc.commands([step.map((s) => new Step(s as Op))], { maxCommands: 40 }), (cmds) => {
        const clock = new ManualClock();
        const engine = new LeaseEngine(clock);
        const events: BoardEvent[] = [];
        engine.onEvent((e) => events.push(e));
        engine.createThread('model');
        engine.setSettings({ leaseMs: LEASE, poisonLimit: POISON });
        for (const _ of TASKS) engine.addTask({ title: 'work' });
        fc.modelRun(() => ({ model: new Model(), real: { clock, engine, events, maxGranted: 0 } }), cmds);
        // the log replays to the same board: what the journal and a window rebuild is what the engine holds
        const replayed = emptyBoard();
        for (const e of events) applyEvent(replayed, e);
        expect(replayed).toEqual(engine.state);
      }),
      { numRuns: RUNS },
    );
  });
});
