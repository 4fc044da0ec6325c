import { randomUUID } from 'node:crypto';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { copyBoard, type Board } from '../../src-shared/board/reducer.js';
import { reject, type Result } from '../../src-shared/board/result.js';
import { boardClock, type Clock } from '../base/clock.js';
import { Journal, keptFrom, loadBoard, readLog, readLogPage, readLogTail, readTaskLog, readTaskLogPage } from './journal.js';
import type { EventPage, EventPageQuery } from '../../src-shared/board/eventPage.js';
import { LeaseEngine } from './leaseEngine.js';
import { Quarantine } from './quarantine.js';
import { Emitter, type Disposable } from '../../src-shared/lifecycle/emitter.js';
import { DeadlineTimer, DurableLog, graceOnOpen, keyedResult, resumeGrace, seenOutcome } from './storeCore.js';
import { outcomeToKeep, WriteKeys, type WriteKeyRecord } from './writeKeys.js';
import { BoardReadOnlyError, BoardServiceConstants, type BoardService, type JournalBoardOptions, type KeyedOutcome, type WriteKey } from './boardService.js';

/**
 * The board one host owns, in its data folder: the pure lease engine, its journal on disk, and the one timer that lapses
 * claims on time. Every mutating call resolves only after its events are on disk, and listeners hear of an
 * event only then too (publish after commit): a window never shows a change a crash could take back.
 */
export class JournalBoard implements BoardService {
  readonly engine: LeaseEngine;
  readonly clock: Clock;
  private readonly journal: Journal;
  /** The one timer that lapses claims on time. */
  private readonly timer: DeadlineTimer;
  private armQueued = false;
  private closed = false;
  /** Events decided but not yet durable, each with its place in the journal's append count. */
  private outbox: Array<{ n: number; e: BoardEvent }> = [];
  private readOnly: BoardReadOnlyError | null = null;
  private readonly readOnlyEvents = new Emitter<BoardReadOnlyError>();
  /** What the journal has on disk (storeCore.ts): the board as saved, which the engine goes back to if the
   *  journal fails (a copyBoard: it costs one map), and the latest events, which a window's snapshot reads its
   *  log panel from rather than disk. */
  private readonly durable: DurableLog;
  /** The first outcome of each agent's idempotency keys (writeKeys.ts): the board's private record. */
  private readonly keys: WriteKeys;
  /** While a keyed write decides: its events, held back so its key's line goes into the journal first. */
  private capture: BoardEvent[] | null = null;
  readonly quarantine: Quarantine;

  static async open(opts: JournalBoardOptions): Promise<JournalBoard> {
    const svc = new JournalBoard(opts);
    await svc.start(opts);
    return svc;
  }

  private constructor(private readonly opts: JournalBoardOptions) {
    const loaded = loadBoard(opts.dir);
    for (const w of loaded.warnings) (opts.warn ?? console.warn)(`forkbench: ${w}`);
    this.quarantine = new Quarantine(opts.dir, opts.warn ?? console.warn);
    for (const q of loaded.setAside) this.quarantine.add(q);
    const recent = this.applied(readLogTail(opts.dir, BoardServiceConstants.recentEvents));
    this.clock = boardClock(loaded.mono, opts.monotonic);
    this.durable = new DurableLog(copyBoard(loaded.board), recent);
    this.timer = new DeadlineTimer(this.clock, () => {
      if (this.closed || this.readOnly) return;
      this.engine.sweep();
      // A failure is reported once, by turnReadOnly; the timer has nobody else to tell.
      this.commit().catch(() => undefined);
      this.arm();
    });
    this.engine = new LeaseEngine(this.clock, loaded.board);
    this.keys = new WriteKeys(() => this.clock.now());
    for (const r of loaded.keys) this.keys.put(r);
    this.journal = new Journal(opts.dir, loaded, () => ({ board: this.engine.state as Board, mono: this.clock.now(), keys: this.keys.records() }), {
      compactEvery: opts.compactEvery,
      compactBytes: opts.compactBytes,
      historyKeepBytes: opts.historyKeepBytes,
      warn: opts.warn ?? console.warn,
    });
    this.engine.onEvent((e) => {
      if (this.capture) this.capture.push(e);
      else this.record(e);
    });
  }

