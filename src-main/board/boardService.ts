import type { BoardEvent } from '../../src-shared/board/events.js';
import type { EventPage, EventPageQuery } from '../../src-shared/board/eventPage.js';
import type { Board } from '../../src-shared/board/reducer.js';
import type { Result } from '../../src-shared/board/result.js';
import type { Clock } from '../base/clock.js';
import type { Disposable } from '../../src-shared/lifecycle/emitter.js';
import type { LeaseEngine } from './leaseEngine.js';
import type { Quarantine } from './quarantine.js';

/**
 * A Thread's board as its host uses it, whichever store keeps it: the journal in the host's data folder
 * (journalBoard.ts: one host owns it) or PostgreSQL (pg/pgBoard.ts: several hosts share it). Both decide with
 * the same lease engine and reducer; a store only orders, keeps and publishes what the engine decided.
 *
 * Every write resolves only once its events are durable, and listeners hear of an event only then (publish
 * after commit): a window never shows a change a crash could take back.
 */
export interface BoardService {
  /** The engine at the board's latest known position: reads go here; writes go through run/apply. */
  readonly engine: LeaseEngine;
  readonly clock: Clock;
  readonly state: Readonly<Board>;
  /** The Thread's data folder on this host (agents' records, worktrees' bookkeeping). */
  readonly dir: string;
  /** The shared board's name (every host that opens this name shares it); null for a board on this host only. */
  readonly sharedName: string | null;
  /** Durable events, in the board's order (on a shared board, other hosts' too). */
  onEvent(fn: (e: BoardEvent) => void): Disposable;
  /** The board stopped taking writes (its journal failed; its database was lost). */
  onReadOnly(fn: (err: Error) => void): Disposable;
  /** The board takes writes again (a shared board's database answers again; a journal never comes back). */
  onAvailable(fn: () => void): Disposable;
  /** Why the board takes no writes, or null while it does. */
  readonly readOnlyReason: string | null;
  /** The events read from the store that did not apply and were set aside (storedEvents.ts): the board went
   *  on past each. The ones found since it opened are told to the person once (ThreadNotices). */
  readonly quarantine: Quarantine;
  /** Run one decision and acknowledge it only once it is durable. */
  run<T>(op: (engine: LeaseEngine) => Result<T>): Promise<Result<T>>;
  /** Run one decision under an idempotency key: a key seen before answers with its first outcome. */
  runKeyed<T, A>(k: WriteKey, op: (engine: LeaseEngine) => Result<T>, answer: (v: T) => A): Promise<KeyedOutcome<A>>;
  /** The first outcome of a key already used, without deciding anything; undefined for a key not seen. */
  replay(k: WriteKey): Promise<Result<unknown> | undefined>;
  /** Same as run, for host calls that return plain values (renewLive, releaseAllHeldBy, grace). */
  apply<T>(op: (engine: LeaseEngine) => T): Promise<T>;
  /** This host's membership of a board several hosts share (BoardMembership); null on a board one host owns,
   *  where every agent is this host's and there are no other hosts. */
  readonly membership: BoardMembership | null;
  /** The machine resumed from sleep, or the host was paused: this host's live claims get a fresh lease. */
  resumeGrace(isAlive: (agentId: string) => boolean): Promise<{ extended: number; released: number }>;
  /** Every event the store still keeps, oldest first: the whole history (tests and tools; a window reads
   *  logTail, then `history` a page at a time). */
  log(): Promise<BoardEvent[]>;
  /** The events about one task, oldest first: what its details panel shows. */
  taskLog(taskId: string): Promise<BoardEvent[]>;
  /** The latest `n` events, oldest first: what an event-log panel opens with. */
  logTail(n: number): BoardEvent[];
  /** A page of the history the store keeps, newest first (eventPage.ts): what a log panel reads as it is
   *  scrolled back. A read only: it decides nothing and takes no lock, so paging never slows a write. */
  history(q: EventPageQuery): Promise<EventPage>;
  /** Stop timers and flush. (A clean shutdown releases this host's claims first: ThreadHost.dispose does.) */
  close(): Promise<void>;
}

