import type { Result } from '../../src-shared/board/result.js';
import type { Disposable } from '../../src-shared/lifecycle/emitter.js';
import { RateLimitSchema, UsageTurnSchema } from '../../src-shared/board/storedEvents.js';
import type { RateLimitReading, UsagePosition, UsageTurn } from '../../src-shared/usage/usage.js';
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
 * the reader could not read is said once. A turn the board's journal would not load back (a count out of
 * range, a name with control characters) is left out with a notice, and the rest recorded: one bad record
 * never holds back the others. Disposed with the agent: its timer stops, a read under way finishes and
 * records what it found.
 */
export class UsageWatcher implements Disposable {
  private timer: NodeJS.Timeout | null = null;
  private disposed = false;
  private backlog: UsageTurn[] = [];
  private backlogSince: number | null = null;
  private backlogAt = new Map<string, UsagePosition>();
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
    this.running ??= this.pollOnce(false).finally(() => (this.running = null));
    return this.running;
  }

  /** The agent's process is gone: after any read under way, one more that takes what it left half written. */
  async last(): Promise<void> {
    await this.running;
    await this.pollOnce(true);
  }

  /** The turns the board can take; the others said in one notice. */
  private valid(turns: readonly UsageTurn[]): UsageTurn[] {
    const ok: UsageTurn[] = [];
    let first: string | null = null;
    for (const t of turns) {
      const v = UsageTurnSchema.safeParse(t);
      if (v.success) ok.push(t);
      else first ??= `${typeof t?.id === 'string' ? `turn ${JSON.stringify(t.id.slice(0, 80))}` : 'a turn'}: ${v.error.issues[0]?.path.join('.') || 'turn'}: ${v.error.issues[0]?.message}`;
    }
    const bad = turns.length - ok.length;
    if (first) this.sayOnce(`${this.reader.source}'s usage records held ${bad === 1 ? 'a turn' : `${bad} turns`} the board cannot take (${first}); ${bad === 1 ? 'it is' : 'they are'} not counted, the others are`);
    return ok;
  }

  private async pollOnce(last: boolean): Promise<void> {
    const now = (this.opts.now ?? Date.now)();
    let read;
    try {
      read = await this.reader.read(now, last);
    } catch (err) {
      this.sayOnce(`could not read ${this.reader.source}'s usage records: ${(err as Error).message}`);
      return;
    }
    for (const n of read.notices) this.sayOnce(n);
    const all = [...this.backlog, ...this.valid(read.turns)];
    const turns = all.slice(-UsageWatch.backlog);
    const positions = new Map([...this.backlogAt, ...(read.positions ?? [])]);
    // The read's marks cover the backlog's turns too (a mark says every turn before it was handed out), unless
    // the backlog lost its oldest: then they are not all on the board, and no mark may pass them.
    const marks = turns.length === all.length ? read.marks : undefined;
    // Turns held over from a failed recording were written after the earlier of the two reads' last looks.
    const notBefore = this.backlog.length ? this.backlogSince : read.notBefore;
    const limits = read.limits?.filter((l) => RateLimitSchema.safeParse(l).success);
    // Readings alone are recorded too (the board records them only when they changed): headroom moves between turns.
    if (turns.length === 0 && !limits?.length) return;
    let r;
    try {
      r = await this.record(turns, limits?.length ? limits : undefined, { notBefore, positions, ...(marks ? { marks } : {}) });
    } catch {
      // The board closed under the read (the host stopping) or its store failed: the turns wait in the backlog,
      // and a restart reads them again (their ids count them once). Never an unhandled rejection of a timer.
      this.hold(turns, positions, notBefore);
      return;
    }
    if (r.ok) {
      this.hold([], new Map(), null);
      return;
    }
    if (r.error.code === 'invalid-input') {
      // Never taken as it is: said once, and dropped rather than refused again every poll.
      this.sayOnce(`${this.reader.source}'s usage records held a turn the board refused (${r.error.message}); those turns are not counted`);
      this.hold([], new Map(), null);
      return;
    }
    this.hold(turns, positions, notBefore);
  }

  private hold(turns: UsageTurn[], positions: Map<string, UsagePosition>, since: number | null): void {
    this.backlog = turns;
    this.backlogAt = turns.length ? new Map(turns.flatMap((t) => (positions.has(t.id) ? [[t.id, positions.get(t.id) as UsagePosition] as const] : []))) : new Map();
    this.backlogSince = turns.length ? since : null;
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
