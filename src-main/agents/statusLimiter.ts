/**
 * A token bucket per agent for `status` calls. A CLI's hooks fire a few times per tool call; a hook stuck in
 * a loop fires thousands of times a second. Over the limit a call is refused at once, before anything is
 * looked at or journaled, so a looping agent costs the board nothing and the other agents' calls go on.
 */
export const StatusLimits = {
  /** A burst: a turn that runs a dozen quick tools in a row fires PreToolUse/PostToolUse for each. */
  burst: 40,
  /** Sustained rate: 20 calls a second is ten tool calls a second, more than any model does. */
  perSecond: 20,
} as const;

export class StatusLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    /** Monotonic ms. */
    private readonly now: () => number,
    private readonly burst: number = StatusLimits.burst,
    private readonly perSecond: number = StatusLimits.perSecond,
  ) {}

  /** Whether the agent may make one more call now (and counts it if so). */
  take(agentId: string): boolean {
    const now = this.now();
    const b = this.buckets.get(agentId) ?? { tokens: this.burst, at: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) * this.perSecond) / 1000);
    b.at = now;
    this.buckets.set(agentId, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  forget(agentId: string): void {
    this.buckets.delete(agentId);
  }
}
