import { FlowLimits } from '../../src-shared/terminal/flowLimits.js';

/**
 * Flow control for one pane: VS Code's FlowControlConstants, extended to several consumers. The numbers are
 * src-shared/terminal/flowLimits.ts, shared with the window that acks by them.
 *
 * Who counts as a consumer, and why:
 * - The headless xterm mirror (for serialize/restore) is ALWAYS a consumer. It parses in-process at roughly
 *   a third of pty speed (TOOLCHAIN: ~35 MB/s parse vs ~100 MB/s raw), and xterm queues unparsed writes
 *   without limit until it throws at 50 MB. If the mirror were exempt whenever a window is attached, a fast
 *   window would let the pty outrun the mirror and the host's memory would grow with the flood. It acks from
 *   its own write callback, i.e. after parsing.
 * - Every attached window is a consumer too, acking after its xterm has parsed (ack every ~50,000 chars).
 * - The pty is paused while ANY consumer is more than `highWatermarkChars` behind and resumed once ALL are
 *   below `lowWatermarkChars` (half the window, so nobody runs dry while the pty catches up). So a pane
 *   runs at the speed of its slowest consumer and host memory per pane is bounded by about
 *   (consumers x high watermark) plus one read chunk, whatever the child does.
 *
 * With zero windows the mirror alone paces the pty: a `yes` flood with no window runs at parse speed, not
 * unboundedly. A window that never acks (frozen, or disconnected without detaching) stalls its pane: the
 * paused pty lets the kernel buffer fill and the child blocks in write(2). That is the point: it costs no
 * memory. The transport must therefore `removeConsumer` when a window goes away.
 */
export interface FlowControlLimits {
  highWatermarkChars: number;
  lowWatermarkChars: number;
}

export interface FlowControlHooks {
  pause(): void;
  resume(): void;
}

export class FlowControl {
  private readonly unacked = new Map<string, number>();
  private paused = false;
  private released = false;

  constructor(
    private readonly hooks: FlowControlHooks,
    private readonly limits: FlowControlLimits = FlowLimits,
  ) {}

  get isPaused(): boolean {
    return this.paused;
  }

  /** True once `release()` was called: the pty is never paused again. */
  get isReleased(): boolean {
    return this.released;
  }

  /** The worst backlog among consumers, in chars. */
  get maxUnacked(): number {
    let max = 0;
    for (const n of this.unacked.values()) if (n > max) max = n;
    return max;
  }

  get isOverHighWatermark(): boolean {
    return this.maxUnacked > this.limits.highWatermarkChars;
  }

  hasConsumer(id: string): boolean {
    return this.unacked.has(id);
  }

  unackedOf(id: string): number {
    return this.unacked.get(id) ?? 0;
  }

  /** A consumer starts with nothing outstanding: it is sent a snapshot plus what arrives from now on. */
  addConsumer(id: string): void {
    if (!this.unacked.has(id)) this.unacked.set(id, 0);
  }

  removeConsumer(id: string): void {
    if (this.unacked.delete(id)) this.evaluate();
  }

  /** `chars` of output arrived from the pty and will reach every consumer. */
  onDelivered(chars: number): void {
    if (chars <= 0) return;
    for (const [id, n] of this.unacked) this.unacked.set(id, n + chars);
    this.evaluate();
  }

  /** A consumer has parsed `chars` more. Unknown consumers (already detached) are ignored. */
  ack(id: string, chars: number): void {
    const n = this.unacked.get(id);
    if (n === undefined || !(chars > 0)) return;
    // Never below zero: a consumer that over-acks (e.g. acks a snapshot it was sent) must not earn credit.
    this.unacked.set(id, Math.max(0, n - chars));
    this.evaluate();
  }

  /** Stop pausing for good (the pane is being torn down and its remaining output must drain so the exit is
   *  seen). Callers that keep reading must bound memory another way: see PtySession's kill path. */
  release(): void {
    this.released = true;
    if (this.paused) {
      this.paused = false;
      this.hooks.resume();
    }
  }

  private evaluate(): void {
    if (this.released) return;
    const max = this.maxUnacked;
    if (!this.paused && max > this.limits.highWatermarkChars) {
      this.paused = true;
      this.hooks.pause();
    } else if (this.paused && max < this.limits.lowWatermarkChars) {
      this.paused = false;
      this.hooks.resume();
    }
  }
}
