import * as fs from 'node:fs';
import { join } from 'node:path';
import type { TokenCounts, UsagePosition, UsageTurn } from '../../src-shared/usage/usage.js';
import { UsageRecording } from '../board/usageRecorder.js';
import { JsonlTail } from './jsonlTail.js';
import { countOf, isObject, parseJson, timeOf, tokens, type UsageRead, type UsageReader, type UsageRecordsSpec } from './usageReader.js';

export const CLAUDE_RECORDS: UsageRecordsSpec = {
  where: '$CLAUDE_CONFIG_DIR (else ~/.claude)/projects/<folder>/<session id>.jsonl: the session transcript of the id the agent was launched with',
  fields: 'each assistant line\'s message.id, message.model, timestamp and message.usage: input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens (a message written as several lines is one turn, taken once complete, with its largest usage)',
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
  /** Offset of its first line: its place in the transcript. */
  readonly first: number;
  /** The conversation it streams in (the main one, or a subagent's): one message at a time in each. */
  readonly chain: string;
  /** Host ms of the read that last found a line of it. */
  readonly grewAt: number;
}

export const ClaudeRead = {
  /**
   * A message none of whose lines says how it stopped, and that no later message follows, is taken as it stands
   * once no line of it came for this long: the longest a single request runs, so no response streams
   * longer (UsageRecording.skewBoundMs says why). Only a response cut off mid-stream waits that out.
   */
  quietMs: UsageRecording.skewBoundMs,
  /** Ids of messages taken, kept to ignore a later line of one: a message is a few lines, written together. */
  takenIds: 1024,
} as const;

/** The larger of two counts per kind: a later line of a message carries its usage as it grew. */
const grown = (a: TokenCounts, b: TokenCounts): TokenCounts => ({
  input: Math.max(a.input, b.input),
  output: Math.max(a.output, b.output),
  cacheRead: Math.max(a.cacheRead, b.cacheRead),
  cacheWrite: Math.max(a.cacheWrite, b.cacheWrite),
  reasoning: Math.max(a.reasoning, b.reasoning),
});

/**
 * Claude Code's session transcript, read as it grows. Claude writes a message as several lines (one per
 * content block), each with the message's id and its usage as it stood then, the output growing as it
 * streams: a message is one turn, taken once complete, with its largest usage: when a line of it says how
 * it stopped, when a line of the next message in its conversation comes, or (cut off mid-stream) after
 * ClaudeRead.quietMs without a line, or when the agent's process is gone. Taking it only then, rather than
 * when a read finds the file quiet, is what makes a read again (a restart) take the same turns: its final
 * usage, counted once. Lines that are not assistant messages with a usage (prompts, tool results, summaries)
 * are not turns; Claude's own error stand-ins (`<synthetic>`) spent nothing.
 */
export class ClaudeUsageReader implements UsageReader {
  readonly source = 'claude' as const;
  private tail: JsonlTail | null = null;
  /** By message id, in the order their first lines came. */
  private readonly pending = new Map<string, Pending>();
  private readonly taken = new Set<string>();
  private lastRead: number | null = null;

  constructor(
    private readonly configDir: string,
    private readonly sessionId: string,
    private readonly quietMs: number = ClaudeRead.quietMs,
  ) {}

  async read(now: number, last = false): Promise<UsageRead> {
    const notBefore = this.lastRead;
    this.lastRead = now;
    if (!this.tail) {
      const path = findClaudeTranscript(this.configDir, this.sessionId);
      if (!path) return { turns: [], notBefore, notices: [] };
      this.tail = new JsonlTail(path);
    }
    const r = this.tail.read();
    if (!r) return { turns: [], notBefore, notices: [] };
    if (r.restarted) this.pending.clear();
    const turns: UsageTurn[] = [];
    const notices: string[] = [];
    const positions = new Map<string, UsagePosition>();
    const take = (id: string) => {
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      this.taken.add(id);
      if (this.taken.size > ClaudeRead.takenIds) this.taken.delete(this.taken.values().next().value as string);
      turns.push(p.turn);
      const stream = this.tail?.stream ?? null;
      if (stream !== null) positions.set(id, { stream, at: p.first });
    };
    for (const line of r.lines) {
      const rec = parseJson(line.text);
      if (!isObject(rec) || rec.type !== 'assistant' || !isObject(rec.message)) continue;
      const m = rec.message;
      if (typeof m.id !== 'string' || m.model === '<synthetic>' || this.taken.has(m.id)) continue;
      const chain = `${rec.isSidechain === true}:${typeof rec.agentId === 'string' ? rec.agentId : ''}`;
      // The next message of its conversation: the one before it there has streamed all it will.
      for (const [id, p] of this.pending) if (id !== m.id && p.chain === chain) take(id);
      const u = m.usage;
      const input = isObject(u) ? countOf(u.input_tokens) : null;
      const output = isObject(u) ? countOf(u.output_tokens) : null;
      if (!isObject(u) || input === null || output === null) {
        notices.push(`Claude Code's transcript ${this.tail.path} has a message whose usage this version of Forkbench does not know (at byte ${line.offset}); such messages are not counted`);
        continue;
      }
      const was = this.pending.get(m.id);
      const counts = tokens({ input, output, cacheRead: countOf(u.cache_read_input_tokens) ?? 0, cacheWrite: countOf(u.cache_creation_input_tokens) ?? 0 });
      this.pending.set(m.id, {
        turn: {
          id: m.id,
          cliAt: timeOf(rec.timestamp),
          model: typeof m.model === 'string' ? m.model.slice(0, 200) : null,
          tokens: was ? grown(was.turn.tokens, counts) : counts,
          usd: null,
        },
        first: was?.first ?? line.offset,
        chain,
        grewAt: now,
      });
      if (typeof m.stop_reason === 'string') take(m.id);
    }
    for (const [id, p] of this.pending) if (last || now - p.grewAt >= this.quietMs) take(id);
    // Every message whose first line lies before the earliest still streaming has been handed out.
    const stream = this.tail.stream;
    const earliest = Math.min(this.tail.position, ...[...this.pending.values()].map((p) => p.first));
    return { turns, notBefore, notices, positions, ...(stream !== null ? { marks: [{ stream, at: earliest }] } : {}) };
  }
}
