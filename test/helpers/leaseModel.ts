/**
 * The lease engine's reference model, shared by every model-based test of the rules: the bare engine
 * (test/main/board/leaseEngine.model.test.ts) and each store behind BoardService, the journal and PostgreSQL
 * with one or two hosts (test/main/board/boardStores.model.test.ts). One model, one generator of steps, one set of
 * invariants: a store passes only by deciding exactly what the bare engine decides.
 *
 * A step is planned against the model first (`planStep`: what the engine must answer, and the model's update),
 * then run by the test's runner against its engine or store (`call`, through whatever path that store takes),
 * then checked (`check`), and the invariants are checked on every engine that holds the board (`checkInvariants`).
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { BoardEvent } from '../../src-shared/board/events.js';
import type { Task, TaskState } from '../../src-shared/board/model.js';
import type { Result } from '../../src-shared/board/result.js';
import { applyEvent, emptyBoard, type Board } from '../../src-shared/board/reducer.js';
import type { LeaseEngine } from '../../src-main/board/leaseEngine.js';

/** Short enough that generated advances cross deadlines often; the model is exact at -1/=/+1 ms of it. */
export const LEASE = 2_000;
/** Small, so sequences of a few dozen steps reach needs-attention and its reset. */
export const POISON = 3;
export const AGENTS = ['a', 'b', 'c'] as const;
export const TASKS = ['T-1', 'T-2', 'T-3'] as const;

interface MTask {
  state: TaskState;
  holder: string | null;
  token: number | null;
  deadline: number;
  failures: number;
  /** Every agent that ever held it: a write from one of them is stale or lapsed, never "not holder". */
  pastHolders: Set<string>;
}

export class Model {
  now = 0;
  nextToken = 1;
  tasks = new Map<string, MTask>(TASKS.map((id) => [id, { state: 'open', holder: null, token: null, deadline: 0, failures: 0, pastHolders: new Set() }]));
  tokensOf = new Map<string, number[]>(AGENTS.map((a) => [a, []]));

  t(id: string): MTask {
    return this.tasks.get(id) as MTask;
  }

  /** A claim in review is held for the person (issue 44): it does not lapse, whatever its deadline. */
  sweep(): void {
    for (const t of this.tasks.values()) if (t.holder !== null && t.state !== 'review' && t.deadline <= this.now) this.end(t, true);
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
    return t.holder === agent && (token === undefined || token === t.token) && (t.state === 'review' || this.now < t.deadline);
  }
}

type TokenMode = 'current' | 'none' | 'old' | 'foreign';
export type Op =
  | { op: 'claim'; agent: string; task: string | null }
  | { op: 'renew' | 'note' | 'done' | 'release'; agent: string; task: string; mode: TokenMode; pick: number }
  | { op: 'advance'; ms: number }
  | { op: 'hard'; agent: string }
  | { op: 'live'; agent: string }
  | { op: 'assign'; agent: string; task: string }
  | { op: 'userRelease' | 'approve' | 'reject' | 'reset'; task: string };

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

/**
 * One step as planned against the model. The runner advances its clock by `advanceMs` (if any), runs `call`
 * on its engine (a decision answering a Result, or a host signal answering a plain value), then hands the
 * answer and the engine after the step to `check`, which asserts it and updates the model.
 */
export interface Plan {
  readonly advanceMs?: number;
  /** The agent whose host runs this step (a shared board's host records it as its own). */
  readonly agent?: string;
  readonly kind: 'decision' | 'signal';
  call(e: LeaseEngine): unknown;
  check(answer: unknown, after: LeaseEngine): void;
}

const noCheck = (): void => undefined;

/** A refusal's code and reason, for a failing assertion's message (a store's own refusals say what went wrong). */
const why = (r: Result<unknown>): string => (r.ok ? 'accepted' : `refused ${r.error.code}: ${r.error.message}`);

