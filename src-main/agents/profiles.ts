/**
 * Built-in agent profiles: how to start each coding agent CLI in a pane so that it can reach the board.
 *
 * Every agent gets the board two ways:
 * - the `forkbench` CLI on PATH (binDir first) with its identity in the protocol's AgentEnv variables:
 *   FORKBENCH_SOCKET, FORKBENCH_AGENT_ID, FORKBENCH_SECRET (the agent's secret; deliberately not called
 *   "token", which the instructions use for the fencing token a claim returns) and FORKBENCH_THREAD_DIR;
 * - where the CLI speaks MCP, the stdio server `<nodePath> <cliPath> mcp`, handed over the way that CLI
 *   takes it.
 *
 * Rules the profiles follow:
 * - Config goes through args, env, or files in a per-agent folder (in Forkbench's data, mode 0700), never
 *   into the user's repo or home.
 * - The agent token never appears in argv (/proc/<pid>/cmdline is readable by every local user; environ is
 *   not). Configs reference the environment where the CLI can expand it, or sit in 0600 files.
 * - Building a plan is pure; `writeProfileFiles` does the I/O.
 */
import { aider, claude, codex, gemini, opencode } from './cliProfiles.js';
import type { ProfileIdShared } from '../../src-shared/agents/profileIds.js';
import type { AgentProfile, CustomCommand, LaunchPlan, NoticeWay, ProfileContext } from './profileKit.js';
import { custom, shell } from './shellProfiles.js';

export * from './profileKit.js';

export const PROFILES: Readonly<Record<ProfileIdShared, AgentProfile>> = { claude, codex, gemini, aider, opencode, shell, custom };

export function buildLaunch(kind: ProfileIdShared, ctx: ProfileContext, customCommand?: CustomCommand): LaunchPlan {
  return PROFILES[kind].build(ctx, customCommand);
}

/** How a profile's agents are told things; a profile this Forkbench does not know (a pane a pty host kept
 *  from another version) is shown them: typing into an unknown program is what must not happen. */
export function noticeWayOf(kind: string): NoticeWay {
  return Object.hasOwn(PROFILES, kind) ? PROFILES[kind as ProfileIdShared].notices : 'shown';
}
