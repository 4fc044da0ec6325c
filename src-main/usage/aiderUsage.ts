import { basename } from 'node:path';
import { aiderLogPath } from '../agents/cliProfiles.js';
import type { UsageTurn } from '../../src-shared/usage/usage.js';
import { JsonlTail } from './jsonlTail.js';
import { countOf, isObject, parseJson, tokens, type UsageRead, type UsageReader, type UsageRecordsSpec } from './usageReader.js';

export { aiderLogPath };

export const AIDER_RECORDS: UsageRecordsSpec = {
  where: `${aiderLogPath("<the agent's state folder>")}: the analytics log the profile names with --analytics-log (Aider writes it whether or not its analytics are sent anywhere)`,
  fields:
    'each line whose event is message_send: properties.prompt_tokens (what Aider counts as sent: the prompt and, for Anthropic, the cache writes; cache reads are not in it), completion_tokens, cost (Aider\'s own figure, used when above 0), main_model (unless Aider redacted it), and time (Unix seconds)',
};

/** Aider's name for a model it would not send to analytics: `provider/REDACTED`, or None (written as the text). */
const redacted = (m: string): boolean => m === 'None' || m.endsWith('/REDACTED');

/**
 * Aider's analytics log, read as it grows: one JSON object a line, `{"event", "properties", "user_id", "time"}`
 * (aider/analytics.py). Each model response ends with a `message_send` event carrying that message's tokens and
 * cost (aider/coders/base_coder.py: show_usage_report). A line of another event is not a turn. A line that is
 * not JSON (Aider killed mid-write, then appended to again) or a message_send this reader does not know is said
 * once, and not counted. A turn's id is its offset and time in the file: stable however often the file is read.
 */
export class AiderUsageReader implements UsageReader {
  readonly source = 'aider' as const;
  private readonly tail: JsonlTail;
  private lastRead: number | null = null;
  private told = false;

  constructor(path: string) {
    this.tail = new JsonlTail(path);
  }

  async read(now: number): Promise<UsageRead> {
    const notBefore = this.lastRead;
    this.lastRead = now;
    const turns: UsageTurn[] = [];
    const notices: string[] = [];
    const r = this.tail.read();
    if (!r) return { turns, notBefore, notices };
    const unknown = (what: string, offset: number) => {
      if (this.told) return;
      this.told = true;
      notices.push(`Aider's analytics log ${this.tail.path} has ${what} (at byte ${offset}); such lines are not counted`);
    };
    for (const line of r.lines) {
      const rec = parseJson(line.text);
      if (!isObject(rec)) {
        unknown('a line that is not a JSON object (a write cut short?)', line.offset);
        continue;
      }
      if (rec.event !== 'message_send') continue;
      const p = rec.properties;
      const input = isObject(p) ? countOf(p.prompt_tokens) : null;
      const output = isObject(p) ? countOf(p.completion_tokens) : null;
      const time = typeof rec.time === 'number' && Number.isFinite(rec.time) ? rec.time : null;
      if (!isObject(p) || input === null || output === null) {
        unknown('a message_send this version of Forkbench does not know', line.offset);
        continue;
      }
      const model = typeof p.main_model === 'string' && p.main_model && !redacted(p.main_model) ? p.main_model.slice(0, 200) : null;
      // Aider's own figure is 0 for a model it has no price for: that is not known to be free.
      const cost = typeof p.cost === 'number' && Number.isFinite(p.cost) && p.cost > 0 && p.cost <= 1e6 ? p.cost : null;
      turns.push({
        id: `${basename(this.tail.path)}:${line.offset}:${time ?? ''}`,
        cliAt: time === null ? null : time * 1000,
        model,
        tokens: tokens({ input, output }),
        usd: cost,
      });
    }
    return { turns, notBefore, notices };
  }
}
