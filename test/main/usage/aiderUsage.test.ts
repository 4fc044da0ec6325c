import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AiderUsageReader } from '../../../src-main/usage/aiderUsage.js';
import { usageReaderFor } from '../../../src-main/usage/usageRecords.js';
import { buildLaunch, type ProfileContext } from '../../../src-main/agents/profiles.js';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';
import type { BoardEvent } from '../../../src-shared/board/events.js';

/**
 * Issue 47: Aider's analytics log (`--analytics-log FILE`, given to the profile's agents as AIDER_ANALYTICS_LOG),
 * read as Aider writes it. The lines below are in the exact format of aider/analytics.py (Analytics.event: one
 * `json.dump` of {event, properties, user_id, time} and a newline per event) with the properties
 * base_coder.py's show_usage_report gives `message_send`, as in Aider's own sample-analytics.jsonl. Aider itself
 * cannot be installed here (no PyPI), so no test runs the real Aider against a fake model: its realCli suite
 * skips on this machine.
 */
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(join(tmpdir(), 'fb-aider-usage-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const USER = 'c42c4e6b-f054-44d7-ae1f-6726cc41da88';
const T = 1_765_200_000; // Unix seconds, as Aider writes `time`
/** Python's json.dump separators: ", " and ": ". */
const py = (v: unknown) => `${JSON.stringify(v, null, 1).replace(/\n\s*/g, ' ').replace(/\[ /g, '[').replace(/ \]/g, ']').replace(/\{ /g, '{').replace(/ \}/g, '}')}\n`;
const starting = (time: number) => py({ event: 'message_send_starting', properties: {}, user_id: USER, time });
const send = (time: number, prompt: number, completion: number, cost: number, total: number, model = 'gemini/gemini-2.5-pro') =>
  py({
    event: 'message_send',
    properties: { main_model: model, weak_model: 'gemini/gemini-2.5-flash-lite', editor_model: model, edit_format: 'diff', prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, cost, total_cost: total },
    user_id: USER,
    time,
  });

describe("Aider's analytics log", () => {
  it('takes each message_send once with its tokens, cost, model and time, and leaves a line being written for later', async () => {
    const log = join(dir, 'aider-analytics.jsonl');
    const r = new AiderUsageReader(log);
    expect((await r.read(T * 1000)).turns).toEqual([]); // no log yet: Aider has sent nothing
    fs.writeFileSync(log, py({ event: 'launched', properties: {}, user_id: USER, time: T }) + starting(T + 1) + send(T + 9, 10006, 81, 0.0133175, 0.0133175));
    // Half of the next message_send: Aider killed mid-write, or still writing.
    const whole = send(T + 20, 10829, 591, 0.01944625, 0.03276375);
    fs.appendFileSync(log, starting(T + 12) + whole.slice(0, 50));
    const first = await r.read(T * 1000 + 30_000);
    const firstId = `aider-analytics.jsonl:${Buffer.byteLength(py({ event: 'launched', properties: {}, user_id: USER, time: T }) + starting(T + 1))}:${T + 9}`;
    expect(first.turns).toEqual([{ id: firstId, cliAt: (T + 9) * 1000, model: 'gemini/gemini-2.5-pro', tokens: { input: 10006, output: 81, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, usd: 0.0133175 }]);
    expect(first.notices).toEqual([]);
    fs.appendFileSync(log, whole.slice(50));
    const second = await r.read(T * 1000 + 60_000);
    expect(second.turns.map((t) => [t.cliAt, t.tokens.input, t.tokens.output, t.usd])).toEqual([[(T + 20) * 1000, 10829, 591, 0.01944625]]);
    expect(second.notBefore).toBe(T * 1000 + 30_000);
  });

  it("leaves a model Aider redacted unnamed, and its cost of 0 (a model it has no price for) to the price table", async () => {
    const log = join(dir, 'a.jsonl');
    fs.writeFileSync(log, send(T, 500, 20, 0, 0, 'openrouter/REDACTED') + send(T + 1, 600, 30, 0, 0, 'None'));
    const r = await new AiderUsageReader(log).read(T * 1000);
    expect(r.turns.map((t) => [t.model, t.usd])).toEqual([
      [null, null],
      [null, null],
    ]);
  });

  it('says a newer format once, and a line cut short, and counts neither', async () => {
    const log = join(dir, 'a.jsonl');
    fs.writeFileSync(
      log,
      // A newer Aider that moved the counts: not guessed at.
      py({ event: 'message_send', properties: { main_model: 'gpt-x', usage: { prompt: 5, completion: 1 } }, user_id: USER, time: T }) +
        py({ event: 'message_send', properties: { main_model: 'gpt-x', tokens_in: 7 }, user_id: USER, time: T + 1 }) +
        // Aider killed mid-line, then started again appending: the cut line and the next share a line.
        '{"event": "message_send", "prope' +
        send(T + 2, 100, 10, 0.001, 0.001) +
        send(T + 3, 200, 20, 0.002, 0.003),
    );
    const reader = new AiderUsageReader(log);
    const r = await reader.read(T * 1000);
    expect(r.turns.map((t) => t.tokens.input)).toEqual([200]);
    expect(r.notices).toEqual([expect.stringMatching(/has a message_send this version of Forkbench does not know \(at byte 0\); such lines are not counted/)]);
    fs.appendFileSync(log, 'not json at all\n' + send(T + 4, 300, 30, 0.003, 0.006));
    const later = await reader.read(T * 1000 + 1000);
    expect(later.turns.map((t) => t.tokens.input)).toEqual([300]);
    expect(later.notices).toEqual([]); // said once per agent, not per line
  });

  it('is read where the profile tells Aider to write it, and a restart re-reads it without counting a turn twice', async () => {
    const stateDir = join(dir, 'state');
    fs.mkdirSync(stateDir);
    const ctx: ProfileContext = { threadDir: dir, socketPath: join(dir, 's.sock'), agentId: 'aider-1-aaaaaaaaaaaa', agentToken: 'secret', cliPath: '/opt/fb/cli.js', nodePath: '/usr/bin/node', binDir: '/opt/fb/bin', agentDir: join(dir, 'agent'), stateDir };
    const plan = buildLaunch('aider', ctx);
    const log = plan.env.AIDER_ANALYTICS_LOG!;
    fs.writeFileSync(log, starting(T) + send(T + 1, 1000, 100, 0.01, 0.01) + send(T + 2, 2000, 200, 0.02, 0.03));
    const at = { agentId: ctx.agentId, stateDir, env: plan.env, cwd: dir, startedAt: 0, sessionId: () => null };

    const clock = new ManualClock();
    const engine = new LeaseEngine(clock);
    const events: BoardEvent[] = [];
    engine.onEvent((e) => events.push(e));
    engine.createThread('th-aider', '');
    for (const round of [1, 2]) {
      // A fresh reader each round: the host restarted and reads the whole log again.
      const reader = usageReaderFor('aider', at)!;
      expect(reader.source).toBe('aider');
      const read = await reader.read(clock.wall());
      expect(read.turns).toHaveLength(2);
      const rec = engine.recordUsage(ctx.agentId, 'aider', read.turns, read.limits, { notBefore: read.notBefore });
      expect(rec).toMatchObject({ ok: true, value: { recorded: round === 1 ? 2 : 0, skipped: round === 1 ? 0 : 2 } });
    }
    const usage = events.filter((e): e is Extract<BoardEvent, { kind: 'usage' }> => e.kind === 'usage');
    expect(usage.flatMap((e) => e.turns.map((t) => t.tokens.input))).toEqual([1000, 2000]);
    expect(engine.state.costs.agents[ctx.agentId]).toMatchObject({ turns: 2, usd: 0.03, profile: 'aider' });
  });
});
