import type { RateLimitReading, TokenCounts, UsagePosition, UsageSource, UsageTurn } from '../../src-shared/usage/usage.js';

/**
 * A reader of one agent's CLI's own records of what it spent (issue 47): offline, from the files the CLI
 * writes anyway, never the network. Each read returns the turns found since the last (a restart reads them
 * all again: the board counts a turn id once, and a turn placed before its stream's recorded mark not at all),
 * and says what it could not read, to be said once.
 */
export interface UsageRead {
  readonly turns: UsageTurn[];
  readonly limits?: RateLimitReading[];
  /** Wall ms of the read before this one, after which every turn found now was written; null on a first read
   *  (after a launch or a restart), when the records may be of any age. */
  readonly notBefore: number | null;
  /** What the reader could not read (a newer format, a record it does not know): said once per agent. */
  readonly notices: string[];
  /** Where each turn lies in its records, by turn id; absent for a turn the reader cannot place (a chat file
   *  rewritten whole, a store read through its CLI), which only its id then guards. */
  readonly positions?: ReadonlyMap<string, UsagePosition>;
  /** Per stream read, the place before which every turn has been handed out, in this read or an earlier one:
   *  a turn still being written (a Claude message not yet complete) holds its stream's mark before it. */
  readonly marks?: UsagePosition[];
}

export interface UsageReader {
  readonly source: UsageSource;
  /** `now`: host wall ms. `last`: the agent's process is gone, so nothing more will be written: what it left
   *  half written (a message cut off mid-stream) is taken as it stands rather than waited for. */
  read(now: number, last?: boolean): Promise<UsageRead>;
}

/** Where each profile's records are and which fields it reads: what a person is told, and the docs say. */
export interface UsageRecordsSpec {
  readonly where: string;
  readonly fields: string;
}

/** A non-negative whole count from a record, or null when it is not one (a field the reader does not know). */
export function countOf(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 1e12 ? v : null;
}

/** A record's time (ISO text or ms) in ms, or null. */
export function timeOf(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v !== 'string') return null;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : null;
}

export const tokens = (t: Partial<TokenCounts>): TokenCounts => ({ input: t.input ?? 0, output: t.output ?? 0, cacheRead: t.cacheRead ?? 0, cacheWrite: t.cacheWrite ?? 0, reasoning: t.reasoning ?? 0 });

/** JSON.parse that answers undefined instead of throwing (a line being written, or not JSON at all). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
