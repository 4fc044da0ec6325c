import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { applyEvent, copyBoard, emptyBoard } from '../../../src-shared/board/reducer.js';
import { deserializeBoard, serializeBoard } from '../../../src-shared/board/serialized.js';
import { windowBoard } from '../../../src-shared/board/windowBoard.js';
import { checkStoredEvent } from '../../../src-shared/board/storedEvents.js';
import { SettingsPatchSchema } from '../../../src-shared/board/schemas.js';
import { billedTokens, CostFoldLimits } from '../../../src-shared/usage/costFold.js';
import { BUNDLED_PRICES, estimateMicros, priceOf, PRICE_TABLE_DATE } from '../../../src-shared/usage/prices.js';
import type { UsageTurn } from '../../../src-shared/usage/usage.js';
import { turn, usageEvent } from '../../helpers/usageEvents.js';

const A = 'claude-1-aaaaaaaaaaaa';
const B = 'codex-2-bbbbbbbbbbbb';
const DAY1 = Date.UTC(2026, 0, 1, 12);
const DAY2 = Date.UTC(2026, 0, 2, 12);

/** A board with `tasks` open tasks, and every event it applies from its first. */
function board(tasks = 2): { engine: LeaseEngine; clock: ManualClock; events: BoardEvent[] } {
  const clock = new ManualClock(1000, DAY1);
  const engine = new LeaseEngine(clock);
  const events: BoardEvent[] = [];
  engine.onEvent((e) => events.push(e));
  engine.createThread('th');
  for (let i = 0; i < tasks; i++) engine.addTask({ title: `task ${i + 1}` });
  return { engine, clock, events };
}

