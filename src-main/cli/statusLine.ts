/**
 * `forkbench statusline`: Claude Code's status-line command in an agent's pane (the claude profile wires it,
 * cliProfiles.ts). Claude Code runs it with a JSON object on stdin, the session as it stands: among much else
 * `cost.total_cost_usd` and, for a Claude.ai plan, `rate_limits.<window>.used_percentage` and `.resets_at`
 * (Unix seconds). The readings go to the board under the pane's identity (`limits`); the person's own status
 * line, when their settings name one, runs on the same JSON and is what the pane shows, as without Forkbench.
 *
 * The JSON is the agent's CLI's, so as untrusted as the agent: bounded, validated, and a field it does not
 * know is no reason to refuse the rest.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { z as Z } from 'zod';
import type { RateLimitReading } from '../../src-shared/usage/usage.js';
import { MAX_READINGS } from '../../src-shared/usage/limitsText.js';

/** Claude Code's status JSON is about 2 KB; anything near this is not one, and is not parsed. */
export const MAX_STATUS_CHARS = 64 * 1024;
/** Claude Code writes the JSON at once and closes stdin; a run by hand from a terminal must not hang. */
export const STATUS_STDIN_WAIT_MS = 1000;
/** Set in the person's own status-line command's environment: a command of theirs that is itself
 *  `forkbench statusline` (copied from a pane's settings) runs once, not in a loop. */
export const STATUS_CHAIN_ENV = 'FORKBENCH_STATUSLINE_CHAINED';
/** The person's command is given what Claude Code gives a status line; 10 s is past any sane one's run and
 *  short of a status line left hanging forever. */
const THEIR_COMMAND_MS = 10_000;

/** A window's name as a board event holds it (storedEvents.ts), as Claude Code spells them: five_hour, seven_day. */
const WINDOW_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

async function schema(): Promise<Z.ZodType<StatusInput>> {
  // Loaded here only: the CLI's other commands start without the schema library (agentMethods.ts says why).
  const { z } = await import('zod');
  const reading = z
    .object({
      // Claude Code says a window used past its cap as more than 100: the headroom is none either way.
      used_percentage: z.number().finite(),
      // Unix seconds; a year 2286 time is no reset time.
      resets_at: z.number().int().nonnegative().max(1e10).nullable().optional(),
    })
    .loose();
  return z
    .object({
      cost: z.object({ total_cost_usd: z.number().finite().nonnegative().max(1e9).optional() }).loose().optional(),
      rate_limits: z.record(z.string().regex(WINDOW_NAME).max(100), reading.nullable()).nullable().optional(),
      model: z.object({ display_name: z.string().max(200).optional() }).loose().optional(),
      workspace: z.object({ project_dir: z.string().max(4096).optional() }).loose().optional(),
    })
    .loose() as unknown as Z.ZodType<StatusInput>;
}

export interface StatusInput {
  cost?: { total_cost_usd?: number };
  rate_limits?: Record<string, { used_percentage: number; resets_at?: number | null } | null> | null;
  model?: { display_name?: string };
  workspace?: { project_dir?: string };
}

/** What the status JSON says: the readings to report, the line to show, or why it was not read. */
export type StatusReading = { ok: true; input: StatusInput; readings: RateLimitReading[]; line: string } | { ok: false; message: string };

export async function readStatus(raw: string): Promise<StatusReading> {
  if (raw.length > MAX_STATUS_CHARS) return { ok: false, message: `the status input is over ${MAX_STATUS_CHARS} characters; not read` };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { ok: false, message: 'the status input is not JSON' };
  }
  const parsed = (await schema()).safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, message: `the status input is not one this Forkbench knows (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'its shape'})` };
  }
  const input = parsed.data;
  const readings: RateLimitReading[] = [];
  for (const [window, r] of Object.entries(input.rate_limits ?? {})) {
    if (!r || readings.length >= MAX_READINGS) continue;
    // Percent to six places, as the board's text of a reading holds it (limitsText.ts).
    const usedPct = Math.round(Math.min(100, Math.max(0, r.used_percentage)) * 1e6) / 1e6;
    readings.push({ window, usedPct, resetsAt: r.resets_at == null ? null : r.resets_at * 1000 });
  }
  return { ok: true, input, readings, line: statusLineText(input, readings) };
}

/** The line shown: the board's name, each window's headroom, and the session's cost as Claude Code counts it. */
export function statusLineText(input: StatusInput, readings: readonly RateLimitReading[]): string {
  const parts = ['forkbench'];
  if (input.model?.display_name) parts.push(input.model.display_name.replace(/[\p{C}]/gu, ''));
  for (const r of readings) parts.push(`${r.window.replace(/_/g, ' ')} ${Math.round(100 - r.usedPct)}% left`);
  const usd = input.cost?.total_cost_usd;
  if (usd !== undefined) parts.push(`$${usd.toFixed(usd < 1 ? 4 : 2)} this session`);
  return parts.join(' | ');
}

/**
 * The person's own status-line command, as Claude Code would pick it without Forkbench's settings layer: their
 * project's local settings, then the project's, then their own (CLAUDE_CONFIG_DIR, else ~/.claude). Null when
 * none names one, or when this run is itself theirs (STATUS_CHAIN_ENV).
 */
export function theirStatusCommand(env: NodeJS.ProcessEnv, projectDir: string | undefined): string | null {
  if (env[STATUS_CHAIN_ENV]) return null;
  const configDir = env.CLAUDE_CONFIG_DIR ?? (env.HOME ? join(env.HOME, '.claude') : null);
  const files = [
    ...(projectDir ? [join(projectDir, '.claude', 'settings.local.json'), join(projectDir, '.claude', 'settings.json')] : []),
    ...(configDir ? [join(configDir, 'settings.json')] : []),
  ];
  for (const f of files) {
    let settings: unknown;
    try {
      // A settings file is a few KB; one past the status input's bound is not read for this.
      if (fs.statSync(f).size > MAX_STATUS_CHARS) continue;
      settings = JSON.parse(fs.readFileSync(f, 'utf8'));
    } catch {
      continue;
    }
    const line = (settings as { statusLine?: { type?: unknown; command?: unknown } } | null)?.statusLine;
    if (line && line.type === 'command' && typeof line.command === 'string' && line.command.trim()) return line.command;
  }
  return null;
}

/** Runs the person's command as Claude Code runs a status line (through the shell, the JSON on stdin), its
 *  output passed straight through. Resolves when it ends, or is ended past THEIR_COMMAND_MS. */
export function runTheirs(command: string, raw: string, env: NodeJS.ProcessEnv, cwd: string | undefined): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], { stdio: ['pipe', 'inherit', 'inherit'], env: { ...env, [STATUS_CHAIN_ENV]: '1' }, ...(cwd && fs.existsSync(cwd) ? { cwd } : {}) });
    const timer = setTimeout(() => child.kill('SIGKILL'), THEIR_COMMAND_MS);
    child.on('error', () => {
      clearTimeout(timer);
      resolve();
    });
    child.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
    // A command that does not read its stdin closes the pipe early: no error of ours.
    child.stdin.on('error', () => undefined);
    child.stdin.end(raw);
  });
}
