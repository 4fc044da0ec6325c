import { BoardLimits } from '../../src-shared/board/limits.js';

/**
 * A token bucket that can take several tokens at once and say how long until it could: `cost` text
 * characters, or one write. Time is the board's monotonic clock, passed in, so tests move it by hand.
 */
class Bucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
    now: number,
  ) {
    this.tokens = burst;
    this.at = now;
  }

  private refill(now: number): void {
    this.tokens = Math.min(this.burst, this.tokens + (Math.max(0, now - this.at) * this.perSecond) / 1000);
    this.at = now;
  }

  /** Milliseconds until `cost` could be taken (0: now). A cost above the burst waits for a full bucket. */
  waitFor(cost: number, now: number): number {
    this.refill(now);
    const need = Math.min(cost, this.burst) - this.tokens;
    return need <= 0 ? 0 : Math.ceil((need * 1000) / this.perSecond);
  }

  take(cost: number): void {
    this.tokens -= Math.min(cost, this.burst);
  }

  /** Its level as it is now, for a store's transaction to give back (WriteQuota.hold). */
  saved(): { tokens: number; at: number } {
    return { tokens: this.tokens, at: this.at };
  }

  restore(s: { tokens: number; at: number }): void {
    this.tokens = s.tokens;
    this.at = s.at;
  }
}

type AgentBuckets = { writes: Bucket; text: Bucket; told: boolean };
type Level = ReturnType<Bucket['saved']>;
/** An agent's buckets as they were before a transaction first touched them: null, it had none yet. */
type Saved = { agent: { writes: Level; text: Level; told: boolean } | null; refusals: Level | null };

/** Why a write was refused: which limit, and when the same write would be taken. */
export interface QuotaRefusal {
  readonly retryAfterMs: number;
  readonly message: string;
}

/**
 * Each agent's write quota (BoardLimits): a bucket of writes and a bucket of text characters. A write takes
 * from both or from neither, so a refused write costs the agent nothing it could use later. The person is
 * not held to it (the window is one person's hands, and the board's text cap still applies to them).
 */
export class WriteQuota {
  private readonly agents = new Map<string, AgentBuckets>();
  private readonly refusalsLogged = new Map<string, Bucket>();
  /** While a store's transaction may still roll back (hold): each agent's buckets as they were before it first
   *  touched them, so `giveBack` puts back exactly what the undone writes took. One entry per agent touched. */
  private undo: Map<string, Saved> | null = null;

  constructor(private readonly now: () => number) {}

  /**
   * A store's transaction starts deciding (pg/pgBoard.ts): what agents' writes take from here is given back if
   * it rolls back, as nothing of it happened. A write decided again after the rollback then costs once, not
   * twice (a retry found stored by another host, KeySeenError, rewinds a whole batch and decides it again).
   */
  hold(): void {
    this.undo = new Map();
  }

  /** The transaction committed: what it took stays taken. */
  keep(): void {
    this.undo = null;
  }

  /** The transaction rolled back: every bucket it touched goes back to where it was before (its time too, so
   *  the refill since is counted once, from then). Nothing held: nothing to do. */
  giveBack(): void {
    const undo = this.undo;
    this.undo = null;
    if (!undo) return;
    for (const [agentId, s] of undo) {
      const a = this.agents.get(agentId);
      if (!s.agent) this.agents.delete(agentId);
      else if (a) {
        a.writes.restore(s.agent.writes);
        a.text.restore(s.agent.text);
        a.told = s.agent.told;
      }
      if (!s.refusals) this.refusalsLogged.delete(agentId);
      else this.refusalsLogged.get(agentId)?.restore(s.refusals);
    }
  }

  /** Before `agentId`'s buckets change under a hold: keep how they were, the first time only. */
  private touch(agentId: string): void {
    if (!this.undo || this.undo.has(agentId)) return;
    const a = this.agents.get(agentId);
    const r = this.refusalsLogged.get(agentId);
    this.undo.set(agentId, { agent: a ? { writes: a.writes.saved(), text: a.text.saved(), told: a.told } : null, refusals: r ? r.saved() : null });
  }

  /** Whether a refusal of `agentId`'s goes into the journal now (BoardLimits.agentRefusalsLogged*). */
  logRefusal(agentId: string): boolean {
    this.touch(agentId);
    const now = this.now();
    let b = this.refusalsLogged.get(agentId);
    if (!b) this.refusalsLogged.set(agentId, (b = new Bucket(BoardLimits.agentRefusalsLoggedBurst, BoardLimits.agentRefusalsLoggedPerSecond, now)));
    if (b.waitFor(1, now) > 0) return false;
    b.take(1);
    return true;
  }

  /**
   * Take one write of `chars` characters for `agentId`, or say why not. `firstRefusal` is true for the first
   * refusal since the agent's last accepted write: the board journals that one so a person sees the agent hit
   * its quota, and not the thousands a loop makes after it.
   */
  take(agentId: string, chars: number): { ok: true } | ({ ok: false; firstRefusal: boolean } & QuotaRefusal) {
    this.touch(agentId);
    const now = this.now();
    let a = this.agents.get(agentId);
    if (!a) {
      a = {
        writes: new Bucket(BoardLimits.agentWriteBurst, BoardLimits.agentWritesPerSecond, now),
        text: new Bucket(BoardLimits.agentTextBurstChars, BoardLimits.agentTextCharsPerSecond, now),
        told: false,
      };
      this.agents.set(agentId, a);
    }
    const writesWait = a.writes.waitFor(1, now);
    const textWait = a.text.waitFor(chars, now);
    if (writesWait === 0 && textWait === 0) {
      a.writes.take(1);
      a.text.take(chars);
      a.told = false;
      return { ok: true };
    }
    const firstRefusal = !a.told;
    a.told = true;
    const retryAfterMs = Math.max(writesWait, textWait);
    const which =
      writesWait >= textWait
        ? `its write quota (${BoardLimits.agentWriteBurst} writes in a row, then ${BoardLimits.agentWritesPerSecond} a second)`
        : `its text quota (${BoardLimits.agentTextBurstChars / 1024} KiB of text in a row, then ${BoardLimits.agentTextCharsPerSecond / 1024} KiB a second)`;
    return {
      ok: false,
      firstRefusal,
      retryAfterMs,
      message: `${agentId} has used ${which}; nothing was written. Try again in ${formatWait(retryAfterMs)}.`,
    };
  }
}

function formatWait(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.ceil(ms / 1000)} s`;
}
