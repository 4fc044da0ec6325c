/**
 * The agent CLIs Forkbench has a profile for. It sits with the agents' own words, below the board and the
 * protocol, because both the window's API and the install hints name profiles.
 */
export const PROFILE_IDS = ['claude', 'codex', 'gemini', 'aider', 'opencode', 'shell', 'custom'] as const;
export type ProfileIdShared = (typeof PROFILE_IDS)[number];
