/**
 * How each agent CLI names its conversation, so that a pane whose process is gone (a reboot, a crash, a stop
 * on quit) can start the same conversation again. Every CLI is pointed at one conversation by its own id:
 * never "continue the latest session in this folder", since several agents share a folder and the latest
 * there may be another agent's.
 *
 * - Claude Code and Gemini CLI take the id we choose at launch (`--session-id <uuid>`) and resume it by id.
 * - Codex picks its own id and writes it at the top of the session file it records under CODEX_HOME; the
 *   file of this agent's session is the one whose developer instructions name this agent's id.
 * - OpenCode picks its own id; each agent gets a session database of its own (OPENCODE_DB), so the one
 *   session in it is this agent's.
 * - Aider keeps its chat in a history file; each agent gets its own and restores it on resume.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { ProfileIdShared } from '../../src-shared/agents/profileIds.js';
import type { LaunchPlan } from './profileKit.js';

export interface SessionContext {
  agentId: string;
  /** The agent's folder that outlives the host (in the Thread's data folder, mode 0700). */
  stateDir: string;
  /** The pane's environment as the profile built it. */
  env: Record<string, string | undefined>;
  cwd: string;
  /** Date.now() when the first process of this agent started: sessions recorded before are not its own. */
  startedAt: number;
}

export interface SessionStart {
  plan: LaunchPlan;
  /** The conversation's id when it is known at launch; null when the CLI names it and `find` learns it later. */
  sessionId: string | null;
}

export interface SessionSpec {
  /** The first launch: the plan with what names or locates its conversation. */
  start(plan: LaunchPlan, ctx: SessionContext): SessionStart;
  /** The id of the conversation this agent started, for CLIs that choose it themselves; null when none yet. */
  find?(ctx: SessionContext): Promise<string | null>;
  /** The plan that starts the CLI again on the conversation `sessionId`. */
  resume(plan: LaunchPlan, sessionId: string, ctx: SessionContext): LaunchPlan;
}

const withArgs = (plan: LaunchPlan, before: string[], after: string[] = []): LaunchPlan => ({ ...plan, args: [...before, ...plan.args, ...after] });
const withEnv = (plan: LaunchPlan, env: Record<string, string>): LaunchPlan => ({ ...plan, env: { ...plan.env, ...env } });

/** Ids CLIs give their sessions are plain tokens (uuids, `ses_…`); anything else in a record is refused. */
export const SESSION_ID = /^[A-Za-z0-9_.:-]{1,200}$/;

/** The id a CLI takes with `--session-id`, and its resume flag. */
function chosenId(resumeFlag: string): SessionSpec {
  return {
    start(plan) {
      const id = randomUUID();
      // First: both CLIs' later flags include variadic ones, and a flag with its value never breaks those.
      return { plan: withArgs(plan, ['--session-id', id]), sessionId: id };
    },
    resume: (plan, id) => withArgs(plan, [resumeFlag, id]),
  };
}

export const claudeSession: SessionSpec = chosenId('--resume');
export const geminiSession: SessionSpec = chosenId('--resume');

/** Where Codex records its sessions: $CODEX_HOME/sessions, CODEX_HOME defaulting to ~/.codex. */
export function codexSessionsDir(env: Record<string, string | undefined>): string | null {
  const home = env.CODEX_HOME ?? (env.HOME ? join(env.HOME, '.codex') : undefined);
  return home ? join(home, 'sessions') : null;
}

/** How much of a session file is read to find whose it is: the session's meta line and its developer
 *  instructions come first, and a file holds whole conversations after them. */
const SESSION_HEAD_BYTES = 256 * 1024;

/** The words of the board instructions (profileKit's boardInstructions) that name the agent. */
export const agentMarker = (agentId: string) => `You are agent \\"${agentId}\\"`;

/**
 * The id of the Codex session whose file names this agent in its instructions, among the files written
 * since the agent started. Codex files them as sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl with a first
 * line {"type":"session_meta","payload":{"id":…}}.
 */
