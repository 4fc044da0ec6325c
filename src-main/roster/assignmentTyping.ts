import { DisposableStore, type TimerHandle } from '../../src-shared/lifecycle/disposableStore.js';
import type { NoticeWay } from '../agents/profileKit.js';

export const TypingConstants = {
  /** A person types in bursts; 1.5 s without a keystroke or output is a pause, not a breath. */
  quietMs: 1500,
  pollMs: 250,
  /** The echo of a typed message has settled when the pane prints nothing for this long; a TUI redraws
   *  its input box within a frame or two (16-33 ms), so 100 ms is settled with room to spare. */
  echoQuietMs: 100,
  /** A pane that never stops printing still gets its Enter after this long. */
  echoMaxMs: 2_000,
} as const;

/** What the typist needs of a pane's terminal. */
export interface TypedInto {
  write(data: string): void;
  asPaste(text: string): string;
  showNotice(text: string): Promise<void>;
  readonly lastOutputAt: number;
}

/**
 * Gives the host's messages to an agent (an assignment, a task taken away, its folder about to go) the way
 * its profile takes them (NoticeWay). Typed: into its pane, never in the middle of a person's typing nor
 * while the agent prints: queued until the pane is quiet, pasted, then Enter on its own once the echo
 * settles. Shown: into the pane's output at once (the session picks the moment, between the program's own
 * sequences, and writes a half-typed line again below it): nothing is typed, so nothing runs.
 */
export class PaneTypist {
  private readonly store = new DisposableStore();
  private readonly pending: string[] = [];
  /** Who waits for the typed messages pending and the one awaiting its Enter. */
  private readonly waiting: Array<() => void> = [];
  private timer: TimerHandle | null = null;
  private lastInputAt = 0;
  /** A message is pasted and its Enter not yet sent. */
  private awaitingEnter = false;

  constructor(
    private readonly pane: TypedInto,
    private readonly way: NoticeWay,
    private readonly quietMs: number = TypingConstants.quietMs,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A person is about to type into the pane. A message pasted and waiting for its Enter is sent first, so
   *  it stays a message of its own: the person's keys would otherwise join it. */
  noteInput(): void {
    this.lastInputAt = this.now();
    if (this.awaitingEnter) this.submit();
  }

  /** Resolves once the message is in the pane (typed and entered, or shown), or will never be (disposed). */
  say(text: string): Promise<void> {
    if (this.store.isDisposed) return Promise.resolve();
    if (this.way === 'shown') return this.pane.showNotice(text).catch(() => undefined);
    this.pending.push(text);
    this.whenQuiet();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  dispose(): void {
    this.timer = null;
    this.awaitingEnter = false;
    this.pending.length = 0;
    this.store.dispose();
    for (const w of this.waiting.splice(0)) w();
  }

  private arm(fn: () => void, ms: number): void {
    if (!this.store.isDisposed) this.timer = this.store.timeout(fn, ms);
  }

  private whenQuiet(): void {
    if (this.timer) return;
    const tick = () => {
      this.timer = null;
      if (!this.pending.length) return;
      const now = this.now();
      if (now - this.lastInputAt < this.quietMs || now - this.pane.lastOutputAt < this.quietMs) return this.arm(tick, TypingConstants.pollMs);
      const text = this.pending.splice(0).join(' ');
      this.pane.write(this.pane.asPaste(text));
      this.awaitingEnter = true;
      this.submitWhenEchoed(this.now());
    };
    this.arm(tick, TypingConstants.pollMs);
  }

  /** Enter, on its own, once the message's echo has settled. A TUI takes a long chunk that ends in Enter for
   *  a paste and the Enter for a newline inside it (Claude Code does), so the message would sit unsent. */
  private submitWhenEchoed(sentAt: number): void {
    const check = () => {
      this.timer = null;
      const now = this.now();
      if (now - this.pane.lastOutputAt < TypingConstants.echoQuietMs && now - sentAt < TypingConstants.echoMaxMs) return this.arm(check, TypingConstants.echoQuietMs);
      this.submit();
    };
    this.arm(check, TypingConstants.echoQuietMs);
  }

  private submit(): void {
    this.timer?.dispose();
    this.timer = null;
    this.awaitingEnter = false;
    this.pane.write('\r');
    // Those waiting for the messages just entered; messages said since wait on.
    const entered = this.waiting.splice(0, this.waiting.length - this.pending.length);
    for (const w of entered) w();
    // Messages that came while this one was being typed wait for the pane to be quiet again.
    if (this.pending.length) this.whenQuiet();
  }
}
