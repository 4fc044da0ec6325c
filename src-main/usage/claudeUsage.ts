import * as fs from 'node:fs';
import { join } from 'node:path';
import type { UsageTurn } from '../../src-shared/usage/usage.js';
import { JsonlTail } from './jsonlTail.js';
import { countOf, isObject, parseJson, timeOf, tokens, type UsageRead, type UsageReader, type UsageRecordsSpec } from './usageReader.js';

export const CLAUDE_RECORDS: UsageRecordsSpec = {
  where: '$CLAUDE_CONFIG_DIR (else ~/.claude)/projects/<folder>/<session id>.jsonl: the session transcript of the id the agent was launched with',
  fields: 'each assistant line\'s message.id, message.model, timestamp and message.usage: input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens (a message written as several lines is one turn, its last line\'s usage)',
};

/** Claude Code's folder: $CLAUDE_CONFIG_DIR, else ~/.claude. */
export function claudeConfigDir(env: Record<string, string | undefined>): string | null {
  return env.CLAUDE_CONFIG_DIR ?? (env.HOME ? join(env.HOME, '.claude') : null);
}

/** The transcript of session `sessionId`: projects/<the folder, as Claude spells it>/<id>.jsonl. Looked up by
 *  its name rather than by spelling the folder as Claude does, which has changed between versions. */
export function findClaudeTranscript(configDir: string, sessionId: string): string | null {
  const projects = join(configDir, 'projects');
  let dirs: string[];
  try {
    dirs = fs.readdirSync(projects);
  } catch {
    return null;
  }
  for (const d of dirs) {
    const p = join(projects, d, `${sessionId}.jsonl`);
    if (fs.existsSync(p)) return p;
  }
  return null;
}

/** One assistant message as its lines say it so far. */
interface Pending {
  readonly turn: UsageTurn;
  readonly done: boolean;
}

/**
 * Claude Code's session transcript, read as it grows. Claude writes one line per content block of a message,
 * each with the message's id and its usage as it stood then, so a message is one turn, taken once its last
 * line is known: when a line of another message follows, when its line says how it stopped, or when a read
 * finds the file quiet. Lines that are not assistant messages with a usage (prompts, tool results, summaries)
 * are not turns; Claude's own error stand-ins (`<synthetic>`) spent nothing.
 */
export class ClaudeUsageReader implements UsageReader {
  readonly source = 'claude' as const;
  private tail: JsonlTail | null = null;
  private pending: Pending | null = null;
  private lastRead: number | null = null;

  constructor(
    private readonly configDir: string,
    private readonly sessionId: string,
  ) {}

  async read(now: number): Promise<UsageRead> {
    const notBefore = this.lastRead;
    this.lastRead = now;
    if (!this.tail) {
      const path = findClaudeTranscript(this.configDir, this.sessionId);
      if (!path) return { turns: [], notBefore, notices: [] };
      this.tail = new JsonlTail(path);
    }
    const r = this.tail.read();
    if (!r) return { turns: [], notBefore, notices: [] };
    const turns: UsageTurn[] = [];
    const notices: string[] = [];
    const flush = () => {
      if (this.pending) turns.push(this.pending.turn);
      this.pending = null;
    };
    for (const line of r.lines) {
      const rec = parseJson(line.text);
      if (!isObject(rec) || rec.type !== 'assistant' || !isObject(rec.message)) {
        if (isObject(rec)) flush();
        continue;
      }
      const m = rec.message;
      if (typeof m.id !== 'string' || m.model === '<synthetic>') continue;
      if (this.pending && this.pending.turn.id !== m.id) flush();
      const u = m.usage;
      const input = isObject(u) ? countOf(u.input_tokens) : null;
      const output = isObject(u) ? countOf(u.output_tokens) : null;
      if (!isObject(u) || input === null || output === null) {
        notices.push(`Claude Code's transcript ${this.tail.path} has a message whose usage this version of Forkbench does not know (at byte ${line.offset}); such messages are not counted`);
        continue;
      }
      this.pending = {
        turn: {
          id: m.id,
          cliAt: timeOf(rec.timestamp),
          model: typeof m.model === 'string' ? m.model.slice(0, 200) : null,
          tokens: tokens({ input, output, cacheRead: countOf(u.cache_read_input_tokens) ?? 0, cacheWrite: countOf(u.cache_creation_input_tokens) ?? 0 }),
          usd: null,
        },
        done: typeof m.stop_reason === 'string',
      };
      if (this.pending.done) flush();
    }
    if (r.quiet) flush();
    return { turns, notBefore, notices };
  }
}
