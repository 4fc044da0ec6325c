/**
 * What the real Claude Code CLI needs around it to run hermetically against the fake Anthropic API
 * (fakeAnthropic.ts), for a test that runs it through a ThreadHost's pane or through `forkbench serve`'s window:
 * the environment that points it at the fake and keeps it from calling out, and the files a person who has used
 * it before has in its home.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';

export const CLAUDE_API_KEY = 'sk-ant-api03-forkbench-test-key-0123456789';

/**
 * Claude Code's permission modes that matter to the tests. In 'default' (manual) mode every tool call no rule
 * allows waits for a person, so that is where the profile's --allowedTools must do the work. 'auto' is 2.1.332's
 * own default: a classifier decides, in which the real API takes part and the fake does not.
 */
export type ClaudePermissionMode = 'default' | 'auto';

/**
 * What Claude Code's pane gets besides what the profile sets: the fake API, a key, and the switches that keep it
 * from calling out at all (a proxy trap would only refuse what it sends).
 */
export function claudeEnv(baseUrl: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: CLAUDE_API_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    // Not covered by the switch above: at start it would clone Anthropic's plugin marketplace (git and ssh
    // to github.com, a download from claude.ai).
    CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: '1',
  };
}

/**
 * What a person who has used Claude Code before has in its files, found by experiment with 2.1.332:
 * - without `hasCompletedOnboarding` it runs the theme and login screens (and probes api.anthropic.com);
 * - without the folder's `hasTrustDialogAccepted` it asks whether to trust the folder, and quits on No;
 * - without the key's last 20 characters in `customApiKeyResponses.approved` it asks whether to use
 *   ANTHROPIC_API_KEY, with No preselected;
 * - in manual mode, without `hasSeenAutoDefaultNudge` it offers to make auto mode the default, a dialog
 *   that takes the first Enter typed.
 * The permission mode is the person's choice in ~/.claude/settings.json; `projects` maps each folder Claude Code
 * runs in to extra per-folder keys.
 */
export function seedClaudeHome(home: string, mode: ClaudePermissionMode, projects: Record<string, object>): void {
  const config = {
    hasCompletedOnboarding: true,
    hasSeenAutoDefaultNudge: true,
    customApiKeyResponses: { approved: [CLAUDE_API_KEY.slice(-20)], rejected: [] },
    projects: Object.fromEntries(Object.entries(projects).map(([folder, extra]) => [fs.realpathSync(folder), { hasTrustDialogAccepted: true, ...extra }])),
  };
  fs.writeFileSync(join(home, '.claude.json'), JSON.stringify(config, null, 2), { mode: 0o600 });
  fs.mkdirSync(join(home, '.claude'), { recursive: true });
  fs.writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ permissions: { defaultMode: mode } }, null, 2));
}
