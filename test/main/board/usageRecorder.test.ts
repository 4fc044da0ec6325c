import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';
import { UsageRecording } from '../../../src-main/board/usageRecorder.js';
import { LedgerBounds } from '../../../src-shared/board/usageLedger.js';
import { checkStoredEvent } from '../../../src-shared/board/storedEvents.js';
import type { UsageTurn } from '../../../src-shared/usage/usage.js';

/**
 * Issue 47, attribution: the engine's recordUsage puts each turn an agent's CLI spent on the claim the agent
 * held when it was spent (by the CLI's time, or the host's receipt when the CLI's clock is off), on the one it
 * last acted on when it held several, and on its own overhead when it held none; it counts a turn id once.
 * The clock is injected: every time below is exact.
 */
const A = 'shell-1-aaaaaaaaaaaa';
const B = 'shell-2-bbbbbbbbbbbb';

function setup(tasks = 3) {
  const clock = new ManualClock();
  const engine = new LeaseEngine(clock);
  const events: BoardEvent[] = [];
  engine.onEvent((e) => events.push(e));
  engine.createThread('th-usage', '');
  for (let i = 0; i < tasks; i++) engine.addTask({ title: `task ${i + 1}` });
  const usage = () => events.filter((e): e is Extract<BoardEvent, { kind: 'usage' }> => e.kind === 'usage');
  return { clock, engine, events, usage };
}

/** A turn with counts that differ per turn (input n*100+1, output n*10+2), so a sum says which turns went where. */
function turn(n: number, cliAt: number | null, id = `msg-${n}`): UsageTurn {
  return { id, cliAt, model: 'fake-model', tokens: { input: n * 100 + 1, output: n * 10 + 2, cacheRead: n, cacheWrite: 0, reasoning: 0 }, usd: null };
}

const inputOf = (e: { turns: readonly UsageTurn[] }) => e.turns.reduce((s, t) => s + t.tokens.input, 0);

function ok<T>(r: { ok: true; value: T } | { ok: false; error: { code: string; message: string } }): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

describe('recordUsage: attribution by time', () => {
  it('puts turns on the claim held when they were spent, across a reassign, and time between claims on overhead', () => {
    const { clock, engine, usage } = setup();
    const t0 = clock.wall();
    clock.advance(1000);
    ok(engine.claim(A, 'T-1')); // A holds T-1 from t0+1000
    clock.advance(5000);
    ok(engine.assign('T-1', B)); // reassigned to B at t0+6000
    clock.advance(5000);
    // Read late, all at once: one turn before the claim, two under A's claim, one after the reassign.
    const r = ok(engine.recordUsage(A, 'claude', [turn(1, t0 + 500), turn(2, t0 + 1000), turn(3, t0 + 5999), turn(4, t0 + 6000)]));
    expect(r).toMatchObject({ recorded: 4, skipped: 0, byReceipt: 0 });
    const ev = usage();
    expect(ev.map((e) => [e.taskId, e.how, e.turns.map((t) => t.id)])).toEqual([
      [null, 'overhead', ['msg-1', 'msg-4']],
      ['T-1', 'held', ['msg-2', 'msg-3']],
    ]);
    expect(ev[1]?.token).toBe(1);
    // B's turns after the reassign go to T-1 under B's token.
    ok(engine.recordUsage(B, 'codex', [turn(5, t0 + 7000)]));
    expect(usage().at(-1)).toMatchObject({ agentId: B, taskId: 'T-1', token: 2, how: 'held', source: 'codex', profile: 'shell' });
  });

  it('with several claims held, the one it last acted on at that time, marked last-acted', () => {
    const { clock, engine, usage } = setup();
    const t0 = clock.wall();
    const c1 = ok(engine.claim(A, 'T-1'));
    clock.advance(1000);
    const c2 = ok(engine.claim(A, 'T-2')); // acts on T-2 from t0+1000
    clock.advance(1000);
    ok(engine.note(A, 'T-1', 'back on T-1', c1.token)); // on T-1 from t0+2000
    clock.advance(1000);
    ok(engine.renew(A, 'T-1', c1.token)); // still T-1: no switch
    ok(engine.recordUsage(A, 'claude', [turn(1, t0 + 500), turn(2, t0 + 1500), turn(3, t0 + 2500)]));
    expect(usage().map((e) => [e.taskId, e.how, e.turns.map((t) => t.id)])).toEqual([
      ['T-1', 'held', ['msg-1']],
      ['T-2', 'last-acted', ['msg-2']],
      ['T-1', 'last-acted', ['msg-3']],
    ]);
    expect(usage()[1]?.token).toBe(c2.token);
    expect(engine.state.usageLedger.agents.get(A)?.acted.map((x) => x.taskId)).toEqual(['T-1', 'T-2', 'T-1']);
  });

  it("uses the host's receipt time when the CLI's clock is off by more than the bound, or the record has none", () => {
    const { clock, engine, usage } = setup();
    const t0 = clock.wall();
    ok(engine.claim(A, 'T-1'));
    clock.advance(60_000);
    const bound = UsageRecording.skewBoundMs;
    // A CLI an hour ahead, one an hour behind the reader's last look, and a record with no time: all spent
    // now, under T-1. One just inside the bound keeps its own time (before the claim: overhead).
    const notBefore = t0 + 30_000;
    const r = ok(
      engine.recordUsage(A, 'gemini', [turn(1, clock.wall() + 3_600_000), turn(2, notBefore - 3_600_000), turn(3, null), turn(4, notBefore - bound)], undefined, { notBefore }),
    );
    expect(r.byReceipt).toBe(3);
    expect(usage().map((e) => [e.taskId, e.turns.map((t) => t.id)])).toEqual([
      ['T-1', ['msg-1', 'msg-2', 'msg-3']],
      [null, ['msg-4']],
    ]);
    // The turns keep the CLI's own times: only the attribution used the receipt.
    expect(usage()[0]?.turns[0]?.cliAt).toBe(t0 + 60_000 + 3_600_000);
  });
});

