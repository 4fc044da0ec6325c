import { AckBatcher } from './ackBatcher.js';

/** What a pane's output is written into: xterm in the app, a recorder in tests. */
export interface TerminalSink {
  /** Queue `data` for parsing; `parsed` runs once it has been parsed (xterm's write callback). */
  write(data: string, parsed: () => void): void;
  /** Clear screen and scrollback, before a restored screen is written. */
  reset(): void;
}

/**
 * The path from pushed `pane-data` to a terminal, with restore and acks.
 *
 * Restore: on (re)open the host's serialized screen (`agent.screen`) is written first, then live data. The
 * screen is taken after the host has flushed everything it had delivered, and pushes and responses share
 * one ordered channel, so output that arrives while the screen request is in flight is already inside the
 * screen: it is dropped here (but still acked: the host counted it as delivered to this window).
 *
 * Acks: live data is acked from the write callback, i.e. after xterm parsed it, batched by AckBatcher.
 * The restored screen is never acked: the host did not count it as delivered.
 */
export class PaneFeed {
  private generation = 0;
  private restoring = false;
  private disposed = false;
  private parsedTotal = 0;
  private readonly acks: AckBatcher;
  /** For the debug hook (`?debug=1`) and the browser bench only: after each parsed write of live output,
   *  with the running total of `parsedChars`. */
  onParsed: ((total: number) => void) | null = null;

  constructor(
    private readonly sink: TerminalSink,
    sendAck: (chars: number) => void,
    ackStep?: number,
  ) {
    this.acks = new AckBatcher(sendAck, ackStep);
  }

  get isRestoring(): boolean {
    return this.restoring;
  }

  /** Live output chars the terminal has parsed so far (what the acks count); a restored screen is not. */
  get parsedChars(): number {
    return this.parsedTotal;
  }

  /** Output from the host. */
  data(data: string): void {
    if (this.disposed || data.length === 0) return;
    if (this.restoring) {
      this.acks.parsed(data.length);
      return;
    }
    const n = data.length;
    this.sink.write(data, () => {
      if (this.disposed) return;
      this.parsedTotal += n;
      this.acks.parsed(n);
      this.onParsed?.(this.parsedTotal);
    });
  }

  /**
   * Replace what the terminal shows with the host's screen. A later restore supersedes an earlier one that
   * is still in flight; a failed fetch leaves the terminal as it was and live data flowing.
   */
  async restore(fetchScreen: () => Promise<string>): Promise<void> {
    const gen = ++this.generation;
    this.restoring = true;
    try {
      const screen = await fetchScreen();
      if (gen !== this.generation || this.disposed) return;
      this.sink.reset();
      if (screen) this.sink.write(screen, () => undefined);
    } finally {
      if (gen === this.generation) this.restoring = false;
    }
  }

  /** A new connection: the host counts this window from zero again. */
  resetAcks(): void {
    this.acks.reset();
  }

  dispose(): void {
    this.disposed = true;
    this.generation++;
  }
}
