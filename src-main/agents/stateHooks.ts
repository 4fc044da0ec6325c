/**
 * The hooks each CLI's profile sets up so the agent says what it is doing (`forkbench status … --hook`),
 * written into the agent's own runtime folder or passed on its command line, never into the user's repo or
 * their own settings. Each hook runs the CLI by absolute path (node and script), so a login shell that
 * resets PATH still finds it. `--hook` makes the call quiet and always exit 0: a hook must never change
 * what its CLI does.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MAX_PROMPT_CHARS, type ReportableState } from '../../src-shared/agents/agentLife.js';
import { shellQuote } from '../../src-shared/text/shellQuote.js';
import { json, type ProfileContext, type ProfileFile, SHARED_FILE_MODE } from './profileKit.js';

/** How long a CLI gives a hook: the call answers in milliseconds (it gives up on a slow board after
 *  HOOK_CALL_TIMEOUT_MS), but a node process takes a few hundred ms to start on a loaded machine; the CLIs'
 *  own defaults are a minute or more. Claude Code counts a hook's timeout in seconds, Gemini CLI in
 *  milliseconds: given 5, Gemini killed every hook after 5 ms and showed each as failed. */
const HOOK_TIMEOUT = { claudeSeconds: 5, geminiMs: 5_000 } as const;

export function statusCommand(ctx: ProfileContext, state: ReportableState): string {
  return `${shellQuote(ctx.nodePath)} ${shellQuote(ctx.cliPath)} status ${state} --hook`;
}

type HookGroups = Record<string, Array<{ matcher?: string; hooks: Array<{ type: 'command'; command: string; timeout: number }> }>>;

/** `timeout` is in the CLI's own unit (see HOOK_TIMEOUT). */
function groups(ctx: ProfileContext, timeout: number, events: ReadonlyArray<readonly [event: string, state: ReportableState, matcher?: string]>): HookGroups {
  const out: HookGroups = {};
  for (const [event, state, matcher] of events) {
    (out[event] ??= []).push({ ...(matcher ? { matcher } : {}), hooks: [{ type: 'command', command: statusCommand(ctx, state), timeout }] });
  }
  return out;
}

/**
 * Claude Code, through `--settings FILE` (a settings layer of its own over the user's: their hooks keep
 * running). The hooks run in order with the CLI (not `async`): a PreToolUse report still on its way must
 * not land after the PermissionRequest that follows it. Notification is matched on its type: idle_prompt is
 * a fixed 60 s timer that fires mid-thought, so it is never hooked.
 */
export function claudeHookSettings(ctx: ProfileContext, more: Record<string, unknown> = {}): ProfileFile {
  const hooks = groups(ctx, HOOK_TIMEOUT.claudeSeconds, [
    ['UserPromptSubmit', 'working'],
    ['PreToolUse', 'working', '*'],
    ['PermissionRequest', 'needs-input', '*'],
    ['PostToolUse', 'working', '*'],
    ['Notification', 'needs-input', 'permission_prompt|elicitation_dialog'],
    ['Stop', 'idle'],
  ]);
  return { path: join(ctx.agentDir, 'claude-settings.json'), content: json({ hooks, ...more }), mode: SHARED_FILE_MODE };
}

/** Gemini CLI's hooks, merged into the settings.json of the agent's own Gemini home. */
export function geminiHooks(ctx: ProfileContext): HookGroups {
  return groups(ctx, HOOK_TIMEOUT.geminiMs, [
    ['BeforeAgent', 'working'],
    ['AfterTool', 'working'],
    ['Notification', 'needs-input', 'ToolPermission'],
    ['AfterAgent', 'idle'],
  ]);
}

/**
 * OpenCode has events, not command hooks: a plugin in the agent's folder (named by OPENCODE_CONFIG's
 * `plugin` list) turns permission.asked, question.asked, session.idle and a busy session into status calls.
 */
export function opencodePlugin(ctx: ProfileContext): { file: ProfileFile; spec: string } {
  const path = join(ctx.agentDir, 'forkbench-status.js');
  const argv = JSON.stringify([ctx.cliPath, 'status']);
  const content = `// Forkbench: report this agent's state to its board (generated; rewritten at every launch).
import { spawn } from 'node:child_process';
const report = (state, text) => {
  const args = [...${argv}, state, '--hook', ...(text ? ['--text', String(text).slice(0, ${MAX_PROMPT_CHARS})] : [])];
  const child = spawn(${JSON.stringify(ctx.nodePath)}, args, { stdio: ['ignore', 'ignore', 'ignore'] });
  child.on('error', () => {});
};
// What a permission is asked for, as "bash: forkbench board" (OpenCode 1.18 names the permission and the
// patterns it covers; older ones a title).
const asked = (p) => (p.permission && Array.isArray(p.patterns) && p.patterns.length ? \`\${p.permission}: \${p.patterns.join(', ')}\` : p.title ?? p.permission ?? p.type);
export const ForkbenchStatus = async () => ({
  event: async ({ event }) => {
    const p = event.properties ?? {};
    if (event.type === 'permission.asked') report('needs-input', asked(p));
    else if (event.type === 'question.asked') report('needs-input', p.questions?.[0]?.question ?? p.question);
    else if (event.type === 'session.idle') report('idle');
    else if (event.type === 'session.status' && p.status?.type === 'busy') report('working');
    else if (event.type === 'permission.replied') report('working');
  },
});
`;
  return { file: { path, content, mode: SHARED_FILE_MODE }, spec: pathToFileURL(path).href };
}
