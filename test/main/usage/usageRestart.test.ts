import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BoardService } from '../../../src-main/board/boardService.js';
import { ClaudeUsageReader } from '../../../src-main/usage/claudeUsage.js';
import { CodexUsageReader } from '../../../src-main/usage/codexUsage.js';
import type { UsageReader } from '../../../src-main/usage/usageReader.js';
import { UsageWatcher } from '../../../src-main/usage/usageWatcher.js';
import { LedgerBounds } from '../../../src-shared/board/usageLedger.js';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import type { UsagePosition, UsageSource, UsageTurn } from '../../../src-shared/usage/usage.js';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';
import { boardStores } from '../../helpers/boardStores.js';
import { waitFor } from '../../helpers/pty.js';

/**
 * Issue 47, "a restart re-reads nothing twice": a host restart starts every reader again at the start of its
 * files, and the board remembers only the last LedgerBounds.seen turn ids per agent. What it records besides
 * (each stream's mark: up to where the reader had handed out every turn) keeps the turns older than those ids
 * from being counted again, in both stores, with real record files read by the real readers and watchers.
 */
const stores = boardStores('usage-restart');

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(join(tmpdir(), 'fb-usage-restart-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const CLAUDE = 'claude-1-aaaaaaaaaaaa';
const CODEX = 'codex-2-bbbbbbbbbbbb';
const CLAUDE_SESSION = '3f0c2a4e-0000-4000-8000-00000000beef';
const CODEX_SESSION = '0199aaaa-bbbb-7ccc-8ddd-00000000beef';
/** More turns per agent than the board keeps ids of, so a re-read reaches past them. */
const BEFORE = LedgerBounds.seen + 904;
/** Turns made after the restart. */
const AFTER = 37;

const line = (v: unknown) => `${JSON.stringify(v)}\n`;
const iso = (ms: number) => new Date(ms).toISOString();
/** Turn n's counts: different for every turn, so a sum tells which were counted. */
const input = (n: number) => 1000 + n;
const output = (n: number) => 10 + (n % 97);

const claudeFile = () => join(dir, 'claude', 'projects', '-tmp-project', `${CLAUDE_SESSION}.jsonl`);
const codexFile = () => join(dir, 'codex', 'sessions', '2026', '12', '08', `rollout-2026-12-08T00-00-00-${CODEX_SESSION}.jsonl`);

/** Claude Code's lines for messages from..to-1: each written as two lines, the first while its output was
 *  still streaming (1 token), the second complete. */
function claudeTurns(from: number, to: number, at: number): string {
  let s = '';
  for (let n = from; n < to; n++) {
    const msg = (out: number, stop: string | null) => ({ id: `msg_${n}`, model: 'claude-x', role: 'assistant', stop_reason: stop, usage: { input_tokens: input(n), output_tokens: out, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
    s += line({ type: 'user', timestamp: iso(at), sessionId: CLAUDE_SESSION, message: { role: 'user', content: `go ${n}` } });
    s += line({ type: 'assistant', timestamp: iso(at), sessionId: CLAUDE_SESSION, message: msg(1, null) });
    s += line({ type: 'assistant', timestamp: iso(at), sessionId: CLAUDE_SESSION, message: msg(output(n), 'end_turn') });
  }
  return s;
}

/** Codex's rollout lines for turns from..to-1: its model's output, then the turn's token_count. */
function codexTurns(from: number, to: number, at: number): string {
  let s = from === 0 ? line({ timestamp: iso(at), type: 'session_meta', payload: { id: CODEX_SESSION } }) + line({ timestamp: iso(at), type: 'turn_context', payload: { model: 'gpt-fake' } }) : '';
  let total = 0;
  for (let n = 0; n < to; n++) {
    total += input(n) + output(n);
    if (n < from) continue;
    const u = (i: number, o: number) => ({ input_tokens: i, cached_input_tokens: 0, output_tokens: o, reasoning_output_tokens: 0, total_tokens: i + o });
    s += line({ timestamp: iso(at), type: 'response_item', payload: { type: 'message', role: 'assistant', content: [] } });
    s += line({ timestamp: iso(at), type: 'event_msg', payload: { type: 'token_count', info: { total_token_usage: u(total, 0), last_token_usage: u(input(n), output(n)) }, rate_limits: null } });
  }
  return s;
}

const expected = (from: number, to: number) => {
  let sum = 0;
  for (let n = from; n < to; n++) sum += input(n) + output(n);
  return sum;
};

async function usageOf(b: BoardService, agentId: string): Promise<Array<Extract<BoardEvent, { kind: 'usage' }>>> {
  return (await b.log()).filter((e): e is Extract<BoardEvent, { kind: 'usage' }> => e.kind === 'usage' && e.agentId === agentId);
}

/** Tokens (input + output) the board counted for the agent, and how many turns. */
async function counted(b: BoardService, agentId: string): Promise<{ tokens: number; turns: number }> {
  const turns = (await usageOf(b, agentId)).flatMap((e) => e.turns);
  return { tokens: turns.reduce((n, t) => n + t.tokens.input + t.tokens.output, 0), turns: turns.length };
}

/** A host's watchers of both agents' records (as the roster runs them), polled by the test rather than a timer. */
function watchers(b: BoardService, warned: string[]): { poll(): Promise<void>; dispose(): void } {
  const make = (agentId: string, source: UsageSource, reader: UsageReader) =>
    new UsageWatcher(reader, (turns, limits, window) => b.run((e) => e.recordUsage(agentId, source, turns, limits, window)), (m) => warned.push(m), { pollMs: 3_600_000 });
  const ws = [
    make(CLAUDE, 'claude', new ClaudeUsageReader(join(dir, 'claude'), CLAUDE_SESSION)),
    make(CODEX, 'codex', new CodexUsageReader(join(dir, 'codex', 'sessions'), () => CODEX_SESSION)),
  ];
  return {
    async poll() {
      for (const w of ws) await w.poll();
    },
    dispose: () => ws.forEach((w) => w.dispose()),
  };
}

/** Both agents claim a task each, make BEFORE turns, and every one is recorded. */
async function build(b: BoardService): Promise<void> {
  expect((await b.run((e) => e.addTask({ title: 'parser' }))).ok).toBe(true);
  expect((await b.run((e) => e.addTask({ title: 'lexer' }))).ok).toBe(true);
  expect((await b.run((e) => e.claim(CLAUDE, 'T-1'))).ok).toBe(true);
  expect((await b.run((e) => e.claim(CODEX, 'T-2'))).ok).toBe(true);
  const at = b.clock.wall();
  fs.mkdirSync(join(claudeFile(), '..'), { recursive: true });
  fs.mkdirSync(join(codexFile(), '..'), { recursive: true });
  fs.writeFileSync(claudeFile(), claudeTurns(0, BEFORE, at));
  fs.writeFileSync(codexFile(), codexTurns(0, BEFORE, at));
  const warned: string[] = [];
  const w = watchers(b, warned);
  await w.poll();
  w.dispose();
  expect(warned).toEqual([]);
  for (const agent of [CLAUDE, CODEX]) expect(await counted(b, agent)).toEqual({ tokens: expected(0, BEFORE), turns: BEFORE });
  // The ids of the oldest turns are gone from the board's memory: only the marks keep them from counting again.
  expect(b.state.usageLedger.agents.get(CLAUDE)?.seen).toHaveLength(LedgerBounds.seen);
}

/** After the restart: new readers from the start of the files, then AFTER more turns. */
async function expectKept(b: BoardService): Promise<void> {
  const warned: string[] = [];
  const w = watchers(b, warned);
  await w.poll();
  for (const agent of [CLAUDE, CODEX]) expect(await counted(b, agent)).toEqual({ tokens: expected(0, BEFORE), turns: BEFORE });
  // A store opened with none of its agents running ends their claims; they claim their tasks again.
  for (const [agent, task] of [
    [CLAUDE, 'T-1'],
    [CODEX, 'T-2'],
  ] as const) {
    if (b.state.tasks.get(task)?.claim?.agentId !== agent) expect((await b.run((e) => e.claim(agent, task))).ok).toBe(true);
  }
  const at = b.clock.wall();
  fs.appendFileSync(claudeFile(), claudeTurns(BEFORE, BEFORE + AFTER, at));
  fs.appendFileSync(codexFile(), codexTurns(BEFORE, BEFORE + AFTER, at));
  await w.poll();
  w.dispose();
  expect(warned).toEqual([]);
  for (const [agent, task] of [
    [CLAUDE, 'T-1'],
    [CODEX, 'T-2'],
  ] as const) {
    expect(await counted(b, agent)).toEqual({ tokens: expected(0, BEFORE + AFTER), turns: BEFORE + AFTER });
    // The task's cost, as the board folds it: exactly its agent's turns, each once.
    const cost = b.state.tasks.get(task)?.cost;
    expect(cost && cost.tokens.input + cost.tokens.output).toBe(expected(0, BEFORE + AFTER));
    expect(cost?.turns).toBe(BEFORE + AFTER);
  }
}

describe('a restart re-reads nothing twice, past the ids the board keeps', () => {
  it.each([['its events', undefined], ['a snapshot', 5]] as const)('the journal, reopened from %s', async (_from, compactEvery) => {
    await stores.reopened(build, expectKept, compactEvery);
  }, 60_000);

  it('a PostgreSQL board: the host restarted on it, and another host after it, count nothing twice', async () => {
    const hostOf = await stores.shared();
    const first = await hostOf('host-a');
    first.hostAgent(CLAUDE);
    first.hostAgent(CODEX);
    await build(first);
    await first.close();
    const again = await hostOf('host-a');
    again.hostAgent(CLAUDE);
    again.hostAgent(CODEX);
    await expectKept(again);
    // Another host reading the same files from their start (the agents moved to it) agrees, and adds nothing.
    const other = await hostOf('host-b');
    other.hostAgent(CLAUDE);
    other.hostAgent(CODEX);
    await waitFor(() => other.state.seq === again.state.seq, 10_000, 'host-b catches up');
    const w = watchers(other, []);
    await w.poll();
    w.dispose();
    for (const agent of [CLAUDE, CODEX]) expect(await counted(other, agent)).toEqual({ tokens: expected(0, BEFORE + AFTER), turns: BEFORE + AFTER });
    expect(other.state.usageLedger).toEqual(again.state.usageLedger);
  }, 90_000);
});

describe("a stream's mark", () => {
  it('counts a turn placed before it as counted, and only for its own source and stream; a mark never moves back', async () => {
    const engine = new LeaseEngine(new ManualClock(0, Date.UTC(2026, 11, 8)));
    engine.createThread('th', '');
    const turn = (id: string): UsageTurn => ({ id, cliAt: null, model: 'm', tokens: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, usd: null });
    const record = (source: UsageSource, id: string, stream: string, at: number, marks?: UsagePosition[]) => {
      const r = engine.recordUsage(CLAUDE, source, [turn(id)], undefined, { notBefore: null, positions: new Map([[id, { stream, at }]]), ...(marks ? { marks } : {}) });
      if (!r.ok) throw new Error(r.error.message);
      return r.value.recorded;
    };
    expect(record('claude', 'a', 's', 10, [{ stream: 's', at: 100 }])).toBe(1);
    // A turn the board never saw the id of, placed before the mark: counted already.
    expect(record('claude', 'b', 's', 50)).toBe(0);
    // The mark is exclusive: a turn at it is not yet handed out.
    expect(record('claude', 'c', 's', 100, [{ stream: 's', at: 40 }])).toBe(1);
    expect(record('claude', 'd', 's', 60)).toBe(0);
    // Another source's stream of the same name, and another stream (a file replaced by another): their own.
    expect(record('codex', 'e', 's', 50)).toBe(1);
    expect(record('claude', 'f', 's2', 50)).toBe(1);
  });
});
