import { StringDecoder } from 'node:string_decoder';
import type { Disposable } from '../../src-shared/lifecycle/emitter.js';
import { monotonicNow, realTimers, type Timers } from '../base/timers.js';

export const OutputBatcherConstants = {
  /** VS Code's TerminalDataBufferer throttle. A pty read returns at most a few KiB at a time, so without
   *  batching a flood becomes thousands of IPC messages and xterm writes per second; 5 ms merges them into
   *  at most 200 messages a second (short of a flood, see maxBatchChars) while staying well under one 16 ms
   *  frame. It is the minimum gap between
   *  two flushes, not a delay: the first chunk after a quiet gap this long goes out at once (see below). */
  flushDelayMs: 5,
  /** A batch is flushed once it holds this many chars, even within the interval. A consumer acks a message
   *  only when it has parsed all of it (xterm's write callback), so under flow control the message size is
   *  the ack granularity: messages as large as the window would drop a backlog to 0 in one ack and the pty
   *  would resume only once the window ran dry. Far below the flow-control window (1,000,000) a resume
   *  comes while the consumer still has several messages in hand. Every message costs the host, the browser
   *  and the page a fixed amount besides its bytes (a JSON frame, a socket write, a page task): over a 20 MB
   *  `cat` into the page, 100k against 25k cut the CPU spent by serve from ~0.78 to ~0.70 s, by the page's
   *  renderer from ~1.14 to ~1.04 s and by the rest of Chromium from ~0.40 to ~0.32 s (3 runs each,
   *  bench/browserBench.ts), for 15.6-16.9 against 14.0-15.6 MB/s; 250k gained nothing more. A message of
   *  100k is ~3 ms of parsing. Floods only: at the 5 ms interval a batch reaches it only above ~20 MB/s. */
  maxBatchChars: 100_000,
} as const;

export interface OutputBatcherOptions {
  delayMs?: number;
  maxBatchChars?: number;
  timers?: Timers;
  /** Monotonic clock in ms (same as the timers'); defaults to performance.now. */
  now?: () => number;
}

/**
 * Merges a pane's output into at most one string per ~5 ms: the first chunk at once, what follows batched.
 *
 * A chunk that arrives when nothing was flushed for at least the interval is flushed immediately: a
 * keystroke's echo, a prompt, the first read of a command's output. Chunks that follow within the interval
 * join one batch, flushed when the interval since the last flush has passed or when it reaches
 * `maxBatchChars`. So ordinary output is at most one message per interval, a flood is messages of up to
 * 100k chars, and an echo is never held back (VS Code's bufferer delayed every first chunk by
 * its 5 ms: measured here, 5.6 ms echo p50 through the session against 0.3 ms for node-pty alone).
 *
 * Accepts strings (node-pty's default, already decoded by the socket's own StringDecoder) and raw bytes
 * (`encoding: null`). Bytes go through a StringDecoder that keeps an incomplete UTF-8 sequence at the end
 * of one chunk until the next chunk completes it, so a character split across two reads is never turned
 * into U+FFFD.
 */
export class OutputBatcher implements Disposable {
  private readonly decoder = new StringDecoder('utf8');
  private parts: string[] = [];
  private pending = 0;
  private timer: unknown;
  private readonly delayMs: number;
  private readonly maxBatchChars: number;
  private readonly timers: Timers;
  private readonly now: () => number;
  /** When the last flush went out; -Infinity before the first, so the very first chunk goes at once. */
  private lastFlushAt = Number.NEGATIVE_INFINITY;
  private disposed = false;

  constructor(
    private readonly onFlush: (data: string) => void,
    options: OutputBatcherOptions = {},
  ) {
    this.delayMs = options.delayMs ?? OutputBatcherConstants.flushDelayMs;
    this.maxBatchChars = options.maxBatchChars ?? OutputBatcherConstants.maxBatchChars;
    this.timers = options.timers ?? realTimers;
    this.now = options.now ?? monotonicNow;
  }

  /** Characters waiting for the next flush. */
  get pendingChars(): number {
    return this.pending;
  }

  push(chunk: string | Uint8Array): void {
    if (this.disposed) return;
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk as Buffer);
    if (text.length === 0) return;
    this.parts.push(text);
    this.pending += text.length;
    if (this.pending >= this.maxBatchChars) {
      this.flush();
      return;
    }
    if (this.timer !== undefined) return; // a batch is open: this chunk joins it
    const since = this.now() - this.lastFlushAt;
    if (since >= this.delayMs) {
      this.flush();
      return;
    }
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.delayMs - since);
  }

  /** Emits whatever is waiting now, without waiting for the timer. */
  flush(): void {
    if (this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.parts.length === 0) return;
    const data = this.parts.length === 1 ? this.parts[0]! : this.parts.join('');
    this.parts = [];
    this.pending = 0;
    this.lastFlushAt = this.now();
    this.onFlush(data);
  }

  /**
   * The consumers are waiting for data (flow control just resumed the pty): emits what is waiting, and lets
   * the next chunk go out at once instead of sitting out the rest of the interval. Batching exists to spare
   * messages; a resume comes at most once per half window of output, so this costs one message per ~500k
   * chars and spares the consumer an idle gap of up to 5 ms per pause/resume cycle.
   */
  expedite(): void {
    this.flush();
    this.lastFlushAt = Number.NEGATIVE_INFINITY;
  }

  /** The stream ended: an incomplete trailing byte sequence can never complete, so it is emitted as U+FFFD. */
  end(): void {
    const rest = this.decoder.end();
    if (rest.length > 0) {
      this.parts.push(rest);
      this.pending += rest.length;
    }
    this.flush();
  }

  dispose(): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.parts = [];
    this.pending = 0;
    this.disposed = true;
  }
}