describe('the price table (issue 47)', () => {
  it('is dated, prices a model by the longest prefix of its name, and the Thread’s own prices win', () => {
    expect(PRICE_TABLE_DATE).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(priceOf('claude-opus-4-5-20251101', undefined)).toBe(BUNDLED_PRICES['claude-opus-4-5']);
    expect(priceOf('claude-opus-4-1-20250805', undefined)).toBe(BUNDLED_PRICES['claude-opus-4']);
    expect(priceOf('gpt-5-mini', undefined)).toBe(BUNDLED_PRICES['gpt-5-mini']);
    expect(priceOf('gpt-5-codex', undefined)).toBe(BUNDLED_PRICES['gpt-5']);
    expect(priceOf('GEMINI-2.5-PRO', undefined)).toBe(BUNDLED_PRICES['gemini-2.5-pro']);
    const own = { 'gpt-5-codex': { input: 2, output: 20, cacheRead: 0.2, cacheWrite: 2 } };
    expect(priceOf('gpt-5-codex-high', own)).toBe(own['gpt-5-codex']);
    expect(priceOf('my-local-llama', undefined)).toBeNull();
    expect(priceOf(null, own)).toBeNull();
  });

  it('estimates a turn to the micro-dollar: $3/M input, $15/M output, $0.30/M cache read, $3.75/M cache write', () => {
    const sonnet = BUNDLED_PRICES['claude-sonnet-4']!;
    expect(estimateMicros({ input: 1_000_000, output: 1_000_000, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, sonnet)).toBe(18_000_000);
    expect(estimateMicros({ input: 1200, output: 350, cacheRead: 40_000, cacheWrite: 2000, reasoning: 99 }, sonnet)).toBe(3600 + 5250 + 12_000 + 7500);
  });

  it('settings take the Thread’s prices whole, and refuse a negative price or a name that is not one', () => {
    expect(SettingsPatchSchema.safeParse({ prices: { 'gpt-5': { input: 1, output: 8, cacheRead: 0.1, cacheWrite: 1 } } }).success).toBe(true);
    expect(SettingsPatchSchema.safeParse({ prices: { 'gpt-5': { input: -1, output: 8, cacheRead: 0.1, cacheWrite: 1 } } }).success).toBe(false);
    expect(SettingsPatchSchema.safeParse({ prices: { 'gpt 5; rm': { input: 1, output: 8, cacheRead: 0.1, cacheWrite: 1 } } }).success).toBe(false);
    expect(SettingsPatchSchema.safeParse({ prices: { 'gpt-5': { input: 1, output: 8 } } }).success).toBe(false);
  });
});

describe('the cost fold in the board reducer (issue 47)', () => {
  it('adds each usage event to its task and to the Thread’s book: per agent (overhead apart), profile and day', () => {
    const { engine, clock } = board();
    engine.claim(A, 'T-1');
    usageEvent(engine, { agentId: A, taskId: 'T-1', at: clock.wall(), turns: [turn('m1', { input: 1000, output: 200 }), turn('m2', { input: 10, output: 5, cacheRead: 50_000, cacheWrite: 3000 })] });
    // The CLI's own figure wins over the table; a model the table lacks counts unpriced.
    usageEvent(engine, { agentId: B, profile: 'codex', taskId: 'T-1', how: 'last-acted', at: DAY2, turns: [turn('r1', { input: 500, output: 100, reasoning: 40 }, { model: 'gpt-5-codex', usd: 0.25 }), turn('r2', { input: 7 }, { model: 'homebrew-7b' })] });
    usageEvent(engine, { agentId: A, taskId: null, at: DAY2, turns: [turn('m3', { input: 100, output: 100 })] });

    const cost = engine.state.tasks.get('T-1')!.cost!;
    expect(cost.tokens).toEqual({ input: 1517, output: 305, cacheRead: 50_000, cacheWrite: 3000, reasoning: 40 });
    // A: (1010 × 3 + 205 × 15 + 50,000 × 0.3 + 3000 × 3.75) µ$ = 32,355 µ$; B: $0.25 as its CLI said.
    expect(cost.usd).toBe(0.282355);
    expect(cost).toMatchObject({ unpriced: 1, turns: 4 });
    expect(cost.byAgent[A]).toMatchObject({ turns: 2, usd: 0.032355, lastActed: 0 });
    expect(cost.byAgent[B]).toMatchObject({ turns: 2, usd: 0.25, unpriced: 1, lastActed: 2 });
    expect(cost.spend).toEqual([
      [DAY1, 0.032355, 54_215],
      [DAY2, 0.282355, 54_822],
    ]);
    expect(engine.state.tasks.get('T-2')!.cost ?? null).toBeNull();

    const book = engine.state.costs;
    expect(book.thread).toMatchObject({ turns: 5, unpriced: 1, usd: 0.284155 });
    expect(book.agents[A]).toMatchObject({ profile: 'claude', turns: 3, overhead: { turns: 1, usd: 0.0018 } });
    expect(book.agents[B]).toMatchObject({ profile: 'codex', turns: 2, overhead: { turns: 0 } });
    expect(Object.keys(book.profiles).sort()).toEqual(['claude', 'codex']);
    expect(book.days['2026-01-01']).toMatchObject({ turns: 2, usd: 0.032355 });
    expect(book.days['2026-01-02']).toMatchObject({ turns: 3 });
  });

  it('prices with the Thread’s prices as they were when the turn was recorded, so a replay agrees to the micro-dollar', () => {
    const { engine, clock, events } = board(1);
    usageEvent(engine, { agentId: A, taskId: 'T-1', at: clock.wall(), turns: [turn('a', { output: 1_000_000 }, { model: 'house-model' })] });
    engine.setSettings({ prices: { 'house-model': { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 } } });
    usageEvent(engine, { agentId: A, taskId: 'T-1', at: clock.wall(), turns: [turn('b', { output: 1_000_000 }, { model: 'house-model' })] });
    expect(engine.state.tasks.get('T-1')!.cost).toMatchObject({ usd: 2, unpriced: 1, turns: 2 });
    const replayed = emptyBoard();
    for (const e of events) applyEvent(replayed, e);
    expect(replayed.tasks.get('T-1')!.cost).toEqual(engine.state.tasks.get('T-1')!.cost);
    expect(replayed.costs).toEqual(engine.state.costs);
  });

  it('sums are the same over any order and any split of the same turns into events', () => {
    const turnArb = fc.record({
      input: fc.nat(2_000_000),
      output: fc.nat(200_000),
      cacheRead: fc.nat(5_000_000),
      cacheWrite: fc.nat(100_000),
      reasoning: fc.nat(50_000),
      model: fc.constantFrom('claude-sonnet-4-5', 'gpt-5-codex', 'gemini-2.5-flash', 'unknown-model', null),
      usd: fc.option(fc.integer({ min: 0, max: 5_000_000 }).map((m) => m / 1e6)),
      agent: fc.constantFrom(A, B),
    });
    fc.assert(
      fc.property(fc.array(turnArb, { minLength: 1, maxLength: 40 }), fc.array(fc.nat(), { minLength: 1, maxLength: 40 }), fc.integer(), (raw, cuts, seed) => {
        const turns = raw.map((r, i) => ({ agent: r.agent, t: turn(`t${i}`, r, { model: r.model, usd: r.usd }) }));
        const one = foldAll([turns]);
        // Shuffled by the seed, then cut into batches where `cuts` says; each batch is one agent's.
        const shuffled = [...turns].sort((x, y) => hash(x.t.id, seed) - hash(y.t.id, seed));
        const batches: Array<typeof turns> = [];
        let i = 0;
        for (const c of cuts) {
          if (i >= shuffled.length) break;
          batches.push(shuffled.slice(i, (i += 1 + (c % 5))));
        }
        if (i < shuffled.length) batches.push(shuffled.slice(i));
        const many = foldAll(batches);
        const cost = (b: typeof one) => b.tasks.get('T-1')!.cost!;
        expect({ tokens: cost(many).tokens, usd: cost(many).usd, unpriced: cost(many).unpriced, turns: cost(many).turns }).toEqual({ tokens: cost(one).tokens, usd: cost(one).usd, unpriced: cost(one).unpriced, turns: cost(one).turns });
        for (const agent of [A, B]) expect(pick(cost(many).byAgent[agent])).toEqual(pick(cost(one).byAgent[agent]));
        expect(many.costs.thread).toEqual(one.costs.thread);
      }),
      { numRuns: 200 },
    );
  });

  it('keeps at most a bounded number of spend points, the last one the totals', () => {
    const { engine, clock } = board(1);
    for (let i = 0; i < 1000; i++) {
      clock.advance(1000);
      usageEvent(engine, { agentId: A, taskId: 'T-1', at: clock.wall(), turns: [turn(`m${i}`, { input: 10, output: 1 })] });
    }
    const cost = engine.state.tasks.get('T-1')!.cost!;
    expect(cost.spend.length).toBeLessThanOrEqual(CostFoldLimits.spendPoints);
    expect(cost.spend.at(-1)).toEqual([clock.wall(), cost.usd, billedTokens(cost.tokens)]);
    const times = cost.spend.map((p) => p[0]);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('a copied board keeps its own book; snapshots and a window’s snapshot carry the costs', () => {
    const { engine, clock } = board(1);
    usageEvent(engine, { agentId: A, taskId: 'T-1', at: clock.wall(), turns: [turn('m1', { input: 100 })] });
    const copy = copyBoard(engine.state);
    usageEvent(engine, { agentId: A, taskId: null, at: clock.wall(), turns: [turn('m2', { input: 100 })] });
    expect(copy.costs.thread.turns).toBe(1);
    expect(engine.state.costs.thread.turns).toBe(2);
    const back = deserializeBoard(JSON.parse(JSON.stringify(serializeBoard(engine.state))));
    expect(back.costs).toEqual(engine.state.costs);
    expect(back.tasks.get('T-1')!.cost).toEqual(engine.state.tasks.get('T-1')!.cost);
    const win = windowBoard(engine.state);
    expect(win.costs).toEqual(engine.state.costs);
    expect(win.tasks[0]!.cost).toEqual(engine.state.tasks.get('T-1')!.cost);
    // A snapshot from before costs reads as nothing spent.
    const { costs: _costs, ...old } = serializeBoard(engine.state);
    expect(deserializeBoard(old).costs.thread.turns).toBe(0);
  });

  it('a stored budget-set is checked like any event: a budget of nothing, or for a task not on the board, is set aside', () => {
    const { engine } = board(1);
    const b = engine.state;
    const ev = (x: object) => ({ kind: 'budget-set', seq: b.seq + 1, at: 1, mono: 1, by: 'user', ...x });
    expect(checkStoredEvent(ev({ taskId: 'T-1', budget: { unit: 'usd', limit: 5 } }), b, b.seq + 1).ok).toBe(true);
    expect(checkStoredEvent(ev({ taskId: null, budget: { unit: 'tokens', limit: 1_000_000 } }), b, b.seq + 1).ok).toBe(true);
    expect(checkStoredEvent(ev({ taskId: 'T-1', budget: null }), b, b.seq + 1).ok).toBe(true);
    expect(checkStoredEvent(ev({ taskId: 'T-1', budget: { unit: 'usd', limit: 0 } }), b, b.seq + 1)).toMatchObject({ ok: false });
    expect(checkStoredEvent(ev({ taskId: 'T-1', budget: { unit: 'tokens', limit: 1.5 } }), b, b.seq + 1)).toMatchObject({ ok: false });
    expect(checkStoredEvent(ev({ taskId: 'T-9', budget: { unit: 'usd', limit: 5 } }), b, b.seq + 1)).toMatchObject({ ok: false, why: 'there is no task T-9' });
  });
});

function foldAll(batches: Array<Array<{ agent: string; t: UsageTurn }>>) {
  const { engine, clock } = board(1);
  for (const batch of batches) {
    // One event per agent's run within the batch: an event is one agent's.
    for (const agent of [A, B]) {
      const turns = batch.filter((x) => x.agent === agent).map((x) => x.t);
      if (turns.length) usageEvent(engine, { agentId: agent, taskId: 'T-1', at: clock.wall(), turns });
    }
  }
  return engine.state;
}

const pick = (s: { tokens: unknown; usd: number; unpriced: number; turns: number } | undefined) => s && { tokens: s.tokens, usd: s.usd, unpriced: s.unpriced, turns: s.turns };

function hash(s: string, seed: number): number {
  let h = seed | 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 2654435761);
  return h >>> 0;
}
