/** Flow-control numbers the renderer side uses (see src-main/pty/flowControl.ts for the host's half). */
export const AckConstants = {
  /** Ack in steps of this many parsed chars: one message per ~50 KB rather than per write (the host's
   *  FlowControlConstants.charCountAckSize, where the number is argued). The host resumes a paused pty below
   *  500,000 unacked chars, so a terminal that has parsed everything is always below it even while holding
   *  back a partial ack (it must stay ≤ that mark). */
  charCountAckSize: 50_000,
} as const;

/**
 * Counts characters xterm has parsed (fed from `term.write`'s callback, not from receipt, so "acked" means
 * "parsed") and reports them to the host in batches.
 */
export class AckBatcher {
  private pending = 0;

  constructor(
    private readonly send: (chars: number) => void,
    private readonly step: number = AckConstants.charCountAckSize,
  ) {}

  /** `chars` more have been parsed. Sends everything pending once it reaches a step. */
  parsed(chars: number): void {
    if (!(chars > 0)) return;
    this.pending += chars;
    if (this.pending >= this.step) {
      const n = this.pending;
      this.pending = 0;
      this.send(n);
    }
  }

  /** Parsed but not yet reported. */
  get unsent(): number {
    return this.pending;
  }

  /** Send what is pending now (e.g. before a detach). */
  flush(): void {
    if (this.pending > 0) {
      const n = this.pending;
      this.pending = 0;
      this.send(n);
    }
  }

  /** Forget what is pending: after a reconnect the host counts this window as a new consumer from zero. */
  reset(): void {
    this.pending = 0;
  }
}
