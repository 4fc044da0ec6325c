import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../src-main/base/clock.js';
import { LeaseEngine } from '../src-main/board/leaseEngine.js';
import { ClaudeUsageReader } from '../src-main/usage/claudeUsage.js';
import { CodexUsageReader } from '../src-main/usage/codexUsage.js';
import type { UsageTurn } from '../src-shared/usage/usage.js';
import { median, type Row } from './table.js';

/**
 * Issue 47's figure: what reading an agent CLI's own records and attributing its turns to claims costs, per
 * 1,000 CLI turns, in process (the host's cost; the disk is the page cache's). Goal: well under the 3 s a
 * reader polls at, for a day's turns of one busy agent (~5,000).
 */

const TURNS = 1000;
/** Rounds per figure: enough for a stable median on a loaded machine. */
const ROUNDS = 15;
const T0 = Date.UTC(2026, 11, 7, 9);
const AGENT = 'claude-1-aaaaaaaaaaaa';

/** A transcript as Claude Code writes one: a prompt line, then each message in two lines (a text and a tool
 *  call, the same id), with a tool result between turns: ~1.5 KB a turn, as real ones run. */
function claudeTranscript(path: string): void {
  const lines: string[] = [];
  const pad = 'x'.repeat(600);
  for (let i = 0; i < TURNS; i++) {
    const message = (stop: string | null) => ({ id: `msg_${i}`, model: 'claude-x', role: 'assistant', stop_reason: stop, content: [{ type: 'text', text: pad }], usage: { input_tokens: 100 + i, output_tokens: 20 + i, cache_read_input_tokens: i, cache_creation_input_tokens: 1 } });
    lines.push(JSON.stringify({ type: 'user', timestamp: new Date(T0 + i * 10_000).toISOString(), message: { role: 'user', content: pad } }));
    lines.push(JSON.stringify({ type: 'assistant', timestamp: new Date(T0 + i * 10_000 + 1).toISOString(), message: message(null) }));
    lines.push(JSON.stringify({ type: 'assistant', timestamp: new Date(T0 + i * 10_000 + 2).toISOString(), message: message('tool_use') }));
  }
  fs.writeFileSync(path, `${lines.join('\n')}\n`);
}

/** A Codex rollout: per turn its context line, a response item, and the token_count. */
function codexRollout(path: string): void {
  const lines: string[] = [];
  for (let i = 0; i < TURNS; i++) {
    const at = new Date(T0 + i * 10_000).toISOString();
    const u = (k: number) => ({ input_tokens: 1000 * k, cached_input_tokens: 100 * k, output_tokens: 20 * k, reasoning_output_tokens: k, total_tokens: 1020 * k });
    lines.push(JSON.stringify({ timestamp: at, type: 'turn_context', payload: { model: 'gpt-x', cwd: '/tmp' } }));
    lines.push(JSON.stringify({ timestamp: at, type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'y'.repeat(600) }] } }));
    lines.push(JSON.stringify({ timestamp: at, type: 'event_msg', payload: { type: 'token_count', info: { total_token_usage: u(i + 1), last_token_usage: u(1) }, rate_limits: null } }));
  }
  fs.writeFileSync(path, `${lines.join('\n')}\n`);
}

/** An engine whose agent held three claims in turn over the transcript's time, acting on each in rotation. */
function board(): LeaseEngine {
  const clock = new ManualClock(0, T0 - 1000);
  const e = new LeaseEngine(clock);
  e.createThread('bench');
  e.setSettings({ leaseMs: 24 * 60 * 60_000 });
  for (let i = 1; i <= 3; i++) e.addTask({ title: `task ${i}` });
  const tokens = [1, 2, 3].map((n) => {
    const r = e.claim(AGENT, `T-${n}`);
    if (!r.ok) throw new Error(r.error.message);
    return r.value.token;
  });
  for (let i = 0; i < TURNS; i += 10) {
    clock.advance(100_000);
    const n = (i / 10) % 3;
    e.renew(AGENT, `T-${n + 1}`, tokens[n]);
  }
  return e;
}

const perThousand = (ms: number) => (ms * 1000) / TURNS;

export async function usageBench(): Promise<Row[]> {
  const dir = fs.mkdtempSync(join(tmpdir(), 'fb-usage-bench-'));
  try {
    const session = 'bench-session';
    fs.mkdirSync(join(dir, 'projects', 'p'), { recursive: true });
    claudeTranscript(join(dir, 'projects', 'p', `${session}.jsonl`));
    const rollouts = join(dir, 'sessions', '2026', '12', '07');
    fs.mkdirSync(rollouts, { recursive: true });
    codexRollout(join(rollouts, `rollout-2026-12-07T09-00-00-${session}.jsonl`));
    const claude: number[] = [];
    const codex: number[] = [];
    const attribute: number[] = [];
    const reread: number[] = [];
    let turns: UsageTurn[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      let t0 = performance.now();
      turns = (await new ClaudeUsageReader(dir, session).read(T0)).turns;
      claude.push(performance.now() - t0);
      if (turns.length !== TURNS) throw new Error(`read ${turns.length} turns, not ${TURNS}`);
      t0 = performance.now();
      const n = (await new CodexUsageReader(join(dir, 'sessions'), () => session).read(T0)).turns.length;
      codex.push(performance.now() - t0);
      if (n !== TURNS) throw new Error(`read ${n} Codex turns, not ${TURNS}`);
      const e = board();
      t0 = performance.now();
      const rec = e.recordUsage(AGENT, 'claude', turns);
      attribute.push(performance.now() - t0);
      if (!rec.ok || rec.value.recorded !== TURNS) throw new Error('attribution failed');
      t0 = performance.now();
      const again = e.recordUsage(AGENT, 'claude', turns);
      reread.push(performance.now() - t0);
      if (!again.ok || again.value.recorded !== 0) throw new Error('a re-read counted turns');
    }
    return [
      { name: 'read Claude transcript, per 1,000 turns', value: perThousand(median(claude)), unit: 'ms', note: `${TURNS} turns, 3 lines each (~1.5 KB a turn), median of ${ROUNDS}` },
      { name: 'read Codex rollout, per 1,000 turns', value: perThousand(median(codex)), unit: 'ms', note: 'token_count with context and response lines' },
      { name: 'attribute + group into events, per 1,000', value: perThousand(median(attribute)), unit: 'ms', note: '3 claims held, acting on each in turn: every turn last-acted' },
      { name: 're-read after a restart, per 1,000', value: perThousand(median(reread)), unit: 'ms', note: 'every turn seen already: skipped, nothing written' },
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