  private async start(opts: JournalBoardOptions): Promise<void> {
    if (this.engine.state.seq === 0) {
      this.engine.createThread(opts.threadId ?? randomUUID(), opts.goal ?? '');
    } else {
      graceOnOpen(this.engine, opts.holders);
    }
    await this.commit();
    this.arm();
  }

  get state(): Readonly<Board> {
    return this.engine.state;
  }

  get dir(): string {
    return this.opts.dir;
  }

  readonly sharedName = null;

  /** One host owns this board: every agent is its own, and there is no other host to list. */
  readonly membership = null;

  /** Durable events, in order. */
  onEvent(fn: (e: BoardEvent) => void): Disposable {
    return this.durable.onEvent(fn);
  }

  /** Called once, when the journal fails and the board turns read-only. */
  onReadOnly(fn: (err: Error) => void): Disposable {
    return this.readOnlyEvents.event(fn);
  }

  /** A journal that failed stays read-only until the host restarts: nothing to hear. */
  onAvailable(): Disposable {
    return { dispose: () => undefined };
  }

  /** Why the board takes no writes, or null while it does. */
  get readOnlyReason(): string | null {
    return this.readOnly?.message ?? null;
  }

  /** Run one decision and acknowledge it only once it is durable. */
  async run<T>(op: (engine: LeaseEngine) => Result<T>): Promise<Result<T>> {
    try {
      return await this.apply(op);
    } catch (err) {
      // A refusal like any other, with its own reason: agents and windows already know how to show one.
      if (err instanceof BoardReadOnlyError) return reject('read-only', err.message);
      throw err;
    }
  }

  /**
   * Run one decision under an idempotency key. The key is looked up first, before any rule of the engine:
   * a key seen before answers with its first outcome (success or refusal but `rate-limited`), after waiting until that is
   * durable, and does nothing; a key first used for a different request is refused `key-reused`. Else the
   * decision runs, and its outcome (as `answer` makes it: the value the caller is told) goes into the journal
   * in the same append as the decision's events, the key's line first: one is never on disk without the other.
   */
  async runKeyed<T, A>(k: WriteKey, op: (engine: LeaseEngine) => Result<T>, answer: (v: T) => A): Promise<KeyedOutcome<A>> {
    try {
      if (this.closed) throw new Error('the board is closed');
      if (this.readOnly) throw this.readOnly;
      const seen = this.keys.lookup(k.agentId, k.key, k.hash);
      if (seen.found) {
        await this.commit();
        return { replayed: true, result: seenOutcome(seen) as Result<A> };
      }
      const held: BoardEvent[] = (this.capture = []);
      let r: Result<A>;
      try {
        r = keyedResult(op(this.engine), answer);
      } catch (err) {
        // A decision that threw part-way keeps what it did, as an unkeyed one would, but no key: it has no outcome.
        for (const e of held) this.record(e);
        throw err;
      } finally {
        this.capture = null;
      }
      const keep = outcomeToKeep(r);
      if (!keep) {
        for (const e of held) this.record(e);
      } else {
        const rec: WriteKeyRecord = { agent: k.agentId, key: k.key, hash: k.hash, at: this.clock.now(), outcome: keep };
        // A refusal's key goes into the journal only as its refusal does (the agent's refusals' quota): a loop
        // of refused writes, each with a fresh key, would otherwise be an fsync'd line each (~280 KB/s measured,
        // enough to push the kept history out in minutes). One past the quota is kept in memory only: a retry
        // is answered the same refusal while this host runs, and after a restart it is decided again (it did
        // nothing, so deciding it again can do nothing twice).
        const refusalLogged = r.ok || held.some((e) => e.kind === 'write-rejected') || this.engine.refusalJournaled(k.agentId);
        if (refusalLogged) this.journal.appendRecord({ writeKey: rec, events: held.length });
        for (const e of held) this.record(e);
        this.keys.put(rec);
      }
      await this.commit();
      return { replayed: false, result: r };
    } catch (err) {
      if (err instanceof BoardReadOnlyError) return { replayed: false, result: reject('read-only', err.message) };
      throw err;
    }
  }

  /** The first outcome of a key already used, without deciding anything: for a caller that must know before
   *  it does work of its own (a branch record reads git first). Undefined for a key not seen. */
  async replay(k: WriteKey): Promise<Result<unknown> | undefined> {
    const seen = this.keys.lookup(k.agentId, k.key, k.hash);
    if (!seen.found) return undefined;
    if (!this.readOnly) await this.commit();
    return seenOutcome(seen);
  }