/** Plan `s` against the model as it is now (before the step). */
export function planStep(m: Model, s: Op): Plan {
  if (s.op === 'advance') {
    m.now += s.ms;
    // the host's timer would fire here; sweeping is idempotent
    m.sweep();
    return { advanceMs: s.ms, kind: 'signal', call: (e) => e.sweep(), check: noCheck };
  }
  m.sweep();
  switch (s.op) {
    case 'claim': {
      const id = s.task ?? TASKS.find((x) => m.t(x).state === 'open') ?? null;
      return {
        agent: s.agent,
        kind: 'decision',
        call: (e) => e.claim(s.agent, s.task ?? undefined),
        check: (answer) => {
          const res = answer as Result<unknown>;
          if (id === null || m.t(id).state !== 'open') {
            expect(res.ok, why(res)).toBe(false);
          } else {
            expect(res.ok, why(res)).toBe(true);
            m.grant(m.t(id), s.agent);
            expect(res.ok && res.value).toMatchObject({ taskId: id, token: m.t(id).token, remainingMs: LEASE });
          }
        },
      };
    }
    case 'renew':
    case 'note':
    case 'done':
    case 'release': {
      const t = m.t(s.task);
      const token = tokenFor(m, s);
      let want = m.accepts(t, s.agent, token);
      if (s.op === 'done' && t.state !== 'claimed') want = false;
      let before: Task | undefined;
      return {
        agent: s.agent,
        kind: 'decision',
        call: (e) => {
          before = e.task(s.task);
          return s.op === 'renew'
            ? e.renew(s.agent, s.task, token)
            : s.op === 'note'
              ? e.note(s.agent, s.task, 'progress', token)
              : s.op === 'done'
                ? e.done(s.agent, s.task, token)
                : e.release(s.agent, s.task, token);
        },
        check: (answer, e) => {
          const res = answer as Result<unknown>;
          expect(res.ok, `${s.op} by ${s.agent} on ${s.task} with ${String(token)}: ${why(res)}`).toBe(want);
          if (!res.ok) {
            const expected = t.holder === s.agent ? ['stale-token', 'bad-state'] : t.pastHolders.has(s.agent) ? ['stale-token', 'lapsed', 'not-holder'] : ['not-holder'];
            expect(expected, res.error.message).toContain(res.error.code);
            // a refused write changes nothing but the log
            expect(e.task(s.task)).toBe(before);
            return;
          }
          if (s.op === 'release') {
            const review = t.state === 'review';
            m.end(t, false);
            if (review) t.state = 'review';
          } else {
            if (s.op === 'done') t.state = 'review';
            t.deadline = Math.max(t.deadline, m.now + LEASE);
          }
        },
      };
    }
    case 'hard':
      return {
        agent: s.agent,
        kind: 'signal',
        call: (e) => e.releaseAllHeldBy(s.agent, 'process-exited'),
        check: () => {
          for (const t of m.tasks.values()) {
            if (t.holder !== s.agent) continue;
            const review = t.state === 'review';
            m.end(t, true);
            if (review) t.state = 'review';
          }
        },
      };
    case 'live':
      return {
        agent: s.agent,
        kind: 'signal',
        call: (e) => e.renewLive(s.agent),
        check: () => {
          for (const t of m.tasks.values()) if (t.holder === s.agent) t.deadline = Math.max(t.deadline, m.now + LEASE);
        },
      };
    case 'assign': {
      const t = m.t(s.task);
      return {
        kind: 'decision',
        call: (e) => e.assign(s.task, s.agent),
        check: (answer) => {
          const res = answer as Result<unknown>;
          const can = t.holder !== s.agent && (t.holder !== null || t.state === 'open' || t.state === 'needs-attention');
          expect(res.ok, why(res)).toBe(can);
          if (can) {
            if (t.holder) t.pastHolders.add(t.holder);
            if (t.state === 'needs-attention') t.failures = 0;
            m.grant(t, s.agent);
          }
        },
      };
    }
    case 'userRelease': {
      const t = m.t(s.task);
      return {
        kind: 'decision',
        call: (e) => e.userRelease(s.task),
        check: (answer) => {
          const can = t.holder !== null || t.state === 'review';
          expect((answer as Result<unknown>).ok, why(answer as Result<unknown>)).toBe(can);
          if (can) {
            if (t.holder) m.end(t, false);
            t.state = 'open';
          }
        },
      };
    }
    case 'approve': {
      const t = m.t(s.task);
      return {
        kind: 'decision',
        call: (e) => e.approve(s.task),
        check: (answer) => {
          const res = answer as Result<unknown>;
          expect(res.ok, why(res)).toBe(t.state === 'review');
          if (res.ok) {
            if (t.holder) t.pastHolders.add(t.holder);
            Object.assign(t, { state: 'done', holder: null, token: null });
          }
        },
      };
    }
    case 'reject': {
      const t = m.t(s.task);
      return {
        kind: 'decision',
        call: (e) => e.rejectReview(s.task, 'not yet'),
        check: (answer) => {
          const res = answer as Result<unknown>;
          expect(res.ok, why(res)).toBe(t.state === 'review');
          if (!res.ok) return;
          t.state = t.holder ? 'claimed' : 'open';
          // back to its holder with a full lease from now, however long it waited in review
          if (t.holder) t.deadline = m.now + LEASE;
        },
      };
    }
    case 'reset': {
      const t = m.t(s.task);
      return {
        kind: 'decision',
        call: (e) => e.reset(s.task),
        check: (answer) => {
          const res = answer as Result<unknown>;
          expect(res.ok, why(res)).toBe(t.state === 'needs-attention');
          if (res.ok) Object.assign(t, { state: 'open', failures: 0 });
        },
      };
    }
  }
}

