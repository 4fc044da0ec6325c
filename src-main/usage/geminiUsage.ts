import * as fs from 'node:fs';
import { join } from 'node:path';
import type { UsagePosition, UsageTurn } from '../../src-shared/usage/usage.js';
import { JsonlTail } from './jsonlTail.js';
import { countOf, isObject, parseJson, timeOf, tokens, type UsageRead, type UsageReader, type UsageRecordsSpec } from './usageReader.js';

export const GEMINI_RECORDS: UsageRecordsSpec = {
  where:
    "the agent's Gemini home (GEMINI_CLI_HOME, in its state folder)/.gemini/tmp/<project>/chats/session-*.jsonl (or .json, as versions before wrote it whole): the chat whose sessionId is the one the agent was launched with",
  fields: 'each message of type gemini (a line of its own, or in a `$set` of messages): id, timestamp, model and tokens (input, cached, output, thoughts); input counted without the cached part; a message written again is one turn',
};

/** The chat files under a Gemini home (each JSON, rewritten whole as the chat goes on). */
function chatFiles(geminiHome: string): string[] {
  const tmp = join(geminiHome, '.gemini', 'tmp');
  let projects: string[];
  try {
    projects = fs.readdirSync(tmp);
  } catch {
    return [];
  }
  return projects.flatMap((p) => {
    try {
      return fs.readdirSync(join(tmp, p, 'chats')).filter((f) => /^session-.*\.jsonl?$/.test(f)).map((f) => join(tmp, p, 'chats', f));
    } catch {
      return [];
    }
  });
}

/**
 * Gemini CLI's chat file of one session. Current versions append lines (a header, each message as it is
 * written and again as it grows, `$set` patches), read as they grow; earlier ones rewrote one JSON object
 * whole, parsed again when it changed (a file caught mid-write, not JSON yet, is read at the next poll). A
 * message's id is Gemini's own, stable across rewrites, so a message written twice is one turn.
 */
export class GeminiUsageReader implements UsageReader {
  readonly source = 'gemini' as const;
  private path: string | null = null;
  private tail: JsonlTail | null = null;
  private seen = '';
  /** Ids of the turns given out by this reader: a rewrite of the file repeats them all. */
  private readonly given = new Set<string>();
  private lastRead: number | null = null;

  constructor(
    private readonly geminiHome: string,
    private readonly sessionId: string,
  ) {}

  private find(): string | null {
    for (const f of chatFiles(this.geminiHome)) {
      const text = readSafe(f) ?? '';
      // A chat of lines begins with its header line; a chat written whole is one object.
      const head = parseJson(f.endsWith('.jsonl') ? text.slice(0, text.indexOf('\n') >>> 0) : text);
      if (isObject(head) && head.sessionId === this.sessionId) return f;
    }
    return null;
  }

  /** One message of the chat: a turn when it is the model's with its tokens, once per id. */
  private take(m: unknown, turns: UsageTurn[], notices: string[]): void {
    if (!isObject(m) || m.type !== 'gemini' || m.tokens === undefined) return;
    const t = m.tokens;
    const input = isObject(t) ? countOf(t.input) : null;
    const output = isObject(t) ? countOf(t.output) : null;
    if (typeof m.id !== 'string' || !isObject(t) || input === null || output === null) {
      notices.push(`Gemini CLI's chat ${this.path} has a message whose tokens this version of Forkbench does not know; such messages are not counted`);
      return;
    }
    const id = `${this.sessionId}:${m.id}`.slice(0, 400);
    if (this.given.has(id)) return;
    this.given.add(id);
    const cached = Math.min(input, countOf(t.cached) ?? 0);
    turns.push({
      id,
      cliAt: timeOf(m.timestamp),
      model: typeof m.model === 'string' ? m.model.slice(0, 200) : null,
      tokens: tokens({ input: input - cached, cacheRead: cached, output, reasoning: countOf(t.thoughts) ?? 0 }),
      usd: null,
    });
  }

  async read(now: number): Promise<UsageRead> {
    const notBefore = this.lastRead;
    this.lastRead = now;
    const turns: UsageTurn[] = [];
    const notices: string[] = [];
    this.path ??= this.find();
    if (!this.path) return { turns, notBefore, notices };
    if (this.path.endsWith('.jsonl')) {
      this.tail ??= new JsonlTail(this.path);
      const positions = new Map<string, UsagePosition>();
      for (const line of this.tail.read()?.lines ?? []) {
        const rec = parseJson(line.text);
        if (!isObject(rec)) continue;
        const set = isObject(rec.$set) && Array.isArray(rec.$set.messages) ? rec.$set.messages : [rec];
        const from = turns.length;
        for (const m of set) this.take(m, turns, notices);
        const stream = this.tail.stream;
        if (stream !== null) for (const t of turns.slice(from)) positions.set(t.id, { stream, at: line.offset });
      }
      // A chat of lines is appended to, each message taken at its first line with tokens: every line before
      // where the tail stopped is read, and its turns handed out. A chat written whole has no such places.
      const stream = this.tail.stream;
      return { turns, notBefore, notices, positions, ...(stream !== null ? { marks: [{ stream, at: this.tail.position }] } : {}) };
    }
    const st = fs.statSync(this.path, { throwIfNoEntry: false });
    const stamp = st ? `${st.size}:${st.mtimeMs}` : '';
    if (!st || stamp === this.seen) return { turns, notBefore, notices };
    const chat = parseJson(readSafe(this.path) ?? '');
    // Caught mid-write: the same file, whole, at the next read.
    if (chat === undefined) return { turns, notBefore, notices };
    this.seen = stamp;
    if (!isObject(chat) || !Array.isArray(chat.messages)) {
      notices.push(`Gemini CLI's chat ${this.path} is in a format this version of Forkbench does not know (no messages list); its usage is not counted`);
      return { turns, notBefore, notices };
    }
    for (const m of chat.messages) this.take(m, turns, notices);
    return { turns, notBefore, notices };
  }
}

function readSafe(path: string): string | null {
  try {
    return fs.readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
