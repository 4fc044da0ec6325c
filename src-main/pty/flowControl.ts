/**
 * Flow control for one pane: VS Code's FlowControlConstants, extended to several consumers.
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
export const FlowControlConstants = {
  /** Pause above this many unacknowledged chars. VS Code uses 100,000 (FlowControlConstants.HighWatermarkChars)
   *  for Electron IPC; a page behind a WebSocket acks through a busy main thread (xterm's parse and the DOM
   *  renderer's frames share it), so 100k (~4 ms of parsing) ran out before an ack could come back: a 20 MB
   *  `cat` reached the page at 5.7-6.5 MB/s. 1,000,000 (~40 ms of parsing) keeps the page fed through those
   *  stalls: 9.4-9.8 MB/s in bench/browserBench.ts on this 2-core machine. It still alone bounds memory: at
   *  most this plus one read chunk (~2 MB of UTF-16) per consumer, far under xterm's 50 MB discard limit. */
  highWatermarkChars: 1_000_000,
  /** Resume below this: half the window, so a consumer still has half a window in hand when the pty reads
   *  again. (VS Code resumes at 5,000, i.e. once the consumer has all but emptied its window; then every
   *  cycle it sits idle for the resume's round trip: the review saw a page waiting 52-78 % of a flood.) The
   *  pty is toggled at most once per 500,000 chars, not on every ack. */
  lowWatermarkChars: 500_000,
  /** Consumers ack in steps of this many parsed chars: one message per 50 KB. VS Code's 5,000
   *  (CharCountAckSize) meant 4,000 acks, each a WebSocket message and a validated host call, for a 20 MB
   *  flood; at 50,000 the page's share of the bench above rose ~5 %. At most the low watermark, so a
   *  consumer that has parsed everything is always below it, even holding back an unsent partial ack (the
   *  renderer's AckBatcher uses the same number). */
  charCountAckSize: 50_000,
} as const;

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
    private readonly limits: FlowControlLimits = FlowControlConstants,
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