/** Each task as it was before a step: what "no claim ends without an event" compares with. */
export function tasksOf(e: LeaseEngine): Map<string, Task> {
  return new Map<string, Task>(TASKS.map((id) => [id, e.task(id) as Task]));
}

/** The highest token granted so far, as one observer of the board's events saw it. */
export interface GrantWatch {
  maxGranted: number;
}

/**
 * The safety properties after a step, on one engine that holds the board: `now` is the board's time, `before`
 * the tasks before the step, `fresh` the events the step made (in the board's order).
 */
export function checkInvariants(m: Model, engine: LeaseEngine, now: number, before: Map<string, Task>, fresh: readonly BoardEvent[], grants: GrantWatch): void {
  for (const id of TASKS) {
    const t = engine.task(id) as Task;
    const mt = m.t(id);
    // the engine and the model agree on state, holder, token and deadline
    expect({ state: t.state, holder: t.claim?.agentId ?? null, token: t.claim?.token ?? null }).toEqual({ state: mt.state, holder: mt.holder, token: mt.token });
    if (t.claim) {
      expect(t.claim.deadline).toBe(mt.deadline);
      // at most one holder, and it is unexpired: no claim that counts down outlives its deadline past a step
      // (one in review is held for the person, and the model says which those are)
      if (t.state !== 'review') expect(t.claim.deadline).toBeGreaterThan(now);
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
      expect(granted).toBeGreaterThan(grants.maxGranted);
      grants.maxGranted = granted;
    }
    // a write lands only inside the lease with the current token: every accepted renew extends a live claim
    if (e.kind === 'renew') expect(e.deadline).toBe(e.mono + LEASE);
    // a send-back to the holder is a full lease from then
    if (e.kind === 'returned' && e.to === 'claimed') expect(e.deadline).toBe(e.mono + LEASE);
  }
}

/** The log replays through the shared reducer to the same board: what a journal, a database and a window
 *  rebuild is what the engine holds. */
export function expectReplays(log: readonly BoardEvent[], board: Readonly<Board>): void {
  const replayed = emptyBoard();
  for (const e of log) applyEvent(replayed, e);
  expect(replayed).toEqual(board);
}

/** The board every sequence starts from (after its thread was created): the model's lease and poison limit,
 *  and its tasks, all open. */
export const setupSteps: ReadonlyArray<(e: LeaseEngine) => Result<unknown>> = [(e) => e.setSettings({ leaseMs: LEASE, poisonLimit: POISON }), ...TASKS.map(() => (e: LeaseEngine) => e.addTask({ title: 'work' }))];

const agent = fc.constantFrom(...AGENTS);
const task = fc.constantFrom(...TASKS);
const mode = fc.constantFrom<TokenMode>('current', 'current', 'none', 'old', 'foreign');
const ms = fc.oneof(fc.constantFrom(1, LEASE / 2, LEASE - 1, LEASE, LEASE + 1), fc.integer({ min: 0, max: LEASE * 1.5 }));
/** One generated step: agents' writes, time passing, host signals, and a person's actions. */
export const stepArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('claim' as const), agent, task: fc.option(task, { nil: null }) }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constantFrom('renew' as const, 'note' as const, 'done' as const, 'release' as const), agent, task, mode, pick: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('advance' as const), ms }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('hard' as const), agent }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('live' as const), agent }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('assign' as const), agent, task }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('userRelease' as const, 'approve' as const, 'reject' as const, 'reset' as const), task }) },
);
