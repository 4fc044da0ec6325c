import { join } from 'node:path';
import { codexSessionsDir, findCodexSession, opencodeDb, opencodeSession, type SessionContext } from '../agents/sessionSpecs.js';
import { AIDER_RECORDS, AiderUsageReader, aiderLogPath } from './aiderUsage.js';
import { CLAUDE_RECORDS, ClaudeUsageReader, claudeConfigDir } from './claudeUsage.js';
import { CODEX_RECORDS, CodexUsageReader } from './codexUsage.js';
import { GEMINI_RECORDS, GeminiUsageReader } from './geminiUsage.js';
import { OPENCODE_RECORDS, OpenCodeUsageReader, opencodeExporter } from './opencodeUsage.js';
import type { UsageReader, UsageRecordsSpec } from './usageReader.js';

/**
 * Where each profile's CLI keeps its records of what it spent, and which fields Forkbench reads (issue 47).
 * Profiles not here (a shell, a custom command) report through `forkbench usage`.
 */
export const USAGE_RECORDS: Readonly<Record<string, UsageRecordsSpec>> = {
  claude: CLAUDE_RECORDS,
  codex: CODEX_RECORDS,
  gemini: GEMINI_RECORDS,
  opencode: OPENCODE_RECORDS,
  aider: AIDER_RECORDS,
};

/** What locates an agent's records: its session (as sessionSpecs.ts knows it) and the environment it runs in. */
export interface UsageLocation extends SessionContext {
  /** The conversation id recorded for the agent (chosen at launch, or found since), or null. */
  sessionId(): string | null;
}

/** The reader of `profile`'s records for one agent, or null for a profile whose records are not read. */
export function usageReaderFor(profile: string, at: UsageLocation): UsageReader | null {
  switch (profile) {
    case 'claude': {
      const dir = claudeConfigDir(at.env);
      const id = at.sessionId();
      return dir && id ? new ClaudeUsageReader(dir, id) : null;
    }
    case 'codex': {
      const dir = codexSessionsDir(at.env);
      // Codex names its session itself: found in its files (and kept) once its first exchange is written.
      let found: string | null = at.sessionId();
      return dir ? new CodexUsageReader(dir, async () => (found ??= at.sessionId() ?? (await findCodexSession(at)))) : null;
    }
    case 'gemini': {
      const id = at.sessionId();
      // The profile gives each Gemini agent a home of its own in its state folder (cliProfiles.ts).
      return id ? new GeminiUsageReader(at.env.GEMINI_CLI_HOME ?? join(at.stateDir, 'gemini-home'), id) : null;
    }
    case 'opencode': {
      // Its own database (sessionSpecs.ts), the one session in it its own: found once it has one.
      const env = { ...at.env, OPENCODE_DB: opencodeDb(at.stateDir) };
      let found: string | null = at.sessionId();
      return new OpenCodeUsageReader(async () => (found ??= at.sessionId() ?? (await opencodeSession.find?.({ ...at, env })) ?? null), opencodeExporter(env, at.cwd));
    }
    case 'aider':
      // The log the profile names (cliProfiles.ts), in the folder that outlives the host.
      return new AiderUsageReader(aiderLogPath(at.stateDir));
    default:
      return null;
  }
}
