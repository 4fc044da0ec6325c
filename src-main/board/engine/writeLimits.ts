import type { AgentWriteOp } from '../../../src-shared/board/events.js';
import { HOST_ACTOR, USER, VERIFY_ACTOR } from '../../../src-shared/board/model.js';
import { reject, type Rejection, type RejectionCode } from '../../../src-shared/board/result.js';
import { BoardLimits } from '../../../src-shared/board/limits.js';
import { WriteQuota } from '../writeQuota.js';
import type { EngineCore } from './engineCore.js';

/** A refused decision, as every limit answers it. */
export type Refused = { ok: false; error: Rejection };

/** The host's own note writers (merge results, verify outcomes): held to the person's cap, not an agent's. */
export const HOST_WRITERS = new Set([HOST_ACTOR, VERIFY_ACTOR]);

/**
 * What a write may cost: an agent's write quota (writeQuota.ts), the board's text cap, and the journal line a
 * refused agent write leaves (while its refusals' quota lasts). Every feature module's refusal of an agent's
 * write goes through `refuse`, so a loop of refused writes costs the agent, not the journal.
 */
export class WriteLimits {
  private readonly quota: WriteQuota;

  constructor(private readonly core: EngineCore) {
    this.quota = new WriteQuota(() => core.clock.now());
  }

  /** A store's transaction starts deciding (pgBoard): the quotas its decisions take are given back by
   *  `giveBack` if it is rewound, or kept by `keep` once it committed (writeQuota.ts hold). */
  hold(): void {
    this.quota.hold();
  }

  keep(): void {
    this.quota.keep();
  }

  /** What undone writes took of their agents' quotas goes back with them. */
  giveBack(): void {
    this.quota.giveBack();
  }

  /**
   * An agent's write of `chars` characters that grows the board's text by `growth`: within its quota
   * (writeQuota.ts) and the agents' share of the text cap, or refused with which limit and when to retry.
   * The person (USER) is held only to the cap. Checked before the fence, so a loop of writes to a task the
   * agent does not hold costs its quota too (each refusal is a journal line). Of a run of quota refusals only
   * the first is journaled: a loop that keeps calling adds nothing to the journal.
   */
  admit(by: string, taskId: string | null, op: AgentWriteOp, chars: number, growth: number, token?: number): Refused | null {
    if (by === USER) return this.overCap(by, growth);
    const q = this.quota.take(by, chars);
    if (!q.ok) {
      if (q.firstRefusal) return this.refuse(by, taskId, token ?? null, op, 'rate-limited', q.message);
      return reject('rate-limited', q.message);
    }
    const full = this.overCap(by, growth);
    if (full) this.refuse(by, taskId, token ?? null, op, full.error.code, full.error.message);
    return full;
  }

  /** The text cap: the person and the host may fill the board to BoardLimits.maxTextChars, agents to
   *  BoardLimits.agentTextChars, so the person always has room left to write whatever the agents did. */
  overCap(by: string, growth: number): Refused | null {
    if (growth <= 0) return null;
    const agent = by !== USER && !HOST_WRITERS.has(by);
    const cap = agent ? BoardLimits.agentTextChars : BoardLimits.maxTextChars;
    const text = this.core.textChars;
    if (text + growth <= cap) return null;
    const mi = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} Mi`;
    return reject(
      'board-full',
      `the board holds ${mi(text)} characters of text and ${agent ? 'agents may fill it to' : 'its limit is'} ${mi(cap)}; this write would add ${growth}. Nothing was written. ` +
        (agent ? 'Ask the person to make room; waiting does not help.' : 'Shorten or empty the bodies of tasks that are done to make room.'),
    );
  }

  /** Whether one more refusal of `agentId`'s may go into the journal now (LeaseEngine.refusalJournaled). */
  refusalJournaled(agentId: string): boolean {
    return this.quota.logRefusal(agentId);
  }

  /** Record a refused agent write (while its refusals' quota lasts) and answer it. */
  refuse(agentId: string, taskId: string | null, token: number | null, op: AgentWriteOp, code: RejectionCode, message: string): Refused {
    if (this.quota.logRefusal(agentId)) this.core.emit({ kind: 'write-rejected', taskId, agentId, token, op, code, message });
    return reject(code, message);
  }
}
