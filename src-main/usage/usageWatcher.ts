import type { Result } from '../../src-shared/board/result.js';
import type { Disposable } from '../../src-shared/lifecycle/emitter.js';
import type { RateLimitReading, UsageTurn } from '../../src-shared/usage/usage.js';
import type { UsageReadWindow, UsageRecorded } from '../board/usageRecorder.js';
import type { UsageReader } from './usageReader.js';

export const UsageWatch = {
  /** How often a live agent's records are read: a turn lasts seconds to minutes, so its cost is on the card
   *  within a few seconds of its end, and a read of records that did not change is a stat or two. */
  pollMs: 3_000,
  /** Turns kept while the board refuses them (read-only, unreachable), to record once it takes writes again:
   *  the board's cap on one call. Past it the oldest wait for a restart's re-read. */
  backlog: 50_000,
} as const;

/** How the watcher records: LeaseEngine.recordUsage through the board's store. */
export type RecordUsage = (turns: UsageTurn[], limits: RateLimitReading[] | undefined, window: UsageReadWindow) => Promise<Result<UsageRecorded>>;

/**
 * One live agent's records, read every UsageWatch.pollMs and recorded on the board (the engine attributes
 * each turn). A read that failed, or turns the board could not take, are tried again at the next poll; what
 * the reader could not read is said once. Disposed with the agent: its timer stops, a read under way finishes
 * and records what it found.
 */
export class UsageWatcher implements Disposable {
  private timer: NodeJS.Timeout | null = null;
  private disposed = false;
  private backlog: UsageTurn[] = [];
  private backlogSince: number | null = null;
  private readonly said = new Set<string>();
  private running: Promise<void> | null = null;

  constructor(
    private readonly reader: UsageReader,
    private readonly record: RecordUsage,
    private readonly warn: (message: string) => void,
    private readonly opts: { pollMs?: number; now?: () => number } = {},
  ) {
    this.schedule();
  }

  private schedule(): void {
    if (this.disposed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.poll().finally(() => this.schedule());
    }, this.opts.pollMs ?? UsageWatch.pollMs);
  }

  private sayOnce(m: string): void {
    if (this.said.has(m)) return;
    this.said.add(m);
    this.warn(`forkbench: ${m}`);
  }

  /** One read and its recording; the next poll waits for it (a slow disk never stacks reads). */
  poll(): Promise<void> {
    this.running ??= this.pollOnce().finally(() => (this.running = null));
    return this.running;
  }

  private async pollOnce(): Promise<void> {
    const now = (this.opts.now ?? Date.now)();
    let read;
    try {
      read = await this.reader.read(now);
    } catch (err) {
      this.sayOnce(`could not read ${this.reader.source}'s usage records: ${(err as Error).message}`);
      return;
    }
    for (const n of read.notices) this.sayOnce(n);
    const turns = [...this.backlog, ...read.turns].slice(-UsageWatch.backlog);
    // Turns held over from a failed recording were written after the earlier of the two reads' last looks.
    const notBefore = this.backlog.length ? this.backlogSince : read.notBefore;
    // Readings alone are recorded too (the board records them only when they changed): headroom moves between turns.
    if (turns.length === 0 && !read.limits?.length) return;
    let r;
    try {
      r = await this.record(turns, read.limits, { notBefore });
    } catch {
      // The board closed under the read (the host stopping) or its store failed: the turns wait in the backlog,
      // and a restart reads them again (their ids count them once). Never an unhandled rejection of a timer.
      this.backlogSince = notBefore;
      this.backlog = turns;
      return;
    }
    if (r.ok) {
      this.backlog = [];
      this.backlogSince = null;
      return;
    }
    if (r.error.code === 'invalid-input') {
      // Never taken as it is: said once, and dropped rather than refused again every poll.
      this.sayOnce(`${this.reader.source}'s usage records held a turn the board refused (${r.error.message}); those turns are not counted`);
      this.backlog = [];
      return;
    }
    this.backlogSince = notBefore;
    this.backlog = turns;
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
