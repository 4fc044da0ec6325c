import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Agent } from '../../../src-main/agents/agent.js';
import { AgentRegistry } from '../../../src-main/agents/agentRegistry.js';
import { AgentSocket } from '../../../src-main/agents/agentSocket.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { Exit } from '../../../src-shared/protocol/cliWords.js';
import { CLI, ensureBuilt } from '../../helpers/cli.js';

/**
 * Issue 47: `forkbench limits` (a script's report of its headroom) and `forkbench statusline` (Claude Code's
 * status line, as the claude profile wires it) through the real CLI and the host's socket. The status JSON is
 * in the shape Claude Code 2.1.332 builds it (its statusLine input: session, model, workspace, cost,
 * context_window, and for a Claude.ai plan rate_limits.<window>.used_percentage and resets_at in Unix seconds).
 */
let root: string;
let board: JournalBoard;
let socket: AgentSocket;
let claude: Agent;

// The CLI is built first when its sources changed: a minute or two on a loaded machine, which is no test's time.
beforeAll(() => ensureBuilt(), 180_000);
beforeEach(async () => {
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-statusline-'));
  fs.mkdirSync(join(root, 'run'), { mode: 0o700 });
  fs.mkdirSync(join(root, 'home', '.claude'), { recursive: true });
  fs.mkdirSync(join(root, 'project'));
  board = await JournalBoard.open({ dir: join(root, 'board'), threadId: 'statusline' });
  const registry = new AgentRegistry();
  claude = registry.create('claude', 'C', 0);
  claude.started(process.pid);
  socket = await AgentSocket.listen(join(root, 'run', 'host.sock'), registry, board);
});
afterEach(async () => {
  await socket.close();
  await board.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const env = () => ({ PATH: process.env.PATH ?? '', HOME: join(root, 'home'), FORKBENCH_SOCKET: join(root, 'run', 'host.sock'), FORKBENCH_SECRET: claude.secret, FORKBENCH_AGENT_ID: claude.id });

function cli(args: string[], stdin: string | null = null) {
  const proc = spawn(process.execPath, [CLI, ...args], { env: env(), stdio: [stdin === null ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d) => (stdout += d));
  proc.stderr!.on('data', (d) => (stderr += d));
  if (stdin !== null) proc.stdin!.end(stdin);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => proc.on('exit', (code) => resolve({ code, stdout, stderr })));
}

const limitsEvents = async () => (await board.log()).filter((e): e is Extract<BoardEvent, { kind: 'usage' }> => e.kind === 'usage');

const RESET_5H = 1_765_170_000;
const RESET_7D = 1_765_600_000;
/** What Claude Code 2.1.332 hands its status line, for a Claude.ai plan's session after its first answer. */
const status = (fiveHour: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    session_id: '3f0c2a4e-0000-4000-8000-000000000001',
    transcript_path: join(root, 'home', '.claude', 'projects', '-project', '3f0c2a4e-0000-4000-8000-000000000001.jsonl'),
    cwd: join(root, 'project'),
    model: { id: 'claude-sonnet-4-5', display_name: 'Sonnet 4.5' },
    workspace: { current_dir: join(root, 'project'), project_dir: join(root, 'project'), added_dirs: [] },
    version: '2.1.332',
    output_style: { name: 'default' },
    cost: { total_cost_usd: 0.01234, total_duration_ms: 45000, total_api_duration_ms: 2300, total_lines_added: 156, total_lines_removed: 23 },
    context_window: { total_input_tokens: 15234, total_output_tokens: 4521, context_window_size: 200000, current_usage: null, used_percentage: 8, remaining_percentage: 92 },
    exceeds_200k_tokens: false,
    fast_mode: false,
    thinking: { enabled: true },
    rate_limits: { five_hour: { used_percentage: fiveHour, resets_at: RESET_5H }, seven_day: { used_percentage: 41.2, resets_at: RESET_7D } },
    ...extra,
  });

describe('forkbench statusline', () => {
  it("reports the rate limits Claude Code hands its status line and prints a short line; the same again records nothing", async () => {
    const r = await cli(['statusline'], status(23.5));
    expect(r.code, r.stderr).toBe(Exit.ok);
    expect(r.stdout).toBe('forkbench | Sonnet 4.5 | five hour 77% left | seven day 59% left | $0.0123 this session\n');
    expect(r.stderr).toBe('');
    const readings = [
      { window: 'five_hour', usedPct: 23.5, resetsAt: RESET_5H * 1000 },
      { window: 'seven_day', usedPct: 41.2, resetsAt: RESET_7D * 1000 },
    ];
    expect(board.state.costs.agents[claude.id]?.limits).toEqual(readings);
    // Claude Code runs it on every update while it streams: the same readings are one event.
    expect((await cli(['statusline'], status(23.5))).code).toBe(Exit.ok);
    expect((await cli(['statusline'], status(24))).code).toBe(Exit.ok);
    const events = await limitsEvents();
    expect(events.map((e) => [e.source, e.taskId, e.turns.length, e.limits?.[0]?.usedPct])).toEqual([
      ['report', null, 0, 23.5],
      ['report', null, 0, 24],
    ]);
    // `forkbench cost` says the headroom beside the agent, as the window's agent list does.
    const cost = await cli(['cost']);
    expect(cost.code, cost.stderr).toBe(Exit.ok);
    expect(cost.stdout).toContain(`rate-limit headroom, as each CLI last reported it:\n  ${claude.id}: five hour 76% left (resets 2025-12-08T05:00:00Z), seven day 58.8% left (resets 2025-12-13T04:26:40Z)\n`);
  });

  it("runs the person's own status line on the same input and shows its line instead of ours", async () => {
    // Their status line, in their own Claude settings: it reads the JSON it is given and says so.
    const theirs = `node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log("MINE "+JSON.parse(s).model.display_name+" "+(process.env.FORKBENCH_STATUSLINE_CHAINED||"")))'`;
    fs.writeFileSync(join(root, 'home', '.claude', 'settings.json'), JSON.stringify({ statusLine: { type: 'command', command: theirs } }));
    const r = await cli(['statusline'], status(50));
    expect(r.code, r.stderr).toBe(Exit.ok);
    expect(r.stdout).toBe('MINE Sonnet 4.5 1\n');
    expect(board.state.costs.agents[claude.id]?.limits.map((l) => l.usedPct)).toEqual([50, 41.2]);
    // The project's own settings come first, as in Claude Code.
    fs.mkdirSync(join(root, 'project', '.claude'));
    fs.writeFileSync(join(root, 'project', '.claude', 'settings.json'), JSON.stringify({ statusLine: { type: 'command', command: 'cat >/dev/null; echo PROJECT' } }));
    expect((await cli(['statusline'], status(50))).stdout).toBe('PROJECT\n');
  });

  it('an API-key session (no rate_limits) reports nothing and still shows its line', async () => {
    const r = await cli(['statusline'], status(0, { rate_limits: undefined }));
    expect(r.code, r.stderr).toBe(Exit.ok);
    expect(r.stdout).toBe('forkbench | Sonnet 4.5 | $0.0123 this session\n');
    expect(await limitsEvents()).toEqual([]);
  });

  it.each([
    ['not JSON', () => 'not json {', /the status input is not JSON/],
    ['a percent that is not a number', () => status(0, { rate_limits: { five_hour: { used_percentage: 'lots', resets_at: RESET_5H } } }), /the status input is not one this Forkbench knows \(rate_limits\.five_hour\.used_percentage: /],
    ['a window named with a control character', () => status(0, { rate_limits: { 'five\u001b[2Jhour': { used_percentage: 1, resets_at: RESET_5H } } }), /rate_limits/],
    ['more than 64 KiB', () => status(1, { padding: 'x'.repeat(70_000) }), /the status input is over 65536 characters; not read/],
  ])('input that is %s: says why on stderr, shows the bare line, exits 0, records nothing', async (_what, input, why) => {
    const r = await cli(['statusline'], input());
    expect(r.code).toBe(Exit.ok);
    expect(r.stdout).toBe('forkbench\n');
    expect(r.stderr).toMatch(why);
    expect(await limitsEvents()).toEqual([]);
  });

  it('outside a pane (no board to reach) still shows its line and exits 0', async () => {
    const proc = spawn(process.execPath, [CLI, 'statusline'], { env: { PATH: process.env.PATH ?? '', HOME: join(root, 'home') }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    proc.stdout.on('data', (d) => (stdout += d));
    proc.stdin.end(status(10));
    const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
    expect(code).toBe(Exit.ok);
    expect(stdout).toBe('forkbench | Sonnet 4.5 | five hour 90% left | seven day 59% left | $0.0123 this session\n');
  });
});

describe('forkbench limits', () => {
  it('records readings a script reports, says when they were known already, and refuses bad ones clearly', async () => {
    const r = await cli(['limits', 'five_hour=42.5@1765170000', 'seven_day=10']);
    expect(r.code, r.stderr).toBe(Exit.ok);
    expect(r.stdout.trim()).toBe('Recorded your rate-limit headroom: five_hour 42.5% used, resets 2025-12-08T05:00:00.000Z; seven_day 10% used.');
    const again = await cli(['limits', 'five_hour=42.5@1765170000,seven_day=10']);
    expect(again.stdout.trim()).toMatch(/^Already recorded your rate-limit headroom/);
    const bad = await cli(['limits', 'five_hour=142']);
    expect(bad.code).toBe(Exit.rejected);
    expect(bad.stderr).toContain('a percent used is 0 to 100');
    expect((await limitsEvents()).length).toBe(1);
  });
});
