/**
 * The real Claude Code CLI, launched through its real profile in a real pty by a live ThreadHost, against a fake
 * Anthropic API: the profile's settings layer names `forkbench statusline` as its status line, Claude Code runs
 * it with its own status JSON, and the person's own status line (in their ~/.claude/settings.json) still runs,
 * on the same JSON, and is what the pane shows (issue 47).
 *
 * Claude Code hands its status line `rate_limits` only in a Claude.ai plan's session (read from the
 * anthropic-ratelimit-unified-* headers the limiter adds); against an API key, as here, it leaves them out. So the
 * person's status line of this test adds the two windows to the real JSON, in Claude Code's own shape, and hands
 * it to `forkbench statusline` from inside Claude Code's pane: the readings reach the board under that pane's
 * identity, through the pane's own `forkbench`, as a subscriber's would.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { closedAfterEach, describeRealCli, openRealCliThread, settledArgv } from '../../../helpers/realCli/harness.js';
import { startFakeAnthropic, type Script } from '../../../helpers/realCli/fakeAnthropic.js';
import { readStatus } from '../../../../src-main/cli/statusLine.js';
import type { BoardEvent } from '../../../../src-shared/board/events.js';
import { claudeEnv, seedClaudeHome } from '../../../helpers/realCli/claudeCode.js';

/** The windows the person's status line adds, as Claude Code writes them: percent used, reset in Unix seconds. */
const RESET_5H = 4_102_444_800;
const RESET_7D = 4_102_531_200;

/** A model that only answers: the status line needs no board work. */
const script: Script = {
  isAgent: (body) => JSON.stringify(body.system ?? '').includes('Forkbench'),
  next: () => ({ text: 'Ready.' }),
};

/**
 * A person who has used Claude Code before (its onboarding, the folder's trust and the key approved: without
 * them it stops at dialogs, as claude.test.ts found), with a status line of their own: it keeps the JSON it is
 * given in their Claude folder (writable in the sandbox), and pipes it with the two windows added to the
 * pane's `forkbench statusline`.
 */
function seedHome(home: string, folder: string): void {
  seedClaudeHome(home, 'default', { [folder]: {} });
  const addLimits = join(home, '.claude', 'add-limits.cjs');
  fs.writeFileSync(
    addLimits,
    `let s = '';
process.stdin.on('data', (d) => (s += d)).on('end', () => {
  require('node:fs').writeFileSync(require('node:path').join(process.env.HOME, '.claude', 'status-in.json'), s);
  // Set only for a status line run by forkbench statusline: that is the one Claude Code ran, not this one.
  require('node:fs').writeFileSync(require('node:path').join(process.env.HOME, '.claude', 'status-chained.txt'), String(process.env.FORKBENCH_STATUSLINE_CHAINED));
  const j = JSON.parse(s);
  j.rate_limits = { five_hour: { used_percentage: 23.5, resets_at: ${RESET_5H} }, seven_day: { used_percentage: 41.2, resets_at: ${RESET_7D} } };
  process.stdout.write(JSON.stringify(j));
});
`,
  );
  const theirs = `'${process.execPath}' '${addLimits}' | forkbench statusline`;
  fs.writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ permissions: { defaultMode: 'default' }, statusLine: { type: 'command', command: theirs } }, null, 2));
}

describeRealCli('claude', "Claude Code's status line, through its profile", () => {
  const open = closedAfterEach();

  it("runs forkbench statusline with its own JSON; the person's status line runs on it, and the headroom reaches the board", async () => {
    const api = open(await startFakeAnthropic(script));
    const t = open(await openRealCliThread('claude-statusline', claudeEnv(api.url)));
    seedHome(t.home, t.folder);
    const pane = await t.launch('claude', { diagnose: api.summary });
    const { agent, screen, step } = pane;

    // The line the pane shows is the person's status line's: here, `forkbench statusline` on the JSON it added to.
    await step(screen.until(() => screen.visible().includes('five hour 77% left'), 60_000, 'the status line with the headroom'));
    expect(screen.visible()).toContain('seven day 59% left');

    // The readings are on the board, the agent's own (no task, no spend), as its line in the agent list shows them.
    const limits = await t.event((e) => e.kind === 'usage' && e.agentId === agent.id, 15_000, 'the limits reading');
    expect(limits).toMatchObject({ turns: [], taskId: null, how: 'overhead', source: 'report' } satisfies Partial<Extract<BoardEvent, { kind: 'usage' }>>);
    expect(t.host.board.state.costs.agents[agent.id]?.limits).toEqual([
      { window: 'five_hour', usedPct: 23.5, resetsAt: RESET_5H * 1000 },
      { window: 'seven_day', usedPct: 41.2, resetsAt: RESET_7D * 1000 },
    ]);

    // Claude Code ran the profile's status line (its settings layer outranks the person's), which ran theirs.
    expect(fs.readFileSync(join(t.home, '.claude', 'status-chained.txt'), 'utf8')).toBe('1');

    // What Claude Code itself handed the status line: its session, cost and model, which forkbench statusline reads.
    const raw = fs.readFileSync(join(t.home, '.claude', 'status-in.json'), 'utf8');
    const seen = await readStatus(raw);
    expect(seen.ok, raw).toBe(true);
    const json = JSON.parse(raw) as { session_id: string; version: string; cost: { total_cost_usd: number }; rate_limits?: unknown };
    const argv = await settledArgv(agent.pid!);
    expect(json.session_id).toBe(argv[argv.indexOf('--session-id') + 1]);
    expect(typeof json.cost.total_cost_usd).toBe('number');
    // An API-key session: Claude Code says no rate limits of its own.
    expect(json.rate_limits).toBeUndefined();
    expect(t.trap.attempts).toEqual([]);
  }, 120_000);
});
