import type { ProfileIdShared } from './profileIds.js';

/**
 * How to install each agent CLI Forkbench has a profile for, in one place: the Launch menu and the command
 * palette show it beside a CLI that is not on PATH, so a person sees what to run rather than "(not found)".
 * The shell and a custom command need nothing installed.
 */
export const INSTALL_HINTS: Readonly<Partial<Record<ProfileIdShared, string>>> = {
  claude: 'npm i -g @anthropic-ai/claude-code',
  codex: 'npm i -g @openai/codex',
  gemini: 'npm i -g @google/gemini-cli',
  aider: 'python -m pip install aider-install && aider-install',
  opencode: 'npm i -g opencode-ai',
};