export async function findCodexSession(ctx: SessionContext): Promise<string | null> {
  const dir = codexSessionsDir(ctx.env);
  if (!dir) return null;
  const files = (await fs.promises.readdir(dir, { recursive: true }).catch(() => [] as string[])).filter((f) => /rollout-.*\.jsonl$/.test(f));
  const marker = agentMarker(ctx.agentId);
  // A minute of slack: the folder's clock and ours are the same, but a file's mtime has coarse steps.
  const since = ctx.startedAt - 60_000;
  for (const rel of files.sort().reverse()) {
    const path = join(dir, rel);
    const stat = await fs.promises.stat(path).catch(() => null);
    if (!stat || stat.mtimeMs < since) continue;
    const head = await readHead(path, SESSION_HEAD_BYTES);
    if (!head.includes(marker)) continue;
    const first = head.slice(0, head.indexOf('\n') >>> 0);
    try {
      const id = (JSON.parse(first) as { payload?: { id?: unknown } }).payload?.id;
      if (typeof id === 'string' && SESSION_ID.test(id)) return id;
    } catch {
      /* a file being written: its first line is whole once the session has begun */
    }
    const fromName = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/.exec(rel)?.[1];
    if (fromName) return fromName;
  }
  return null;
}

async function readHead(path: string, bytes: number): Promise<string> {
  const fd = await fs.promises.open(path, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fd.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fd.close();
  }
}

export const codexSession: SessionSpec = {
  start: (plan) => ({ plan, sessionId: null }),
  find: findCodexSession,
  // `codex resume <id>` takes the same -c overrides as a fresh start.
  resume: (plan, id) => withArgs(plan, ['resume', id]),
};

/** The agent's own OpenCode session database: the only sessions in it are this agent's. */
export const opencodeDb = (stateDir: string) => join(stateDir, 'opencode.db');

/** How long `opencode session list` may take: it opens the database and loads its config (~1 s here). */
const OPENCODE_LIST_TIMEOUT_MS = 30_000;

export const opencodeSession: SessionSpec = {
  start: (plan, ctx) => ({ plan: withEnv(plan, { OPENCODE_DB: opencodeDb(ctx.stateDir) }), sessionId: null }),
  find(ctx) {
    if (!fs.existsSync(opencodeDb(ctx.stateDir))) return Promise.resolve(null);
    const env = { ...ctx.env, OPENCODE_DB: opencodeDb(ctx.stateDir) };
    return new Promise((resolve) => {
      execFile('opencode', ['session', 'list', '--format', 'json'], { cwd: ctx.cwd, env, timeout: OPENCODE_LIST_TIMEOUT_MS }, (err, stdout) => {
        if (err) return resolve(null);
        resolve(newestSessionId(stdout));
      });
    });
  },
  resume: (plan, id, ctx) => withArgs(withEnv(plan, { OPENCODE_DB: opencodeDb(ctx.stateDir) }), ['--session', id]),
};

/** The most recently updated session in `opencode session list --format json` output, or null. */
export function newestSessionId(listing: string): string | null {
  let sessions: unknown;
  try {
    sessions = JSON.parse(listing);
  } catch {
    return null;
  }
  if (!Array.isArray(sessions)) return null;
  type Listed = { id: string; updated?: unknown; time?: { updated?: unknown } };
  const time = (s: Listed) => Number(s.time?.updated ?? s.updated ?? 0);
  const ids = (sessions as Array<Partial<Listed> | null>)
    .filter((s): s is Listed => typeof s?.id === 'string' && SESSION_ID.test(s.id))
    .sort((a, b) => time(b) - time(a));
  return ids[0]?.id ?? null;
}

/** Aider's chat history, one file per agent; its path is the "session id" a resume restores. */
export const aiderHistory = (stateDir: string) => join(stateDir, 'aider.chat.history.md');

export const aiderSession: SessionSpec = {
  start: (plan, ctx) => ({ plan: withArgs(plan, ['--chat-history-file', aiderHistory(ctx.stateDir)]), sessionId: aiderHistory(ctx.stateDir) }),
  resume: (plan, id) => withArgs(plan, ['--chat-history-file', id, '--restore-chat-history']),
};

/** The profiles whose conversations can be resumed; a shell or a custom command has none of its own. */
export const SESSION_SPECS: Readonly<Partial<Record<ProfileIdShared, SessionSpec>>> = {
  claude: claudeSession,
  codex: codexSession,
  gemini: geminiSession,
  opencode: opencodeSession,
  aider: aiderSession,
};

export function sessionSpecOf(kind: ProfileIdShared): SessionSpec | undefined {
  return SESSION_SPECS[kind];
}
