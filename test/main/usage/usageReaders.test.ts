import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClaudeRead, ClaudeUsageReader } from '../../../src-main/usage/claudeUsage.js';
import { CodexUsageReader } from '../../../src-main/usage/codexUsage.js';
import { GeminiUsageReader } from '../../../src-main/usage/geminiUsage.js';
import { UsageWatcher } from '../../../src-main/usage/usageWatcher.js';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';
import type { BoardEvent } from '../../../src-shared/board/events.js';

/**
 * Issue 47: each CLI's own records, read offline as the CLI writes them, in the record formats their current
 * versions write: a line the CLI is still writing (or was killed writing) waits until whole, a file replaced
 * or rewritten is read again without counting a turn twice, a record in a format this version does not know is
 * said once and never guessed at.
 */
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(join(tmpdir(), 'fb-usage-readers-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const line = (v: unknown) => `${JSON.stringify(v)}\n`;
const T0 = Date.UTC(2026, 11, 7, 12);
const iso = (ms: number) => new Date(ms).toISOString();

describe("Claude Code's transcript", () => {
  const session = '3f0c2a4e-0000-4000-8000-000000000001';
  const file = () => join(dir, 'projects', '-tmp-project', `${session}.jsonl`);
  const assistant = (id: string, at: number, usage: Record<string, number>, stop: string | null = null) =>
    line({ type: 'assistant', timestamp: iso(at), sessionId: session, message: { id, model: 'claude-x', role: 'assistant', stop_reason: stop, usage } });
  const u = (i: number, o: number, cr = 0, cw = 0) => ({ input_tokens: i, output_tokens: o, cache_read_input_tokens: cr, cache_creation_input_tokens: cw });

  it("takes each message once, with its last line's usage, and leaves a line being written for later", async () => {
    fs.mkdirSync(join(dir, 'projects', '-tmp-project'), { recursive: true });
    const r = new ClaudeUsageReader(dir, session);
    expect((await r.read(T0)).turns).toEqual([]); // no transcript yet
    fs.writeFileSync(file(), line({ type: 'user', message: { role: 'user', content: 'go' } }) + assistant('msg_1', T0 + 1, u(101, 1, 7, 3)) + assistant('msg_1', T0 + 2, u(101, 12, 7, 3), 'tool_use'));
    // Half of msg_2's line: the CLI killed mid-write, or still writing.
    const whole = assistant('msg_2', T0 + 3, u(202, 24), 'end_turn');
    fs.appendFileSync(file(), whole.slice(0, 40));
    const first = await r.read(T0 + 1000);
    expect(first.turns).toEqual([{ id: 'msg_1', cliAt: T0 + 2, model: 'claude-x', tokens: { input: 101, output: 12, cacheRead: 7, cacheWrite: 3, reasoning: 0 }, usd: null }]);
    expect(first.notBefore).toBe(T0);
    fs.appendFileSync(file(), whole.slice(40));
    const second = await r.read(T0 + 2000);
    expect(second.turns.map((t) => [t.id, t.tokens.input, t.tokens.output])).toEqual([['msg_2', 202, 24]]);
    expect(second.notices).toEqual([]);
  });

  it('says a usage it does not know, and counts nothing of it', async () => {
    fs.mkdirSync(join(dir, 'projects', '-tmp-project'), { recursive: true });
    fs.writeFileSync(file(), line({ type: 'assistant', timestamp: iso(T0), message: { id: 'msg_9', model: 'claude-y', usage: { prompt: { tokens: 5 } } } }));
    const r = await new ClaudeUsageReader(dir, session).read(T0);
    expect(r.turns).toEqual([]);
    expect(r.notices[0]).toMatch(/has a message whose usage this version of Forkbench does not know/);
  });
});

describe("Codex's rollout", () => {
  const session = '0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee';
  const sessions = () => join(dir, 'sessions');
  const rollout = (name = `rollout-2026-12-07T12-00-00-${session}.jsonl`) => join(sessions(), '2026', '12', '07', name);
  const count = (at: number, last: number[], total: number[]) => {
    const usage = ([i, c, o, r]: number[]) => ({ input_tokens: i, cached_input_tokens: c, output_tokens: o, reasoning_output_tokens: r, total_tokens: (i ?? 0) + (o ?? 0) });
    return line({ timestamp: iso(at), type: 'event_msg', payload: { type: 'token_count', info: { total_token_usage: usage(total), last_token_usage: usage(last), model_context_window: 1000 }, rate_limits: { primary: { used_percent: 12.5, window_minutes: 300, resets_in_seconds: 60 } } } });
  };

  it('takes last_token_usage per turn, skips a repeated total and an empty one, and reads a resumed session in its new file', async () => {
    fs.mkdirSync(join(sessions(), '2026', '12', '07'), { recursive: true });
    fs.writeFileSync(
      rollout(),
      line({ timestamp: iso(T0), type: 'session_meta', payload: { id: session } }) +
        line({ timestamp: iso(T0), type: 'turn_context', payload: { model: 'gpt-fake' } }) +
        line({ timestamp: iso(T0), type: 'event_msg', payload: { type: 'token_count', info: null, rate_limits: null } }) +
        count(T0 + 1, [1001, 200, 21, 5], [1001, 200, 21, 5]) +
        count(T0 + 2, [1001, 200, 21, 5], [1001, 200, 21, 5]) + // the same total again: a repeat
        count(T0 + 3, [1302, 0, 33, 0], [2303, 200, 54, 5]),
    );
    const r = new CodexUsageReader(sessions(), () => session);
    const first = await r.read(T0 + 1000);
    expect(first.turns.map((t) => [t.model, t.tokens])).toEqual([
      ['gpt-fake', { input: 801, cacheRead: 200, output: 21, reasoning: 5, cacheWrite: 0 }],
      ['gpt-fake', { input: 1302, cacheRead: 0, output: 33, reasoning: 0, cacheWrite: 0 }],
    ]);
    expect(first.limits).toEqual([{ window: 'primary', usedPct: 12.5, resetsAt: T0 + 1000 + 60_000 }]);
    // A resume writes a file of its own; totals run on.
    fs.writeFileSync(rollout(`rollout-2026-12-07T13-00-00-${session}.jsonl`), count(T0 + 4, [1403, 0, 44, 0], [3706, 200, 98, 5]));
    const second = await r.read(T0 + 2000);
    expect(second.turns.map((t) => t.tokens.input)).toEqual([1403]);
    // Read again from scratch (a restart): the same ids.
    const again = await new CodexUsageReader(sessions(), () => session).read(T0 + 3000);
    expect(again.turns.map((t) => t.id)).toEqual([...first.turns, ...second.turns].map((t) => t.id));
  });

  it('reads a file replaced under the same name from its start, and says a newer token_count once per reading', async () => {
    fs.mkdirSync(join(sessions(), '2026', '12', '07'), { recursive: true });
    fs.writeFileSync(rollout(), count(T0 + 1, [10, 0, 1, 0], [10, 0, 1, 0]) + count(T0 + 2, [20, 0, 2, 0], [30, 0, 3, 0]));
    const r = new CodexUsageReader(sessions(), () => session);
    expect((await r.read(T0)).turns).toHaveLength(2);
    // Rotated: a new file (another inode) in its place, shorter, in a newer format.
    fs.rmSync(rollout());
    fs.writeFileSync(rollout(), line({ timestamp: iso(T0 + 5), type: 'event_msg', payload: { type: 'token_count', info: { usage_v2: { in: 5 } } } }));
    const after = await r.read(T0 + 1000);
    expect(after.turns).toEqual([]);
    expect(after.notices).toHaveLength(1);
    expect(after.notices[0]).toMatch(/has a token_count this version of Forkbench does not know/);
  });
});

describe("Gemini CLI's chat file", () => {
  const session = 'c0ffee00-0000-4000-8000-000000000002';
  const chat = () => join(dir, '.gemini', 'tmp', 'abc123', 'chats', 'session-2026-12-07T12-00-c0ffee00.json');
  const msg = (id: string, at: number, input: number, output: number, cached = 0, thoughts = 0) => ({ id, timestamp: iso(at), type: 'gemini', content: 'ok', model: 'gemini-fake', tokens: { input, output, cached, thoughts, tool: 0, total: input + output } });

  it('reads the messages of its session as the file is rewritten, each once, and waits out a file caught mid-write', async () => {
    fs.mkdirSync(join(chat(), '..'), { recursive: true });
    const write = (messages: unknown[]) => fs.writeFileSync(chat(), JSON.stringify({ sessionId: session, projectHash: 'abc123', messages }));
    write([{ id: 'u1', type: 'user', content: 'go' }, msg('g1', T0 + 1, 105, 22, 5, 3)]);
    const r = new GeminiUsageReader(dir, session);
    expect((await r.read(T0)).turns).toEqual([{ id: `${session}:g1`, cliAt: T0 + 1, model: 'gemini-fake', tokens: { input: 100, cacheRead: 5, output: 22, reasoning: 3, cacheWrite: 0 }, usd: null }]);
    fs.writeFileSync(chat(), '{"sessionId":"'); // a rewrite caught half way
    expect(await r.read(T0 + 1000)).toMatchObject({ turns: [], notices: [] });
    write([{ id: 'u1', type: 'user', content: 'go' }, msg('g1', T0 + 1, 105, 22, 5, 3), msg('g2', T0 + 2, 206, 44)]);
    expect((await r.read(T0 + 2000)).turns.map((t) => t.id)).toEqual([`${session}:g2`]);
  });
});

describe("Gemini CLI's chat of lines (current versions)", () => {
  const session = 'c0ffee00-0000-4000-8000-000000000004';
  const chat = () => join(dir, '.gemini', 'tmp', 'project', 'chats', 'session-2026-12-07T12-00-c0ffee00.jsonl');
  const model = (id: string, at: number, input: number, extra = {}) => line({ id, timestamp: iso(at), type: 'gemini', content: '', tokens: { input, output: 9, cached: 2, thoughts: 1, tool: 0, total: input + 10 }, model: 'gemini-fake', ...extra });

  it('reads each model message once though Gemini writes it again as it grows, and waits for a line being written', async () => {
    fs.mkdirSync(join(chat(), '..'), { recursive: true });
    fs.writeFileSync(chat(), line({ sessionId: session, projectHash: 'p', kind: 'main' }) + line({ $set: { messages: [{ id: 'u0', type: 'user', content: [] }] } }) + model('g1', T0 + 1, 50) + line({ $set: { lastUpdated: iso(T0 + 1) } }));
    const r = new GeminiUsageReader(dir, session);
    expect((await r.read(T0)).turns.map((t) => [t.id, t.tokens])).toEqual([[`${session}:g1`, { input: 48, output: 9, cacheRead: 2, cacheWrite: 0, reasoning: 1 }]]);
    const next = model('g2', T0 + 2, 70);
    fs.appendFileSync(chat(), model('g1', T0 + 1, 50, { toolCalls: [] }) + next.slice(0, 30));
    expect((await r.read(T0 + 1000)).turns).toEqual([]);
    fs.appendFileSync(chat(), next.slice(30));
    expect((await r.read(T0 + 2000)).turns.map((t) => t.id)).toEqual([`${session}:g2`]);
  });
});

describe('the watcher', () => {
  it('records what its reader finds on the board, attributed to the claim held, and counts a re-read nothing', async () => {
    const session = '3f0c2a4e-0000-4000-8000-000000000003';
    const clock = new ManualClock(0, T0);
    const engine = new LeaseEngine(clock);
    const events: BoardEvent[] = [];
    engine.onEvent((e) => events.push(e));
    engine.createThread('th', '');
    engine.addTask({ title: 'x' });
    engine.claim('claude-1-aaaaaaaaaaaa', 'T-1');
    fs.mkdirSync(join(dir, 'projects', 'p'), { recursive: true });
    fs.writeFileSync(join(dir, 'projects', 'p', `${session}.jsonl`), line({ type: 'assistant', timestamp: iso(T0 + 5), message: { id: 'msg_a', model: 'm', stop_reason: 'end_turn', usage: { input_tokens: 11, output_tokens: 2 } } }));
    const record = (reader: ClaudeUsageReader) =>
      new UsageWatcher(reader, async (turns, limits, window) => engine.recordUsage('claude-1-aaaaaaaaaaaa', 'claude', turns, limits, window), () => undefined, { pollMs: 60_000, now: () => clock.wall() });
    const w = record(new ClaudeUsageReader(dir, session));
    await w.poll();
    w.dispose();
    // A second reader (a restart) reads the file again: nothing new on the board.
    const again = record(new ClaudeUsageReader(dir, session));
    await again.poll();
    again.dispose();
    const usage = events.filter((e): e is Extract<BoardEvent, { kind: 'usage' }> => e.kind === 'usage');
    expect(usage.map((e) => [e.taskId, e.how, e.turns.map((t) => t.id)])).toEqual([['T-1', 'held', ['msg_a']]]);
  });
});

describe("Claude Code's message written as it streams (its usage growing line by line)", () => {
  const session = '3f0c2a4e-0000-4000-8000-000000000005';
  const agent = 'claude-1-aaaaaaaaaaaa';
  const file = () => join(dir, 'projects', '-tmp-project', `${session}.jsonl`);
  const assistant = (id: string, at: number, output: number, stop: string | null) =>
    line({ type: 'assistant', timestamp: iso(at), sessionId: session, message: { id, model: 'claude-x', role: 'assistant', stop_reason: stop, usage: { input_tokens: 500, output_tokens: output, cache_read_input_tokens: 40, cache_creation_input_tokens: 9 } } });

  it('counts each message once with its final usage, however the reads fall between its lines, and a re-read (a restart) adds nothing', async () => {
    fs.mkdirSync(join(file(), '..'), { recursive: true });
    const clock = new ManualClock(0, T0);
    const engine = new LeaseEngine(clock);
    const events: BoardEvent[] = [];
    engine.onEvent((e) => events.push(e));
    engine.createThread('th', '');
    engine.addTask({ title: 'x' });
    engine.claim(agent, 'T-1');
    const warned: string[] = [];
    const watch = () => new UsageWatcher(new ClaudeUsageReader(dir, session), async (turns, limits, window) => engine.recordUsage(agent, 'claude', turns, limits, window), (m) => warned.push(m), { pollMs: 3_600_000, now: () => clock.wall() });
    const recorded = () => events.flatMap((e) => (e.kind === 'usage' ? e.turns.map((t) => [t.id, t.tokens.output]) : []));
    const w = watch();
    // msg_1 streams: its first block with 1 output token so far; reads find the file quiet between its lines.
    fs.writeFileSync(file(), line({ type: 'user', message: { role: 'user', content: 'go' } }) + assistant('msg_1', T0 + 1, 1, null));
    await w.poll();
    clock.advance(3_000);
    await w.poll();
    fs.appendFileSync(file(), assistant('msg_1', T0 + 2, 37, null));
    clock.advance(3_000);
    await w.poll();
    await w.poll();
    expect(recorded()).toEqual([]);
    // Its last block says how it stopped, with the final count.
    fs.appendFileSync(file(), assistant('msg_1', T0 + 3, 120, 'tool_use') + line({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result' }] } }));
    await w.poll();
    expect(recorded()).toEqual([['msg_1', 120]]);
    // msg_2's lines never say how it stopped: the next message's first line completes it.
    fs.appendFileSync(file(), assistant('msg_2', T0 + 4, 1, null) + assistant('msg_2', T0 + 5, 55, null));
    await w.poll();
    expect(recorded()).toEqual([['msg_1', 120]]);
    fs.appendFileSync(file(), assistant('msg_3', T0 + 6, 1, null));
    await w.poll();
    expect(recorded()).toEqual([
      ['msg_1', 120],
      ['msg_2', 55],
    ]);
    // msg_3 was cut off mid-stream: taken as it stands only once quiet for longer than any response streams.
    clock.advance(ClaudeRead.quietMs - 1);
    await w.poll();
    expect(recorded()).toHaveLength(2);
    clock.advance(1);
    await w.poll();
    expect(recorded().at(-1)).toEqual(['msg_3', 1]);
    w.dispose();
    // A restart reads the whole file at once: the same turns, with the same counts, so nothing is added.
    const again = watch();
    await again.poll();
    again.dispose();
    expect(recorded()).toEqual([
      ['msg_1', 120],
      ['msg_2', 55],
      ['msg_3', 1],
    ]);
    // msg_1 and msg_2 under the claim; msg_3, recorded when the lease had long lapsed, the agent's overhead.
    expect(engine.state.tasks.get('T-1')?.cost?.tokens).toEqual({ input: 1000, output: 175, cacheRead: 80, cacheWrite: 18, reasoning: 0 });
    expect(engine.state.costs.agents[agent]?.tokens).toEqual({ input: 1500, output: 176, cacheRead: 120, cacheWrite: 27, reasoning: 0 });
    expect(warned).toEqual([]);
  });

  it("takes a message its agent's process left half written when the process is gone", async () => {
    fs.mkdirSync(join(file(), '..'), { recursive: true });
    fs.writeFileSync(file(), assistant('msg_7', T0, 1, null) + assistant('msg_7', T0 + 1, 12, null));
    const r = new ClaudeUsageReader(dir, session);
    expect((await r.read(T0 + 1000)).turns).toEqual([]);
    expect((await r.read(T0 + 2000, true)).turns.map((t) => [t.id, t.tokens.output])).toEqual([['msg_7', 12]]);
  });
});

describe('the watcher, given a turn the board cannot take', () => {
  it('leaves out only that turn, says so once, and records the others', async () => {
    const session = '3f0c2a4e-0000-4000-8000-000000000006';
    const agent = 'claude-1-aaaaaaaaaaaa';
    const clock = new ManualClock(0, T0);
    const engine = new LeaseEngine(clock);
    const events: BoardEvent[] = [];
    engine.onEvent((e) => events.push(e));
    engine.createThread('th', '');
    const msg = (id: string, model: string, output: number) => line({ type: 'assistant', timestamp: iso(T0), message: { id, model, stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: output } } });
    fs.mkdirSync(join(dir, 'projects', 'p'), { recursive: true });
    // A model name with a control character: the board's journal would not load it back.
    fs.writeFileSync(join(dir, 'projects', 'p', `${session}.jsonl`), msg('msg_a', 'claude-x', 1) + msg('msg_b', 'claude-\u0007x', 2) + msg('msg_c', 'claude-x', 3));
    const warned: string[] = [];
    const w = new UsageWatcher(new ClaudeUsageReader(dir, session), async (turns, limits, window) => engine.recordUsage(agent, 'claude', turns, limits, window), (m) => warned.push(m), { pollMs: 3_600_000, now: () => clock.wall() });
    await w.poll();
    fs.appendFileSync(join(dir, 'projects', 'p', `${session}.jsonl`), msg('msg_d', 'claude-x', 4));
    await w.poll();
    w.dispose();
    const ids = events.flatMap((e) => (e.kind === 'usage' ? e.turns.map((t) => t.id) : []));
    expect(ids).toEqual(['msg_a', 'msg_c', 'msg_d']);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(/a turn the board cannot take \(turn "msg_b": model: holds control characters\); it is not counted, the others are/);
  });
});