/**
 * A host's place on a board several hosts share (pg/pgBoard.ts): which agents it runs, and the other hosts'.
 * Only the shared store has one; on a board one host owns every agent is the host's own.
 */
export interface BoardMembership {
  /** This host runs this agent (spawned or adopted): its claims are this host's to vouch for, and end
   *  `host-lost` if this host is lost. */
  hostAgent(agentId: string, about?: { name: string; profile: string }): void;
  /** Whether this host runs the agent. Work that belongs to the agent's host alone, its git worktree, is done
   *  only there. */
  runsHere(agentId: string): boolean;
  /** This host's agent exited or was closed: other hosts' windows stop listing it. */
  agentGone(agentId: string): void;
  /** This host found its own lease on the board lapsed and joined again; `ended`: its agents' claims it ended
   *  then (others may have been ended already by another host). */
  onHostLapsed(fn: (ended: number) => void): Disposable;
  /** Agents other hosts run on this board, as of the last look. */
  peers(): readonly PeerAgent[];
  /** The list of other hosts' agents changed. */
  onPeers(fn: () => void): Disposable;
}

/** Whether this host runs `agentId` on `board`: on a board one host owns, every agent is its own. */
export function runsHere(board: Pick<BoardService, 'membership'>, agentId: string): boolean {
  return board.membership?.runsHere(agentId) ?? true;
}

/** An agent another host runs on a shared board: its window lists it, and a person may give it a task. */
export interface PeerAgent {
  readonly id: string;
  readonly name: string;
  readonly profile: string;
  /** Its host's name, as that host gave it (the machine's name). */
  readonly host: string;
}

/** A write's idempotency key: whose, the key, and the hash of the request it was first used for. */
export interface WriteKey {
  readonly agentId: string;
  readonly key: string;
  readonly hash: string;
}


/** A keyed write's answer: the outcome, and whether it is the first one replayed (nothing was done now). */
export interface KeyedOutcome<T> {
  readonly result: Result<T>;
  readonly replayed: boolean;
}

export interface JournalBoardOptions {
  /** The Thread's board folder (one per Thread, under the user's data folder). */
  dir: string;
  /** For a new board: its Thread id and goal. */
  threadId?: string;
  goal?: string;
  /** Monotonic time source in ms (tests may inject one); the board clock resumes from the journal on top. */
  monotonic?: () => number;
  /** Who the holders of claims are as the board opens after a restart. Without it none exists, so every claim
   *  is released. */
  holders?: Holders;
  compactEvery?: number;
  /** Journal sizes (journalFiles.ts), smaller in tests. */
  compactBytes?: number;
  historyKeepBytes?: number;
  warn?: (message: string) => void;
}

/**
 * What became of a claim's holder while no board host ran: alive (its pty host kept it: its claims get
 * grace), exited (its end was seen, or it is gone with the pty host that ran it: `agent-exited`), or unknown
 * (it ran in the board host's own process and ended with it: `host-restarted`).
 */
export type HolderFate = 'alive' | 'exited' | 'unknown';

export interface Holders {
  fateOf(agentId: string): HolderFate;
}

export const BoardServiceConstants = {
  /** Events kept in memory for windows that open: a window asks for 300, so 1,000 leaves room and costs
   *  ~200 KB. */
  recentEvents: 1000,
} as const;

/**
 * The board stopped taking writes because its journal failed (disk full, folder gone read-only, I/O error).
 * The in-memory board may hold changes that never reached the disk; none of them was published or
 * acknowledged, and none will be.
 */
export class BoardReadOnlyError extends Error {
  readonly code = 'read-only';
  constructor(override readonly cause: Error) {
    super(`the board is read-only: writing its journal failed (${cause.message}). Nothing after the last saved change was kept; free the disk or fix the folder, then restart Forkbench.`);
    this.name = 'BoardReadOnlyError';
  }
}

