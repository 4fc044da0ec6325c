import type { BoardEvent } from '../../src-shared/board/events.js';
import { applyEvent, type Board } from '../../src-shared/board/reducer.js';
import type { Result } from '../../src-shared/board/result.js';
import { Emitter, type Disposable } from '../../src-shared/lifecycle/emitter.js';
import type { Clock } from '../base/clock.js';
import type { LeaseEngine } from './leaseEngine.js';
import type { KeyLookup } from './writeKeys.js';
import { BoardServiceConstants, type Holders } from './boardService.js';

/**
 * The plumbing both stores share (journalBoard.ts, pg/pgBoard.ts): what a store does around the engine's
 * decisions, whichever store keeps them. Each store keeps only what is its own: how it orders and makes an
 * event durable.
 */

/**
 * What a store has made durable: the board as committed (what the engine goes back to when a write could not
 * be kept), the latest events a window opens with, and the listeners told of each (publish after commit).
 */
export class DurableLog {
  private readonly events = new Emitter<BoardEvent>();

  constructor(
    /** The board as far as the store has it: the engine's board minus what is not durable yet. */
    readonly board: Board,
    /** The latest durable events, oldest first. */
    private recent: BoardEvent[] = [],
  ) {}

  /** `e` is durable: apply it to the committed board, keep it for windows that open, and tell listeners
   *  (`tell: false` while a store opens, before anyone listens). */
  publish(e: BoardEvent, tell = true): void {
    applyEvent(this.board, e);
    this.recent.push(e);
    // Trimmed in batches, so keeping the window costs O(1) per event rather than a copy each time.
    if (this.recent.length > 2 * BoardServiceConstants.recentEvents) this.recent = this.recent.slice(-BoardServiceConstants.recentEvents);
    if (tell) this.events.fire(e);
  }

  /** The latest `n` durable events held in memory (at most BoardServiceConstants.recentEvents), oldest first. */
  tail(n: number): BoardEvent[] {
    return this.recent.slice(-n);
  }

  onEvent(fn: (e: BoardEvent) => void): Disposable {
    return this.events.event(fn);
  }
}

/**
 * One timer, on the earliest lease deadline: `due` runs when it comes (a sweep, which checks the claims as they
 * are then, so a timer that fires early, late or for a claim since renewed changes nothing).
 */
export class DeadlineTimer implements Disposable {
  private timer: NodeJS.Timeout | null = null;
  private armedFor: number | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly due: () => void,
  ) {}

  /** Aim at `next` (board time; null: nothing to wait for). The same deadline again changes nothing. */
  arm(next: number | null): void {
    if (next === this.armedFor) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = next;
    if (next === null) return;
    const delay = Math.max(0, Math.ceil(next - this.clock.now()));
    this.timer = setTimeout(() => {
      this.timer = null;
      this.armedFor = null;
      this.due();
    }, delay);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** A keyed decision's outcome as its caller is told it: the engine's value made into the answer, or its refusal. */
export function keyedResult<T, A>(decided: Result<T>, answer: (v: T) => A): Result<A> {
  return decided.ok ? { ok: true, value: answer(decided.value) } : decided;
}

/** The first outcome a key found before answers with: that outcome, or `key-reused` for another request. */
export function seenOutcome(seen: Extract<KeyLookup, { found: true }>): Result<unknown> {
  return 'reused' in seen ? { ok: false, error: seen.reused } : seen.outcome;
}

/**
 * A board opening after its host was away: a holder that no longer exists loses its claim now, with the reason
 * (`agent-exited` when its end was seen, `host-restarted` when it ended with the host), instead of waiting out
 * its lease; any holder that does still exist (kept by a pty host) gets grace.
 */
export function graceOnOpen(engine: LeaseEngine, holders: Holders | undefined): void {
  const fate = (id: string) => holders?.fateOf(id) ?? 'unknown';
  engine.grace((id) => fate(id) === 'alive', (id) => (fate(id) === 'exited' ? 'agent-exited' : 'host-restarted'));
}

/** The machine resumed from sleep, or the host was paused: this host's live claims get a fresh lease, and the
 *  claims of holders gone meanwhile end. */
export function resumeGrace(apply: <T>(op: (engine: LeaseEngine) => T) => Promise<T>, isAlive: (agentId: string) => boolean): Promise<{ extended: number; released: number }> {
  return apply((e) => e.grace(isAlive, 'host-restarted'));
}