  /** How many keys the board keeps (bounded by WriteKeyLimits). */
  get keyCount(): number {
    return this.keys.size;
  }

  private record(e: BoardEvent): void {
    this.journal.append(e);
    this.outbox.push({ n: this.journal.appendedCount, e });
    this.queueArm();
  }

  /** Same, for host calls that return plain values (renewLive, releaseAllHeldBy, grace). */
  async apply<T>(op: (engine: LeaseEngine) => T): Promise<T> {
    if (this.closed) throw new Error('the board is closed');
    if (this.readOnly) throw this.readOnly;
    const r = op(this.engine);
    await this.commit();
    return r;
  }

  /** Wait for the journal, then publish what it made durable. A failure turns the board read-only. */
  private async commit(): Promise<void> {
    try {
      await this.journal.sync();
    } catch (err) {
      throw this.turnReadOnly(err as Error);
    }
    this.publish();
  }

  private publish(): void {
    const durable = this.journal.durableCount;
    let ready = 0;
    while (ready < this.outbox.length && (this.outbox[ready] as { n: number }).n <= durable) ready++;
    if (!ready) return;
    for (const { e } of this.outbox.splice(0, ready)) this.durable.publish(e);
  }

  private turnReadOnly(cause: Error): BoardReadOnlyError {
    if (this.readOnly) return this.readOnly;
    this.readOnly = cause instanceof BoardReadOnlyError ? cause : new BoardReadOnlyError(cause);
    // What was decided but never saved is dropped: publishing it now would show a change the disk never had,
    // and so is the engine's memory of it, or agents reading the board would still see it.
    this.outbox = [];
    this.engine.rewind(this.durable.board);
    this.timer.dispose();
    (this.opts.warn ?? console.error)(`forkbench: ${this.readOnly.message}`);
    this.readOnlyEvents.fire(this.readOnly);
    return this.readOnly;
  }

  /** The machine resumed from sleep, or the host was paused: live claims get a fresh lease. */
  resumeGrace(isAlive: (agentId: string) => boolean): Promise<{ extended: number; released: number }> {
    return resumeGrace((op) => this.apply(op), isAlive);
  }

  /** Every event still on disk, oldest first. Reads the whole history: for a window, use logTail. */
  async log(): Promise<BoardEvent[]> {
    return [...readLog(this.opts.dir)];
  }

  /** The events about one task still on disk, oldest first: what its details panel shows. */
  async taskLog(taskId: string): Promise<BoardEvent[]> {
    return this.applied(readTaskLog(this.opts.dir, taskId));
  }

  /** The latest `n` events, oldest first: what an event-log panel opens with. */
  logTail(n: number): BoardEvent[] {
    return n <= BoardServiceConstants.recentEvents ? this.durable.tail(n) : this.applied(readLogTail(this.opts.dir, n));
  }

  /** What a window opens with leaves out the events set aside: none of them happened on this board. */
  private applied(events: BoardEvent[]): BoardEvent[] {
    const aside = this.quarantine.all();
    if (!aside.length) return events;
    const skip = new Set(aside.filter((q) => q.store === 'journal').map((q) => q.seq));
    return events.filter((e) => !skip.has(e.seq));
  }

  /** A page of the history on disk, newest first. The head is the durable board's: what the disk has. */
  async history(q: EventPageQuery): Promise<EventPage> {
    const before = q.before ?? Infinity;
    // Unfiltered (a page shorter than asked for reads as the history's end): an event set aside shows as stored.
    const events = q.taskId !== undefined ? readTaskLogPage(this.opts.dir, q.taskId, before, q.limit) : readLogPage(this.opts.dir, before, q.limit);
    return { events, head: this.durable.board.seq, keptFrom: keptFrom(this.opts.dir) };
  }

  /** Stop the timer and flush. (A clean shutdown releases claims first: ThreadHost.dispose does.) */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.timer.dispose();
    this.quarantine.dispose();
    await this.journal.close();
  }

  private queueArm(): void {
    if (this.armQueued) return;
    this.armQueued = true;
    queueMicrotask(() => {
      this.armQueued = false;
      this.arm();
    });
  }

  /** The timer on the earliest deadline. Firing runs a sweep, which checks the claims as they are now. */
  private arm(): void {
    if (this.closed || this.readOnly) return;
    this.timer.arm(this.engine.nextDeadline());
  }
}
