import { StringDecoder } from 'node:string_decoder';
import type { Disposable } from './emitter.js';
import { realTimers, type Timers } from './timers.js';

export const OutputBatcherConstants = {
  /** VS Code's TerminalDataBufferer throttle. A pty read returns at most a few KiB at a time, so without
   *  batching a flood becomes thousands of IPC messages and xterm writes per second; 5 ms merges them while
   *  staying well under one 16 ms frame, so typing still echoes within the same frame. */
  flushDelayMs: 5,
} as const;

export interface OutputBatcherOptions {
  delayMs?: number;
  timers?: Timers;
}

/**
 * Merges a pane's output into one string per ~5 ms.
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
  private readonly timers: Timers;
  private disposed = false;

  constructor(
    private readonly onFlush: (data: string) => void,
    options: OutputBatcherOptions = {},
  ) {
    this.delayMs = options.delayMs ?? OutputBatcherConstants.flushDelayMs;
    this.timers = options.timers ?? realTimers;
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
    if (this.timer === undefined) {
      this.timer = this.timers.setTimeout(() => {
        this.timer = undefined;
        this.flush();
      }, this.delayMs);
    }
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
    this.onFlush(data);
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
