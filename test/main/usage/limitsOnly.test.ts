import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';
import { CodexUsageReader } from '../../../src-main/usage/codexUsage.js';
import { UsageWatcher } from '../../../src-main/usage/usageWatcher.js';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { checkStoredEvent } from '../../../src-shared/board/storedEvents.js';
import { limitsText, parseLimitsText } from '../../../src-shared/usage/limitsText.js';
import type { RateLimitReading } from '../../../src-shared/usage/usage.js';

/**
 * Issue 47: rate-limit headroom a CLI reports between turns (Codex repeats its token_count with only the limits
 * moved; Claude Code's status line carries them on every update) is recorded on its own, as a usage event of
 * readings and no turns, naming no task, and only when the readings changed: it is the agent's state, shown
 * beside it, and adds nothing to any spend. The clock is injected.
 */
const A = 'codex-1-aaaaaaaaaaaa';

function setup() {
  const clock = new ManualClock();
  const engine = new LeaseEngine(clock);
  const events: BoardEvent[] = [];
  engine.onEvent((e) => events.push(e));
  engine.createThread('th-limits', '');
  engine.addTask({ title: 'parser' });
  const usage = () => events.filter((e): e is Extract<BoardEvent, { kind: 'usage' }> => e.kind === 'usage');
  return { clock, engine, events, usage };
}

const five = (usedPct: number): RateLimitReading => ({ window: 'five_hour', usedPct, resetsAt: 1_765_170_000_000 });
const week: RateLimitReading = { window: 'seven_day', usedPct: 10, resetsAt: null };

describe('a rate-limit reading without turns', () => {
  it('is recorded as the agent’s headroom, naming no task and adding no spend, and loads back from the journal', () => {
    const { engine, usage } = setup();
    expect(engine.claim(A, 'T-1').ok).toBe(true);
    const r = engine.recordUsage(A, 'codex', [], [five(42.5), week]);
    expect(r).toMatchObject({ ok: true, value: { recorded: 0, skipped: 0, to: [] } });
    const [e] = usage();
    expect(e).toMatchObject({ kind: 'usage', agentId: A, profile: 'codex', source: 'codex', turns: [], taskId: null, token: null, how: 'overhead', limits: [five(42.5), week] });
    expect(checkStoredEvent(JSON.parse(JSON.stringify(e)), engine.state, e!.seq)).toMatchObject({ ok: true });
    const costs = engine.state.costs;
    expect(costs.agents[A]).toMatchObject({ turns: 0, usd: 0, limits: [five(42.5), week] });
    // Nothing spent: no Thread total, no profile or day row, no cost on the task the agent holds.
    expect(costs.thread.turns).toBe(0);
    expect(costs.profiles).toEqual({});
    expect(costs.days).toEqual({});
    expect(engine.state.tasks.get('T-1')?.cost ?? null).toBeNull();
  });

  it('the same readings again (in any order) record nothing; a moved one records the new set', () => {
    const { engine, usage } = setup();
    engine.recordUsage(A, 'codex', [], [five(42.5), week]);
    engine.recordUsage(A, 'codex', [], [week, five(42.5)]);
    expect(usage()).toHaveLength(1);
    engine.recordUsage(A, 'codex', [], [five(43), week]);
    expect(usage().map((e) => e.limits?.[0]?.usedPct)).toEqual([42.5, 43]);
    expect(engine.state.costs.agents[A]?.limits).toEqual([five(43), week]);
  });

  it('a journal line of no turns that names a task or carries no readings is refused as damage', () => {
    const { engine } = setup();
    const base = { seq: 9, at: 0, mono: 0, kind: 'usage', agentId: A, profile: 'codex', source: 'codex', turns: [], token: null, how: 'overhead' };
    expect(checkStoredEvent({ ...base, taskId: null }, engine.state, 9)).toMatchObject({ ok: false, why: expect.stringContaining('rate-limit reading, and names no task') });
    expect(checkStoredEvent({ ...base, taskId: 'T-1', limits: [week] }, engine.state, 9)).toMatchObject({ ok: false, why: expect.stringContaining('names no task') });
    expect(checkStoredEvent({ ...base, taskId: null, limits: [week] }, engine.state, 9)).toMatchObject({ ok: true });
  });
});

describe("Codex's repeated token_count with only its limits moved", () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(join(tmpdir(), 'fb-limits-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reaches the board through the watcher, where it was dropped before', async () => {
    const session = '0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee';
    const folder = join(dir, 'sessions', '2026', '12', '07');
    fs.mkdirSync(folder, { recursive: true });
    const file = join(folder, `rollout-2026-12-07T12-00-00-${session}.jsonl`);
    const usage = { input_tokens: 100, cached_input_tokens: 0, output_tokens: 10, reasoning_output_tokens: 0, total_tokens: 110 };
    const count = (used: number) => `${JSON.stringify({ timestamp: '2026-12-07T12:00:01Z', type: 'event_msg', payload: { type: 'token_count', info: { total_token_usage: usage, last_token_usage: usage }, rate_limits: { primary: { used_percent: used, window_minutes: 300, resets_at: 1_765_170_000 } } } })}\n`;
    fs.writeFileSync(file, count(12.5));
    const { engine, clock, usage: usageEvents } = setup();
    const warnings: string[] = [];
    const watcher = new UsageWatcher(new CodexUsageReader(join(dir, 'sessions'), () => session), async (turns, limits, window) => engine.recordUsage(A, 'codex', turns, limits, window), (m) => warnings.push(m), { pollMs: 3_600_000, now: () => clock.wall() });
    try {
      await watcher.poll();
      expect(usageEvents().map((e) => e.turns.length)).toEqual([1]);
      // The same total again, only the limits moved: no turn, and before this change no event at all.
      fs.appendFileSync(file, count(31));
      await watcher.poll();
      const last = usageEvents().at(-1)!;
      expect(usageEvents()).toHaveLength(2);
      expect(last).toMatchObject({ turns: [], taskId: null, limits: [{ window: 'primary', usedPct: 31, resetsAt: 1_765_170_000_000 }] });
      expect(engine.state.costs.agents[A]).toMatchObject({ turns: 1, limits: [{ window: 'primary', usedPct: 31 }] });
      // A poll that finds nothing new records nothing.
      await watcher.poll();
      expect(usageEvents()).toHaveLength(2);
      expect(warnings).toEqual([]);
    } finally {
      watcher.dispose();
    }
  });
});

describe('readings as text (`forkbench limits`)', () => {
  it('reads what it writes, and says clearly what is not a reading', () => {
    expect(parseLimitsText(limitsText([five(42.5), week]))).toEqual({ ok: true, readings: [five(42.5), week] });
    expect(parseLimitsText('five_hour=42.5@1765170000 seven_day=10')).toEqual({ ok: true, readings: [five(42.5), week] });
    expect(parseLimitsText('')).toMatchObject({ ok: false, message: expect.stringContaining('no reading given') });
    expect(parseLimitsText('five_hour=101')).toMatchObject({ ok: false, message: expect.stringContaining('a percent used is 0 to 100') });
    expect(parseLimitsText('five_hour=-1')).toMatchObject({ ok: false, message: expect.stringContaining("'five_hour=-1' is not a reading") });
    expect(parseLimitsText('a=1 a=2')).toMatchObject({ ok: false, message: 'the window a is given twice' });
    expect(parseLimitsText(Array.from({ length: 17 }, (_, i) => `w${i}=1`).join(','))).toMatchObject({ ok: false, message: 'at most 16 readings at once, not 17' });
  });
});
