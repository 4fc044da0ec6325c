import type { Disposable } from '../../src-shared/lifecycle/emitter.js';
import { realTimers, type Timers } from '../base/timers.js';

export const InputChunkerConstants = {
  /** VS Code's WriteMaxChunkSize. Large single writes into a pty get truncated or reordered on some
   *  platforms (macOS's canonical-mode line limit is 1,024 bytes) and starve the child's reads; 50 chars
   *  per write is small enough for every line discipline and still ~10 kB/s at the interval below. */
  maxChunkChars: 50,
  /** VS Code's WriteInterval: the gap between chunks after the first, giving the child time to read. */
  writeIntervalMs: 5,
} as const;

const ESC = 0x1b;
const BEL = 0x07;

/** Length of the escape sequence starting at `i` (data[i] is ESC), or the rest of the input if it is
 *  unterminated: an incomplete sequence is still never split from its ESC. */
function escapeLength(data: string, i: number): number {
  const n = data.length;
  if (i + 1 >= n) return 1;
  const c = data.charCodeAt(i + 1);
  // ESC ESC <seq>: xterm's meta-sends-escape form of Alt+<key>. Keep the pair together.
  if (c === ESC) return 1 + escapeLength(data, i + 1);
  if (c === 0x5b /* [ CSI */) {
    let j = i + 2;
    while (j < n) {
      const d = data.charCodeAt(j);
      if (d >= 0x40 && d <= 0x7e) return j - i + 1;
      // Params (0x30-0x3f) and intermediates (0x20-0x2f) continue; anything else aborts the sequence.
      if (d < 0x20 || d > 0x3f) return j - i;
      j++;
    }
    return n - i;
  }
  if (c === 0x5d /* ] OSC */ || c === 0x50 /* P DCS */ || c === 0x58 /* X SOS */ || c === 0x5e /* ^ PM */ || c === 0x5f /* _ APC */) {
    let j = i + 2;
    while (j < n) {
      const d = data.charCodeAt(j);
      if (d === BEL || d === 0x9c) return j - i + 1;
      if (d === ESC && j + 1 < n && data.charCodeAt(j + 1) === 0x5c /* \ */) return j - i + 2;
      j++;
    }
    return n - i;
  }
  if (c === 0x4f /* O SS3 */ || c === 0x4e /* N SS2 */) return Math.min(3, n - i);
  // ESC + one char: Alt+<key> (ESC . is Alt+. in readline). This is input, not output: charset
  // designations such as ESC ( B are never typed, so an intermediate byte here is a key, not a prefix.
  return 2 + (isHighSurrogateAt(data, i + 1) ? 1 : 0);
}

function isHighSurrogateAt(data: string, i: number): boolean {
  const c = data.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff || i + 1 >= data.length) return false;
  const d = data.charCodeAt(i + 1);
  return d >= 0xdc00 && d <= 0xdfff;
}

/** Splits input into units that must never be separated: whole escape sequences, surrogate pairs, and
 *  single UTF-16 code units otherwise. */
export function tokenizeInput(data: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < data.length) {
    const len = data.charCodeAt(i) === ESC ? escapeLength(data, i) : isHighSurrogateAt(data, i) ? 2 : 1;
    tokens.push(data.slice(i, i + len));
    i += len;
  }
  return tokens;
}

/**
 * Chunks of at most `maxChars` that never cut through an escape sequence or a surrogate pair. A program
 * that reads ESC and then waits a few ms for the rest (vim, readline, any TUI) would otherwise see a
 * lone Escape key press followed by literal text. A sequence longer than `maxChars` (a long OSC) becomes a
 * chunk of its own: whole and too long beats split.
 */
export function splitInput(data: string, maxChars: number = InputChunkerConstants.maxChunkChars): string[] {
  if (data.length <= maxChars) return data.length === 0 ? [] : [data];
  const chunks: string[] = [];
  let current = '';
  for (const token of tokenizeInput(data)) {
    if (current.length > 0 && current.length + token.length > maxChars) {
      chunks.push(current);
      current = '';
    }
    current += token;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

export interface ChunkedWriterOptions {
  maxChunkChars?: number;
  intervalMs?: number;
  timers?: Timers;
}

/**
 * Writes input in chunks: the first immediately (a keystroke is never delayed), the rest spaced by a
 * short timer. Later writes queue behind earlier ones, so ordering is preserved across calls.
 */
export class ChunkedWriter implements Disposable {
  private queue: string[] = [];
  private timer: unknown;
  private readonly maxChunkChars: number;
  private readonly intervalMs: number;
  private readonly timers: Timers;

  constructor(
    private readonly sink: (chunk: string) => void,
    options: ChunkedWriterOptions = {},
  ) {
    this.maxChunkChars = options.maxChunkChars ?? InputChunkerConstants.maxChunkChars;
    this.intervalMs = options.intervalMs ?? InputChunkerConstants.writeIntervalMs;
    this.timers = options.timers ?? realTimers;
  }

  /** Chunks not yet handed to the sink. */
  get pendingChunks(): number {
    return this.queue.length;
  }

  write(data: string): void {
    const chunks = splitInput(data, this.maxChunkChars);
    if (chunks.length === 0) return;
    this.queue.push(...chunks);
    if (this.timer === undefined) this.drainOne();
  }

  /** Drops input not yet written (the pane is going away). */
  dispose(): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.queue = [];
  }

  private drainOne(): void {
    const chunk = this.queue.shift();
    if (chunk === undefined) return;
    this.sink(chunk);
    if (this.queue.length === 0) return;
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      this.drainOne();
    }, this.intervalMs);
  }
}
