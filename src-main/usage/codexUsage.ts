import * as fs from 'node:fs';
import { basename, join } from 'node:path';
import type { RateLimitReading, UsagePosition, UsageTurn } from '../../src-shared/usage/usage.js';
import { JsonlTail } from './jsonlTail.js';
import { countOf, isObject, parseJson, timeOf, tokens, type UsageRead, type UsageReader, type UsageRecordsSpec } from './usageReader.js';

export const CODEX_RECORDS: UsageRecordsSpec = {
  where: '$CODEX_HOME (else ~/.codex)/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl: every rollout file of the session this agent started (a resume may add one)',
  fields:
    "event_msg lines of type token_count: info.last_token_usage (input_tokens, cached_input_tokens, output_tokens, reasoning_output_tokens) per turn, skipped when info.total_token_usage did not move (a repeated report); turn_context's model; rate_limits' used_percent",
};

/** The rollout files of session `sessionId` under `sessionsDir`, oldest first. */
export function codexRolloutFiles(sessionsDir: string, sessionId: string): string[] {
  let files: string[];
  try {
    files = fs.readdirSync(sessionsDir, { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
  return files.filter((f) => f.endsWith(`${sessionId}.jsonl`) && basename(f).startsWith('rollout-')).sort().map((f) => join(sessionsDir, f));
}

/** The total a token_count reports, as one comparable text: a report whose total did not move repeats one. */
const totalKey = (t: Record<string, unknown>): string => JSON.stringify([t.input_tokens, t.cached_input_tokens, t.output_tokens, t.reasoning_output_tokens, t.total_tokens]);

/** Codex's rate limits (`primary`, `secondary` windows) as readings. */
function limitsOf(v: unknown, now: number): RateLimitReading[] | undefined {
  if (!isObject(v)) return undefined;
  const out: RateLimitReading[] = [];
  for (const [window, w] of Object.entries(v)) {
    if (!isObject(w) || typeof w.used_percent !== 'number' || !Number.isFinite(w.used_percent)) continue;
    const resetsIn = typeof w.resets_in_seconds === 'number' ? now + w.resets_in_seconds * 1000 : null;
    const resetsAt = typeof w.resets_at === 'number' ? w.resets_at * 1000 : resetsIn;
    out.push({ window: window.slice(0, 100), usedPct: Math.min(100, Math.max(0, w.used_percent)), resetsAt });
  }
  return out.length ? out.slice(0, 16) : undefined;
}

/** A rollout item the model produced (its answer, a tool call, its reasoning), not one the CLI added. */
function isModelOutput(p: Record<string, unknown>): boolean {
  if (p.type === 'message') return p.role === 'assistant';
  return p.type === 'function_call' || p.type === 'reasoning' || p.type === 'custom_tool_call' || p.type === 'local_shell_call';
}

/**
 * Codex's rollout files of one session, read as they grow. Each turn ends with a `token_count` event whose
 * `last_token_usage` is that turn's; `total_token_usage` runs on across resumes, and an event that repeats the
 * total (Codex sends one again when only its rate limits changed) is not a turn. A turn's id is its file and
 * offset, stable however often the file is read again.
 */
export class CodexUsageReader implements UsageReader {
  readonly source = 'codex' as const;
  private readonly tails = new Map<string, { tail: JsonlTail; lastTotal: string | null; model: string | null; outputAt: number | null }>();
  private lastRead: number | null = null;

  constructor(
    private readonly sessionsDir: string,
    private readonly sessionId: () => string | null | Promise<string | null>,
  ) {}

  async read(now: number): Promise<UsageRead> {
    const notBefore = this.lastRead;
    this.lastRead = now;
    const id = await this.sessionId();
    const turns: UsageTurn[] = [];
    const notices: string[] = [];
    let limits: RateLimitReading[] | undefined;
    const positions = new Map<string, UsagePosition>();
    const marks: UsagePosition[] = [];
    if (!id) return { turns, notBefore, notices };
    for (const path of codexRolloutFiles(this.sessionsDir, id)) {
      let f = this.tails.get(path);
      if (!f) this.tails.set(path, (f = { tail: new JsonlTail(path), lastTotal: null, model: null, outputAt: null }));
      const r = f.tail.read();
      if (!r) continue;
      if (r.restarted) {
        f.lastTotal = null;
        f.outputAt = null;
      }
      for (const line of r.lines) {
        const rec = parseJson(line.text);
        if (!isObject(rec) || !isObject(rec.payload)) continue;
        const p = rec.payload;
        if (rec.type === 'turn_context' && typeof p.model === 'string') f.model = p.model.slice(0, 200);
        if (rec.type === 'response_item' && isModelOutput(p)) f.outputAt ??= timeOf(rec.timestamp);
        if (rec.type !== 'event_msg' || p.type !== 'token_count') continue;
        // The turn's time is when the model's output came, not when its count was written: Codex writes that
        // once the turn's tool calls have run, which may be after the claim the call made.
        const outputAt = f.outputAt;
        f.outputAt = null;
        limits = limitsOf(p.rate_limits, now) ?? limits;
        if (p.info === null || p.info === undefined) continue;
        const info = p.info;
        const last = isObject(info) ? info.last_token_usage : undefined;
        const total = isObject(info) ? info.total_token_usage : undefined;
        const input = isObject(last) ? countOf(last.input_tokens) : null;
        const output = isObject(last) ? countOf(last.output_tokens) : null;
        if (!isObject(last) || !isObject(total) || input === null || output === null) {
          notices.push(`Codex's rollout ${path} has a token_count this version of Forkbench does not know (at byte ${line.offset}); such turns are not counted`);
          continue;
        }
        const key = totalKey(total);
        if (key === f.lastTotal) continue;
        f.lastTotal = key;
        const cached = Math.min(input, countOf(last.cached_input_tokens) ?? 0);
        const turnId = `${basename(path)}:${line.offset}`;
        const stream = f.tail.stream;
        if (stream !== null) positions.set(turnId, { stream, at: line.offset });
        turns.push({
          id: turnId,
          cliAt: outputAt ?? timeOf(rec.timestamp),
          model: f.model,
          // OpenAI counts cached input inside input_tokens; the board keeps them apart.
          tokens: tokens({ input: input - cached, cacheRead: cached, output, reasoning: countOf(last.reasoning_output_tokens) ?? 0 }),
          usd: null,
        });
      }
      // Every line before where the tail stopped was read, and each turn in them handed out.
      const stream = f.tail.stream;
      if (stream !== null) marks.push({ stream, at: f.tail.position });
    }
    return { turns, ...(limits ? { limits } : {}), notBefore, notices, positions, marks };
  }
}
