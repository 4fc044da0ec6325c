import { FlowLimits } from '../../src-shared/terminal/flowLimits.js';

/**
 * Counts characters xterm has parsed (fed from `term.write`'s callback, not from receipt, so "acked" means
 * "parsed") and reports them to the host in batches of FlowLimits.charCountAckSize, the step the host's
 * watermarks are set against (see src-shared/terminal/flowLimits.ts).
 */
export class AckBatcher {
  private pending = 0;

  constructor(
    private readonly send: (chars: number) => void,
    private readonly step: number = FlowLimits.charCountAckSize,
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
