import { execFile } from 'node:child_process';
import type { UsageTurn } from '../../src-shared/usage/usage.js';
import { countOf, isObject, parseJson, timeOf, tokens, type UsageRead, type UsageReader, type UsageRecordsSpec } from './usageReader.js';

export const OPENCODE_RECORDS: UsageRecordsSpec = {
  where: "the agent's own OpenCode session database (OPENCODE_DB, in its state folder), read with `opencode export <session id>`",
  fields: "each assistant message's info once completed: id, time.created, modelID, tokens (input, output, reasoning, cache.read, cache.write) and cost, OpenCode's own figure",
};

export const OpenCodeRead = {
  /** How often OpenCode's storage is exported: each export starts OpenCode (~1 s of CPU here), so every
   *  fifth poll of the others; a turn's cost still shows within ~15 s of its end. */
  everyMs: 15_000,
  /** An export of a day's session takes well under a second; 30 s is a machine under heavy load. */
  timeoutMs: 30_000,
} as const;

/** Runs `opencode export <id>` for the agent and answers its JSON text (a seam: tests may give a recorded one). */
export type OpenCodeExport = (sessionId: string) => Promise<string>;

export function opencodeExporter(env: Record<string, string | undefined>, cwd: string): OpenCodeExport {
  return (sessionId) =>
    new Promise((resolve, reject) => {
      execFile('opencode', ['export', sessionId], { cwd, env: env as NodeJS.ProcessEnv, timeout: OpenCodeRead.timeoutMs, maxBuffer: 256 * 1024 * 1024 }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
    });
}

/**
 * OpenCode's own storage of one session (a database, read through OpenCode itself: no second reader of its
 * format). A message is a turn once OpenCode marks it completed; its id is OpenCode's, so an export read again
 * counts nothing twice. OpenCode prices each message itself: its cost is the turn's money.
 */
export class OpenCodeUsageReader implements UsageReader {
  readonly source = 'opencode' as const;
  private lastRead: number | null = null;
  private lastExport = -Infinity;
  private readonly given = new Set<string>();

  constructor(
    private readonly sessionId: () => string | null | Promise<string | null>,
    private readonly exportSession: OpenCodeExport,
    private readonly everyMs: number = OpenCodeRead.everyMs,
  ) {}

  async read(now: number): Promise<UsageRead> {
    const turns: UsageTurn[] = [];
    const notices: string[] = [];
    if (now - this.lastExport < this.everyMs) return { turns, notBefore: this.lastRead, notices };
    const notBefore = this.lastRead;
    const id = await this.sessionId();
    if (!id) return { turns, notBefore, notices };
    this.lastExport = now;
    this.lastRead = now;
    const text = await this.exportSession(id);
    const data = parseJson(text.slice(Math.max(0, text.indexOf('{'))));
    if (!isObject(data) || !Array.isArray(data.messages)) {
      notices.push("OpenCode's export of its session is in a format this version of Forkbench does not know (no messages list); its usage is not counted");
      return { turns, notBefore, notices };
    }
    for (const m of data.messages) {
      const info = isObject(m) ? m.info : undefined;
      if (!isObject(info) || info.role !== 'assistant') continue;
      const time = isObject(info.time) ? info.time : {};
      // Still being written: read once OpenCode has finished it.
      if (time.completed === undefined || time.completed === null) continue;
      const t = info.tokens;
      const input = isObject(t) ? countOf(t.input) : null;
      const output = isObject(t) ? countOf(t.output) : null;
      if (typeof info.id !== 'string' || !isObject(t) || input === null || output === null) {
        notices.push("OpenCode's session has a message whose tokens this version of Forkbench does not know; such messages are not counted");
        continue;
      }
      const turnId = `${id}:${info.id}`.slice(0, 400);
      if (this.given.has(turnId)) continue;
      this.given.add(turnId);
      const cache = isObject(t.cache) ? t.cache : {};
      const cost = typeof info.cost === 'number' && Number.isFinite(info.cost) && info.cost > 0 ? info.cost : null;
      turns.push({
        id: turnId,
        cliAt: timeOf(time.created),
        model: typeof info.modelID === 'string' ? info.modelID.slice(0, 200) : null,
        tokens: tokens({ input, output, reasoning: countOf(t.reasoning) ?? 0, cacheRead: countOf(cache.read) ?? 0, cacheWrite: countOf(cache.write) ?? 0 }),
        usd: cost,
      });
    }
    return { turns, notBefore, notices };
  }
}
