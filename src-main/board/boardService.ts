import { randomUUID } from 'node:crypto';
import type { BoardEvent } from '../../src-shared/board/events.js';
import type { Board } from '../../src-shared/board/reducer.js';
import type { Result } from '../../src-shared/board/result.js';
import { boardClock, type Clock } from './clock.js';
import { Journal, loadBoard, readLog, readLogTail } from './journal.js';
import { LeaseEngine } from './leaseEngine.js';

export interface BoardServiceOptions {
  /** The Thread's board folder (one per Thread, under the user's data folder). */
  dir: string;
  /** For a new board: its Thread id and goal. */
  threadId?: string;
  goal?: string;
  /** Monotonic time source in ms (tests may inject one); the board clock resumes from the journal on top. */
  monotonic?: () => number;
  /** Which agents still exist. After a restart none do, so by default every claim is released. */
  isAgentAlive?: (agentId: string) => boolean;
  compactEvery?: number;
  warn?: (message: string) => void;
}

/**
 * A board with side effects: the pure lease engine, its journal on disk, and the one timer that lapses
 * claims on time. Every mutating call resolves only after its events are on disk.
 */
export class BoardService {
  readonly engine: LeaseEngine;
  readonly clock: Clock;
  private readonly journal: Journal;
  private timer: NodeJS.Timeout | null = null;
  private armedFor: number | null = null;
  private armQueued = false;
  private closed = false;
  private readonly listeners = new Set<(e: BoardEvent) => void>();

  static async open(opts: BoardServiceOptions): Promise<BoardService> {
    const svc = new BoardService(opts);
    await svc.start(opts);
    return svc;
  }

  private constructor(private readonly opts: BoardServiceOptions) {
    const loaded = loadBoard(opts.dir);
    for (const w of loaded.warnings) (opts.warn ?? console.warn)(`forkbench: ${w}`);
    this.clock = boardClock(loaded.mono, opts.monotonic);
    this.engine = new LeaseEngine(this.clock, loaded.board);
    this.journal = new Journal(opts.dir, loaded, () => ({ board: this.engine.state as Board, mono: this.clock.now() }), opts.compactEvery);
    this.engine.onEvent((e) => {
      this.journal.append(e);
      this.queueArm();
      for (const fn of this.listeners) fn(e);
    });
  }

  private async start(opts: BoardServiceOptions): Promise<void> {
    if (this.engine.state.seq === 0) {
      this.engine.createThread(opts.threadId ?? randomUUID(), opts.goal ?? '');
    } else {
      // No agent process outlives its host: their claims end now, with the reason, instead of waiting out
      // their leases; any holder that does still exist gets grace.
      this.engine.grace(opts.isAgentAlive ?? (() => false), 'host-restarted');
    }
    await this.journal.sync();
    this.arm();
  }

  get state(): Readonly<Board> {
    return this.engine.state;
  }

  get dir(): string {
    return this.opts.dir;
  }

  onEvent(fn: (e: BoardEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Run one decision and acknowledge it only once it is durable. */
  run<T>(op: (engine: LeaseEngine) => Result<T>): Promise<Result<T>> {
    return this.apply(op);
  }

  /** Same, for host calls that return plain values (renewLive, releaseAllHeldBy, grace). */
  async apply<T>(op: (engine: LeaseEngine) => T): Promise<T> {
    if (this.closed) throw new Error('the board is closed');
    const r = op(this.engine);
    await this.journal.sync();
    return r;
  }

  /** The machine resumed from sleep, or the host was paused: live claims get a fresh lease. */
  resumeGrace(isAlive: (agentId: string) => boolean): Promise<{ extended: number; released: number }> {
    return this.apply((e) => e.grace(isAlive, 'host-restarted'));
  }

  /** Every event still on disk, oldest first. Reads the whole history: for a window, use logTail. */
  log(): BoardEvent[] {
    return [...readLog(this.opts.dir)];
  }

  /** The latest `n` events, oldest first: what an event-log panel opens with. */
  logTail(n: number): BoardEvent[] {
    return readLogTail(this.opts.dir, n);
  }

  /** Stop the timer and flush. (A clean shutdown releases claims first: ThreadHost.dispose does.) */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
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

  /** One timer, on the earliest deadline. Firing runs a sweep, which checks the claims as they are now. */
  private arm(): void {
    if (this.closed) return;
    const next = this.engine.nextDeadline();
    if (next === this.armedFor) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = next;
    if (next === null) return;
    const delay = Math.max(0, Math.ceil(next - this.clock.now()));
    this.timer = setTimeout(() => {
      this.timer = null;
      this.armedFor = null;
      if (this.closed) return;
      this.engine.sweep();
      this.journal.sync().catch((err: Error) => (this.opts.warn ?? console.error)(`forkbench: journal write failed: ${err.message}`));
      this.arm();
    }, delay);
  }
}
