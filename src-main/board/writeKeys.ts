import { createHash } from 'node:crypto';
import type { Rejection, Result } from '../../src-shared/board/result.js';

/**
 * The board's record of agents' idempotency keys: for each (agent, key), the hash of the request that first
 * used it and that request's outcome (a success or a refusal), so a retry of a write whose answer was lost is
 * answered with the first outcome instead of being done twice. Private to the board: it is journaled and
 * snapshotted beside the board, never part of the Board a window is sent.
 *
 * Why a record per key and not per request body: two `add "x"` calls an agent meant as two tasks are two
 * keys; the same call retried is one. The hash catches a key reused for a different request.
 */

export const WriteKeyLimits = {
  /**
   * How long a key's outcome is kept, on the board's clock: a retry comes within seconds (the CLI retries
   * within its own 30 s timeout), but an agent's CLI may be stopped with its machine (a laptop lid) and its
   * retry come back after a weekend's sleep is over; 72 h covers a long weekend, and is what issue 31 asks.
   */
  retentionMs: 72 * 60 * 60 * 1000,
  /**
   * Keys kept per agent; the oldest goes first beyond it. A retry reuses one of the agent's latest keys, and
   * an agent's write quota (writeQuota.ts) lets it make a few per second, so 1,000 covers minutes of its
   * fastest writing while bounding what a flood of fresh keys can cost (~1,000 × one outcome).
   */
  perAgent: 1000,
  /** Keys kept on the board in all, whatever the number of agents (each launch is a new one). An outcome is
   *  a few hundred bytes (a claim's view, a refusal) and at most ~1.5 KB with its strings cut (below), so the
   *  record stays under ~30 MB in memory and in the snapshot even when every key is a flood's. */
  total: 20_000,
  /** An outcome's strings longer than this are cut when stored (a task's body in `add`'s answer): the record's
   *  size stays bounded, and what a retry needs (ids, tokens, a title, the refusal's reason) is shorter. */
  outcomeStringChars: 500,
} as const;

/** A key's record, as the journal and the snapshot hold it. `at`: board-clock ms when it was stored. */
export interface WriteKeyRecord {
  readonly agent: string;
  readonly key: string;
  readonly hash: string;
  readonly at: number;
  readonly outcome: Result<unknown, Rejection>;
}

/** What a lookup finds: nothing (a new key), the first outcome of the same request, or a key reused. */
export type KeyLookup = { found: false } | { found: true; outcome: Result<unknown, Rejection> } | { found: true; reused: Rejection };

/**
 * The hash a key's record keeps of its request: the method and every param but the key itself, as validated
 * (the schema's key order, so one request hashes one way). An agent's writes and a window's use the same.
 */
export function requestHash(method: string, request: unknown): string {
  return createHash('sha256').update(JSON.stringify([method, request])).digest('base64url');
}

const idOf = (agent: string, key: string) => `${agent}\u0000${key}`;

/** A stored outcome with its long strings cut, so each record has a bounded size. */
export function boundedOutcome(v: unknown): unknown {
  if (typeof v === 'string') return v.length > WriteKeyLimits.outcomeStringChars ? `${v.slice(0, WriteKeyLimits.outcomeStringChars)}…` : v;
  if (Array.isArray(v)) return v.map(boundedOutcome);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, boundedOutcome(x)]));
  return v;
}

/** Refusals that are no decision about the request, and so are not a key's outcome: `rate-limited` tells the
 *  agent to send the same write again later. (`read-only` and `board-unavailable` are answered before a key
 *  is looked at or kept: nothing was decided.) */
const TRANSIENT: ReadonlySet<string> = new Set(['rate-limited']);

/**
 * What a keyed write's key keeps, on either store: its outcome with long strings cut, or nothing for a
 * refusal that was no decision (the write did nothing and says when to try again, so a retry under the same
 * key is decided afresh).
 */
export function outcomeToKeep(r: Result<unknown, Rejection>): Result<unknown, Rejection> | undefined {
  if (!r.ok) return TRANSIENT.has(r.error.code) ? undefined : r;
  return { ok: true, value: boundedOutcome(r.value) };
}

/** A key that came back with another request than the one it was first used for. */
export function keyReused(key: string): Rejection {
  return { code: 'key-reused', message: `the key ${key} was used for a different request; a retry must send the same request with its key, and a new request a new key` };
}

/** What a key's stored record answers a request with that hash: its first outcome, or key-reused. */
export function firstOutcome(stored: { hash: string; outcome: Result<unknown, Rejection> }, key: string, hash: string): Result<unknown, Rejection> {
  return stored.hash === hash ? stored.outcome : { ok: false, error: keyReused(key) };
}

export class WriteKeys {
  /** Every record, oldest first (insertion order is board-clock order): pruning takes from the front. */
  private readonly all = new Map<string, WriteKeyRecord>();
  /** Each agent's keys, oldest first, for its own cap. */
  private readonly byAgent = new Map<string, Set<string>>();

  constructor(private readonly now: () => number) {}

  get size(): number {
    return this.all.size;
  }

  lookup(agent: string, key: string, hash: string): KeyLookup {
    const r = this.all.get(idOf(agent, key));
    if (!r || this.now() - r.at >= WriteKeyLimits.retentionMs) return { found: false };
    if (r.hash !== hash) return { found: true, reused: keyReused(key) };
    return { found: true, outcome: r.outcome };
  }

  /** Keep a record (a new one, or one replayed from the journal), then drop what is past its time or caps. */
  put(r: WriteKeyRecord): void {
    const id = idOf(r.agent, r.key);
    this.remove(id);
    this.all.set(id, r);
    let mine = this.byAgent.get(r.agent);
    if (!mine) this.byAgent.set(r.agent, (mine = new Set()));
    mine.add(id);
    while (mine.size > WriteKeyLimits.perAgent) this.remove(mine.values().next().value as string);
    while (this.all.size > WriteKeyLimits.total) this.remove(this.all.keys().next().value as string);
    this.prune();
  }

  /** Drop the records older than the retention (by the board's clock). */
  prune(): void {
    const cutoff = this.now() - WriteKeyLimits.retentionMs;
    for (const [id, r] of this.all) {
      if (r.at > cutoff) break;
      this.remove(id);
    }
  }

  /** The records still kept, oldest first: what a snapshot saves. */
  records(): WriteKeyRecord[] {
    this.prune();
    return [...this.all.values()];
  }

  private remove(id: string): void {
    const r = this.all.get(id);
    if (!r) return;
    this.all.delete(id);
    const mine = this.byAgent.get(r.agent);
    mine?.delete(id);
    if (mine?.size === 0) this.byAgent.delete(r.agent);
  }
}