describe('recordUsage: each turn counted once', () => {
  it('skips a turn id already recorded for the agent, and a second of one id in one call; another agent may use the id', () => {
    const { clock, engine, usage } = setup();
    const t0 = clock.wall();
    ok(engine.claim(A, 'T-1'));
    expect(ok(engine.recordUsage(A, 'claude', [turn(1, t0), turn(2, t0), turn(2, t0)]))).toMatchObject({ recorded: 2, skipped: 1 });
    expect(ok(engine.recordUsage(A, 'claude', [turn(1, t0), turn(2, t0), turn(3, t0)]))).toMatchObject({ recorded: 1, skipped: 2 });
    expect(usage().flatMap((e) => e.turns.map((t) => t.id))).toEqual(['msg-1', 'msg-2', 'msg-3']);
    // Nothing new: no event at all.
    const before = usage().length;
    expect(ok(engine.recordUsage(A, 'claude', [turn(3, t0)]))).toMatchObject({ recorded: 0, skipped: 1, to: [] });
    expect(usage().length).toBe(before);
    // Ids are per agent.
    expect(ok(engine.recordUsage(B, 'claude', [turn(1, t0)])).recorded).toBe(1);
  });

  it('keeps a bounded number of ids per agent, the newest', () => {
    const { clock, engine } = setup();
    const n = LedgerBounds.seen + 10;
    const turns = Array.from({ length: n }, (_, i) => turn(i, clock.wall()));
    ok(engine.recordUsage(A, 'codex', turns));
    const seen = engine.state.usageLedger.agents.get(A)?.seen ?? [];
    expect(seen.length).toBe(LedgerBounds.seen);
    // The newest are kept: sending the last ones again counts nothing.
    expect(ok(engine.recordUsage(A, 'codex', turns.slice(-100))).recorded).toBe(0);
  });
});

describe('recordUsage: bad input', () => {
  it('refuses a batch with a turn the journal would not load back, naming it, and records nothing of it', () => {
    const { clock, engine, usage } = setup();
    const good = turn(1, clock.wall());
    const bad = { ...turn(2, clock.wall()), tokens: { ...turn(2, 0).tokens, output: -5 } };
    const r = engine.recordUsage(A, 'claude', [good, bad]);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('invalid-input');
      expect(r.error.message).toContain('turn 2 (id "msg-2"): tokens.output');
    }
    expect(usage()).toEqual([]);
    // Nothing of it was kept as seen: the good turn is counted when sent again on its own.
    expect(ok(engine.recordUsage(A, 'claude', [good])).recorded).toBe(1);
  });

  it("holds an agent's own reports to its write quota, journaling the first refusal once", () => {
    const { clock, engine, events } = setup();
    let refused: { code: string } | null = null;
    for (let i = 0; i < 10_000 && !refused; i++) {
      const r = engine.recordUsage(A, 'report', [turn(i, clock.wall(), `report-${i}`)]);
      if (!r.ok) refused = r.error;
    }
    expect(refused?.code).toBe('rate-limited');
    expect(events.filter((e) => e.kind === 'write-rejected' && e.op === 'usage')).toHaveLength(1);
    // A host reader is not an agent's write: not held to it.
    expect(engine.recordUsage(A, 'claude', [turn(1, clock.wall(), 'read-1')]).ok).toBe(true);
  });

  it('writes only events the journal loads back', () => {
    const { clock, engine, events } = setup();
    ok(engine.claim(A, 'T-1'));
    ok(engine.recordUsage(A, 'claude', [turn(1, clock.wall())], [{ window: 'five_hour', usedPct: 12.5, resetsAt: null }]));
    const e = events.at(-1) as BoardEvent;
    expect(e).toMatchObject({ kind: 'usage', limits: [{ window: 'five_hour', usedPct: 12.5 }] });
    expect(inputOf(e as Extract<BoardEvent, { kind: 'usage' }>)).toBe(101);
    expect(checkStoredEvent(JSON.parse(JSON.stringify(e)), engine.state, e.seq)).toMatchObject({ ok: true });
  });
});
