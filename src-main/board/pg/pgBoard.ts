import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import type { EventPage, EventPageQuery } from '../../../src-shared/board/eventPage.js';
import { copyBoard, emptyBoard, type Board } from '../../../src-shared/board/reducer.js';
import { reject, type Result } from '../../../src-shared/board/result.js';
import { Emitter, type Disposable } from '../../../src-shared/lifecycle/emitter.js';
import { LeaseEngine } from '../leaseEngine.js';
import { firstOutcome, outcomeToKeep, WriteKeys } from '../writeKeys.js';
import { DeadlineTimer, DurableLog, graceOnOpen, keyedResult, resumeGrace } from '../storeCore.js';
import { type BoardMembership, type BoardService, type Holders, type KeyedOutcome, type PeerAgent, type WriteKey } from '../boardService.js';
import { append, boardIdFor, eventsAfter, eventsBefore, eventsOfTask, firstEvent, inOrder, keyId, keysOf, KeySeenError, keysUnseen, lockTimeAndLease, rowsAfter, rowsAndKeys, type StoredKey, type StoredRow } from './boardSql.js';
import { checkStoredEvent, type StoredEventVerdict } from '../../../src-shared/board/storedEvents.js';
import { Quarantine } from '../quarantine.js';
import { ServerClock } from './serverClock.js';
import { BoardFollower, type ListenClientFactory } from './boardFollower.js';
import { HostLease, HostLeaseTimes, lapsedHosts, type HostLeaseTiming, type LapsedHost } from './hostLease.js';
import { hostNameChoices, HostNameTakenError } from './hostName.js';
import { HOST_NAME_INDEX } from './schema.js';
import { migrate } from './migrate.js';
import { extendHosts, outageAfterMs, quietMs } from './outage.js';

export interface PgBoardOptions {
  /** Connections for deciding transactions and reads. */
  pool: Pool;
  /** End the pool when the board closes (it was made for this board alone). */
  ownsPool?: boolean;
  /** A connection of its own for LISTEN (a pooler in transaction mode cannot LISTEN: then polling alone). */
  listenClient?: ListenClientFactory;
  /** The board's name: every host that opens this name shares one board. */
  name: string;
  /** This host's data folder for the Thread (agents' records; the board itself is in the database). */
  dir: string;
  /** This host: stable across its restarts (its agents are known by it); its name is for people. */
  hostId: string;
  /** The machine's name: this host's name on the board is it with a short tag of the host id (hostName.ts). */
  hostName: string;
  /** The name a person chose for this host (`serve --host-name`): taken as it is, or refused if another host
   *  of the board has it. */
  hostNameChosen?: string;
  /** For a new board: its Thread id and goal. */
  threadId?: string;
  goal?: string;
  /** Which of this host's agents are still there as it opens (kept by its pty host). */
  holders?: Holders;
  /** The board's time for decisions; by default the database server's clock (tests inject a manual one). */
  decisionTime?: () => number;
  /** This host's monotonic clock, for estimates between transactions (tests skew it). */
  localClock?: () => number;
  hostLease?: HostLeaseTiming;
  /** How often to look at the board's head when no wake-up came: the safety net under LISTEN. */
  pollMs?: number;
  warn?: (message: string) => void;
}

/**
 * Decisions a transaction holds at most: a burst of writes from many agents shares one commit (and one
 * fsync), and no transaction holds the board's lock for long.
 */
const MAX_BATCH = 200;

/**
 * How long the server lets a transaction of this host sit idle before ending it: a third of the host lease, so
 * a host stopped with the board's lock held frees it well before its lease lapses and another host ends its
 * claims; never under 2 s, which no healthy host comes near between two statements even on a loaded machine
 * (a transaction is a few statements sent back to back), so a slow host is not cut off.
 */
const IDLE_IN_TRANSACTION_FLOOR_MS = 2_000;

function idleInTransactionMs(lifetimeMs: number): number {
  return Math.max(IDLE_IN_TRANSACTION_FLOOR_MS, Math.floor(lifetimeMs / 3));
}

/** The shared board could not be reached, or this host may no longer act on it: nothing was done. */
export class BoardUnavailableError extends Error {
  readonly code = 'board-unavailable';
  constructor(message: string) {
    super(message);
    this.name = 'BoardUnavailableError';
  }
}

/** One decision waiting for the next transaction. */
interface Pending {
  readonly key?: WriteKey;
  /** Decide at the board's position, on the server's clock. Returns the answer, and the outcome to keep under
   *  the key (undefined: keep none). */
  decide(engine: LeaseEngine): { answer: unknown; keep?: Result<unknown> };
  /** Reads or writes of its own inside the transaction, before any decision (the host sweep's). */
  prepare?(tx: PoolClient): Promise<void>;
  /** Joining the board as a new incarnation: the one transaction a host without a live lease may run. */
  readonly join?: boolean;
  /** Leaving the board as it closes: the one transaction a closing board still runs. */
  readonly leave?: boolean;
  /** The key's first outcome was found: answer with it, decide nothing. */
  replayed?(outcome: Result<unknown>): unknown;
  resolve(v: unknown): void;
  /** The board was unavailable, or (a join) this host's name is another's: nothing was done. */
  fail(err: BoardUnavailableError | HostNameTakenError): void;
}

/**
 * A Thread's board kept in PostgreSQL and shared by every host that opens its name. Each host runs the same
 * lease engine on its own copy of the board; the database gives what one process cannot: a single order of
 * events, durability, an atomic step and one clock.
 *
 * A write is one short transaction: take the board's row lock, catch up with what other hosts appended, read
 * the server's time, decide with the engine, append the events at the next positions, commit, and only then
 * publish and answer. Waiting writes of this host share a transaction. A failed transaction leaves nothing:
 * the engine goes back to the last committed board and the callers are told `board-unavailable`.
 */
export class PgBoard implements BoardService, BoardMembership {
  readonly engine: LeaseEngine;
  readonly clock: ServerClock;
  private readonly lost = new Emitter<Error>();
  private readonly back = new Emitter<void>();
  private readonly queue: Pending[] = [];
  /** The loop that runs this host's transactions one at a time, while it runs. */
  private draining: Promise<void> | null = null;
  private wantFollow = false;
  private closed = false;
  /** The close under way (shut), from its first call. */
  private closing: Promise<void> | null = null;
  /** While a transaction decides: the events it makes, published only after its commit. */
  private capture: BoardEvent[] | null = null;
  /** Keys of refusals past the agent's refusals' quota, not stored in the database (runKeyed's decide). */
  private readonly unstoredRefusals = new WriteKeys(() => this.clock.now());
  /** What is committed (storeCore.ts): the board the engine returns to when a transaction fails, and the
   *  latest events a window opens with. */
  private readonly durable: DurableLog;
  private unavailable: BoardUnavailableError | null = null;
  /** One timer on the earliest deadline as this host estimates the server's time; the sweep it runs decides
   *  on the server's time, so a timer that fires early or late changes nothing. */
  private readonly timer: DeadlineTimer;
  /** This host's agents: its own signals (shutdown, grace) and its lease concern only them. */
  private readonly mine = new Set<string>();
  /** This host's agents not yet recorded in the database, and those gone since: written by the next transaction. */
  private readonly unregistered = new Map<string, { name: string; profile: string }>();
  private readonly departed = new Set<string>();
  private peerList: PeerAgent[] = [];
  private readonly peersChanged = new Emitter<void>();
  private readonly lapsedEvents = new Emitter<number>();
  private incarnation = randomUUID();
  private follower: BoardFollower | null = null;
  private lease: HostLease | null = null;
  private rejoining: Promise<void> | null = null;
  private readonly idleMs: number;
  /** How long the board must be quiet to count as an outage (outage.ts). */
  private readonly outageMs: number;
  /** The names this host may take on the board, in order, and the one it took as it joined (hostName.ts). */
  private readonly nameChoices: string[];
  private nameOnBoard: string;
  /** This host's lease timing, defaults filled in. */
  private readonly timing: typeof HostLeaseTimes;
  readonly quarantine: Quarantine;

  static async open(opts: PgBoardOptions): Promise<PgBoard> {
    // A connection lost between two statements of a transaction (no query in flight) is reported as an
    // 'error' event on its client; the next statement fails and says so, so the event itself has nothing to add.
    opts.pool.on('connect', (client) => client.on('error', () => undefined));
    const c = await opts.pool.connect();
    let boardId: string;
    try {
      await migrate(c);
      boardId = await boardIdFor(c, opts.name);
    } finally {
      c.release();
    }
    const b = new PgBoard(opts, boardId);
    try {
      await b.start();
    } catch (err) {
      await b.close();
      throw err;
    }
    return b;
  }

  private constructor(
    private readonly opts: PgBoardOptions,
    readonly boardId: string,
  ) {
    this.clock = new ServerClock(opts.localClock);
    this.timing = { ...HostLeaseTimes, ...opts.hostLease };
    this.idleMs = idleInTransactionMs(this.timing.lifetimeMs);
    this.outageMs = outageAfterMs(this.timing);
    this.quarantine = new Quarantine(opts.dir, (m) => this.warn(m));
    this.nameChoices = hostNameChoices({ machine: opts.hostName, hostId: opts.hostId, chosen: opts.hostNameChosen });
    this.nameOnBoard = this.nameChoices[0]!;
    this.engine = new LeaseEngine(this.clock, emptyBoard(), (id) => this.mine.has(id), { id: opts.hostId, name: this.nameOnBoard });
    this.durable = new DurableLog(copyBoard(this.engine.state));
    this.timer = new DeadlineTimer(this.clock, () => {
      if (this.closed) return;
      this.apply((e) => e.sweep()).catch(() => undefined);
    });
    this.engine.onEvent((e) => this.capture?.push(e));
  }

  private async start(): Promise<void> {
    const c = await this.opts.pool.connect();
    try {
      // The whole log, once: the board, and the latest events a window opens with (nobody listens yet).
      await this.followWith(c, false);
      const own = await c.query<{ agent_id: string }>('SELECT agent_id FROM forkbench.agents WHERE board_id = $1 AND host_id = $2', [this.boardId, this.opts.hostId]);
      for (const r of own.rows) this.mine.add(r.agent_id);
    } finally {
      c.release();
    }
    // Joining is one transaction: this host's lease (a new incarnation), a new board's first event, and the
    // fate of this host's agents' claims from before (kept agents get grace, gone ones lose them now).
    await this.join((e) => {
      if (e.state.seq === 0) e.createThread(this.opts.threadId ?? randomUUID(), this.opts.goal ?? '');
      else graceOnOpen(e, this.opts.holders);
    });
    this.follower = new BoardFollower({
      pool: this.opts.pool,
      listen: this.opts.listenClient,
      boardId: this.boardId,
      pollMs: this.opts.pollMs,
      behind: (head) => head > this.engine.state.seq,
      wake: () => this.requestFollow(),
      warn: this.warn,
    });
    this.lease = new HostLease({
      pool: this.opts.pool,
      boardId: this.boardId,
      hostId: this.opts.hostId,
      incarnation: () => this.incarnation,
      timing: this.timing,
      lapsed: () => void this.rejoin(),
      // Any transaction makes up for an outage first (transact); this one has nothing else to do.
      outageOver: () => this.apply(() => undefined),
      othersLapsed: () => void this.sweepHosts().catch(() => undefined),
      reachable: (ok, err) => (ok ? this.available() : this.markUnavailable(err ?? new Error("no answer"))),
      warn: this.warn,
    });
    this.arm();
  }

  private get warn(): (m: string) => void {
    return this.opts.warn ?? console.warn;
  }

  /** This host's name on the board, as it took it when it joined: unique among the board's live hosts. */
  get hostName(): string {
    return this.nameOnBoard;
  }

  /**
   * Take this host's lease as a new incarnation and run `then` in the same transaction. Hosts whose lease
   * lapsed are swept first (their claims end, each said once), so a name they held is free; then this host
   * takes the first of its names that no other live host has: the database's unique index decides, so two
   * hosts joining at once cannot both take one. A name a person chose is the only one: taken, the join is
   * refused (HostNameTakenError) and nothing of it is written.
   */
  private join(then: (e: LeaseEngine) => void): Promise<unknown> {
    let swept: LapsedHost[] = [];
    let name = this.nameOnBoard;
    return this.enqueue({
      join: true,
      prepare: async (tx) => {
        swept = await lapsedHosts(tx, this.boardId, this.opts.hostId);
        name = await this.takeName(tx);
      },
      decide: (e) => {
        this.nameOnBoard = name;
        e.here = { id: this.opts.hostId, name };
        for (const h of swept) e.hostGone(h, 'lost', h.agents, h.running);
        return { answer: then(e) };
      },
    });
  }

  /** This host's row, under the first of its names the unique index lets it take (each try a savepoint, so a
   *  name found taken undoes only that try). */
  private async takeName(tx: PoolClient): Promise<string> {
    for (const name of this.nameChoices) {
      await tx.query('SAVEPOINT host_name');
      try {
        await tx.query(
          `INSERT INTO forkbench.hosts (board_id, host_id, incarnation, name, expires_at)
           VALUES ($1, $2, $3, $4, clock_timestamp() + $5 * interval '1 millisecond')
           ON CONFLICT (board_id, host_id) DO UPDATE SET incarnation = excluded.incarnation, name = excluded.name, expires_at = excluded.expires_at, renewed_at = clock_timestamp()`,
          [this.boardId, this.opts.hostId, this.incarnation, name, this.timing.lifetimeMs],
        );
        await tx.query('RELEASE SAVEPOINT host_name');
        return name;
      } catch (err) {
        const e = err as { code?: string; constraint?: string };
        if (e.code !== UNIQUE_VIOLATION || e.constraint !== HOST_NAME_INDEX) throw err;
        await tx.query('ROLLBACK TO SAVEPOINT host_name');
      }
    }
    throw new HostNameTakenError(this.nameChoices.at(-1)!, this.opts.name);
  }

  /**
   * This host's lease lapsed (it was stopped, or cut off): another host may already have ended its agents'
   * claims. It acts for nobody until it has joined again as a new incarnation, which ends whatever claims its
   * agents still held under the old one (`host-lost`): they were held on a promise this host could not keep.
   */
  private rejoin(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.rejoining ??= this.joinAgain().finally(() => {
      this.rejoining = null;
    });
    return this.rejoining;
  }

  private async joinAgain(): Promise<void> {
    this.incarnation = randomUUID();
    this.warn(`forkbench: this host's lease on the shared board lapsed; its agents' claims are ended (host-lost) and it joins again`);
    let ended = 0;
    const joined = await this.join((e) => {
      for (const id of this.mine) ended += e.releaseAllHeldBy(id, 'host-lost').length;
    }).then(
      () => true,
      (err: Error) => {
        // Its row was swept while it was away, and a host that came since took the name a person chose for it.
        if (err instanceof HostNameTakenError) this.warn(`forkbench: this host cannot join the shared board again: ${err.message}`);
        return false;
      },
    );
    if (joined) this.lapsedEvents.fire(ended);
  }

  /** End the claims of every host whose lease lapsed, and forget those hosts: one transaction, any host; the
   *  board says each one once (host-gone), for every other host's windows. */
  private sweepHosts(): Promise<unknown> {
    let gone: LapsedHost[] = [];
    return this.enqueue({
      prepare: async (tx) => {
        gone = await lapsedHosts(tx, this.boardId, this.opts.hostId);
      },
      decide: (e) => {
        for (const h of gone) e.hostGone(h, 'lost', h.agents, h.running);
        return { answer: gone.length };
      },
    });
  }

  /**
   * This host leaves the board vouching for no claim: its row goes (other hosts stop listing its agents now,
   * not when its lease would have lapsed, and its name is free) and the board says so once (host-gone, left),
   * in the same transaction. Its agents are recorded gone: a restart that takes some back records them again.
   */
  private leaveBoard(): Promise<unknown> {
    let running = 0;
    return this.enqueue({
      leave: true,
      prepare: async (tx) => {
        running = (await tx.query('UPDATE forkbench.agents SET gone = true WHERE board_id = $1 AND host_id = $2 AND NOT gone', [this.boardId, this.opts.hostId])).rowCount ?? 0;
        await tx.query('DELETE FROM forkbench.hosts WHERE board_id = $1 AND host_id = $2 AND incarnation = $3', [this.boardId, this.opts.hostId, this.incarnation]);
      },
      decide: (e) => ({ answer: e.hostGone({ id: this.opts.hostId, name: this.nameOnBoard }, 'left', [...this.mine], running) }),
    });
  }

  get state(): Readonly<Board> {
    return this.engine.state;
  }

  get dir(): string {
    return this.opts.dir;
  }

  get sharedName(): string {
    return this.opts.name;
  }

  /** This board is shared: this host's membership is the board's own (hostAgent, peers, ...). */
  get membership(): BoardMembership {
    return this;
  }

  onEvent(fn: (e: BoardEvent) => void): Disposable {
    return this.durable.onEvent(fn);
  }

  onReadOnly(fn: (err: Error) => void): Disposable {
    return this.lost.event(fn);
  }

  /** The database answers again after it was lost. */
  onAvailable(fn: () => void): Disposable {
    return this.back.event(fn);
  }

  get readOnlyReason(): string | null {
    return this.unavailable?.message ?? null;
  }

  /** This host runs this agent: its claims are this host's to vouch for, and end if this host is lost. */
  hostAgent(agentId: string, about: { name: string; profile: string } = { name: agentId, profile: '' }): void {
    this.mine.add(agentId);
    this.departed.delete(agentId);
    this.unregistered.set(agentId, about);
  }

  runsHere(agentId: string): boolean {
    return this.mine.has(agentId);
  }

  agentGone(agentId: string): void {
    if (!this.mine.has(agentId)) return;
    this.unregistered.delete(agentId);
    this.departed.add(agentId);
    this.requestFollow();
  }

  onHostLapsed(fn: (ended: number) => void): Disposable {
    return this.lapsedEvents.event(fn);
  }

  peers(): readonly PeerAgent[] {
    return this.peerList;
  }

  onPeers(fn: () => void): Disposable {
    return this.peersChanged.event(fn);
  }

  /** Other live hosts' agents, read again: a change is told to whoever lists them. */
  private async lookAtPeers(c: PoolClient): Promise<void> {
    const r = await c.query<{ agent_id: string; name: string; profile: string; host: string }>(
      `SELECT a.agent_id, a.name, a.profile, h.name AS host FROM forkbench.agents a
         JOIN forkbench.hosts h ON h.board_id = a.board_id AND h.host_id = a.host_id
        WHERE a.board_id = $1 AND a.host_id <> $2 AND NOT a.gone AND h.expires_at > clock_timestamp()
        ORDER BY h.name, a.name`,
      [this.boardId, this.opts.hostId],
    );
    const next = r.rows.map((row) => ({ id: row.agent_id, name: row.name, profile: row.profile, host: row.host }));
    if (JSON.stringify(next) === JSON.stringify(this.peerList)) return;
    this.peerList = next;
    this.peersChanged.fire();
  }

  async run<T>(op: (engine: LeaseEngine) => Result<T>): Promise<Result<T>> {
    try {
      return (await this.enqueue({ decide: (e) => ({ answer: op(e) }) })) as Result<T>;
    } catch (err) {
      if (err instanceof BoardUnavailableError) return reject('board-unavailable', err.message);
      throw err;
    }
  }

  async runKeyed<T, A>(k: WriteKey, op: (engine: LeaseEngine) => Result<T>, answer: (v: T) => A): Promise<KeyedOutcome<A>> {
    try {
      return (await this.enqueue({
        key: k,
        replayed: (outcome) => ({ replayed: true, result: outcome }),
        decide: (e) => {
          const r = keyedResult(op(e), answer);
          return { answer: { replayed: false, result: r }, keep: outcomeToKeep(r) };
        },
      })) as KeyedOutcome<A>;
    } catch (err) {
      if (err instanceof BoardUnavailableError) return { replayed: false, result: reject('board-unavailable', err.message) };
      throw err;
    }
  }

  async replay(k: WriteKey): Promise<Result<unknown> | undefined> {
    // The write this look-up goes before is not done when it fails: the caller is told so, as for any other
    // write the database did not take (issue 45).
    const found = (
      await this.read(
        (c) => keysOf(c, this.boardId, [k]),
        (m) => `the shared board's database did not answer (${m}); nothing was done: send it again`,
      )
    ).get(keyId(k.agentId, k.key));
    return found && firstOutcome(found, k.key, k.hash);
  }

  async apply<T>(op: (engine: LeaseEngine) => T): Promise<T> {
    return (await this.enqueue({ decide: (e) => ({ answer: op(e) }) })) as T;
  }

  resumeGrace(isAlive: (agentId: string) => boolean): Promise<{ extended: number; released: number }> {
    return resumeGrace((op) => this.apply(op), isAlive);
  }

  async log(): Promise<BoardEvent[]> {
    return this.read((c) => eventsAfter(c, this.boardId, 0, Number.MAX_SAFE_INTEGER), LOG_UNREAD);
  }

  async taskLog(taskId: string): Promise<BoardEvent[]> {
    return this.read((c) => eventsOfTask(c, this.boardId, taskId), LOG_UNREAD);
  }

  logTail(n: number): BoardEvent[] {
    return this.durable.tail(n);
  }

  /** A page of forkbench.events, newest first: plain reads on a pooled connection, outside the write queue
   *  and the board's lock. The head is what this host has followed, or further if the page saw further. */
  async history(q: EventPageQuery): Promise<EventPage> {
    return this.read(
      async (c) => {
        const events = await eventsBefore(c, this.boardId, q.before ?? null, q.limit, q.taskId);
        const first = await firstEvent(c, this.boardId);
        return { events, head: Math.max(this.engine.state.seq, events[0]?.seq ?? 0), keptFrom: first && { seq: first.seq, at: first.at } };
      },
      (m) => `the board's history could not be read from the database: ${m}`,
    );
  }

  /** Once, however many callers ask: a second close waits for the first. */
  close(): Promise<void> {
    this.closing ??= this.shut();
    return this.closing;
  }

  private async shut(): Promise<void> {
    // A host that leaves vouching for no claim (a stop released them) ends its lease at once and says so
    // (leaveBoard). One that leaves agents holding claims (kept in its pty host) keeps it: a restart within the
    // lease finds them still its own, and one that does not come back is lost. One that never joined (its
    // open failed) has nothing to end.
    const vouches = [...this.mine].some((id) => this.engine.claimsOf(id).length > 0);
    const leaving = this.lease !== null && !vouches && !this.unavailable && !this.rejoining;
    // No renewal from here on: one after the row is gone would find this host lapsed and join it again.
    await this.lease?.dispose();
    if (leaving) await this.leaveBoard().catch(() => undefined);
    this.closed = true;
    this.timer.dispose();
    this.quarantine.dispose();
    await this.follower?.dispose();
    // Decisions already queued are told, not dropped silently; one in flight finishes first.
    for (const p of this.queue.splice(0)) p.fail(new BoardUnavailableError('the board is closed'));
    await this.draining;
    if (this.opts.ownsPool) await this.opts.pool.end().catch(() => undefined);
  }

  /** A plain read on a pooled connection, outside the write queue; a database that does not answer is said as
   *  `board-unavailable` (`failed` words it), never in the driver's words (a connection the server dropped says
   *  "Connection terminated unexpectedly"). */
  private async read<T>(fn: (c: PoolClient) => Promise<T>, failed: (driverSaid: string) => string): Promise<T> {
    const c = await this.opts.pool.connect().catch((err: Error) => {
      throw this.markUnavailable(err);
    });
    let broken: Error | undefined;
    try {
      return await fn(c);
    } catch (err) {
      broken = err as Error;
      throw new BoardUnavailableError(failed((err as Error).message));
    } finally {
      // A failed connection is not put back in the pool for the next caller.
      c.release(broken);
    }
  }

  private enqueue(p: Omit<Pending, 'resolve' | 'fail'>): Promise<unknown> {
    // A write that races the board's close (a window's click as the Thread closes) is refused like any other
    // the store could not take, not failed with words of its own; only the close's own leave still runs.
    if (this.closed || (this.closing && !p.leave)) return Promise.reject(new BoardUnavailableError('the board is closed; nothing was done'));
    return new Promise((resolve, fail) => {
      this.queue.push({ ...p, resolve, fail });
      this.drain();
    });
  }

  private requestFollow(): void {
    this.wantFollow = true;
    this.drain();
  }

  /** One transaction at a time from this host; whatever queued meanwhile goes into the next one. */
  private drain(): void {
    if (this.draining) return;
    this.draining = this.drainLoop().finally(() => {
      this.draining = null;
      // Queued after the loop's last look and before this: run it now.
      if (!this.closed && (this.queue.length || this.wantFollow)) this.drain();
    });
  }

  private async drainLoop(): Promise<void> {
    while (!this.closed && (this.queue.length || this.wantFollow)) {
      if (this.queue.length) await this.transact(this.nextBatch());
      else {
        this.wantFollow = false;
        await this.followAlone();
      }
    }
  }

  /**
   * A join goes alone and first: it is the one transaction a host without a live lease may run, and the
   * writes queued with it (sent while the lease was lapsed) are decided after it, under the new incarnation.
   * Batched with them, it failed with them, and a busy host could fail to join again and again.
   */
  private nextBatch(): Pending[] {
    const join = this.queue.findIndex((p) => p.join);
    return join >= 0 ? this.queue.splice(join, 1) : this.queue.splice(0, MAX_BATCH);
  }

  /**
   * The writes queued while this transaction waited for the board's lock, taken into it once the lock is held
   * rather than left for the next one: with two hosts, a host's next transaction waits out the other host's
   * whole hold first, so a write that missed this one waited about two holds more (issue 45: two hosts' p99).
   * Their keys were not in the read under the lock: they are decided as new, and keysUnseen aborts the
   * transaction if any was stored after all (a retry whose first try landed, here or on another host); it is
   * then decided again with every key read. Only plain writes join, from the front of the queue (so in order),
   * and never a join's or a leave's transaction, which go alone.
   */
  private lateJoiners(batch: readonly Pending[]): Pending[] {
    if (batch.some((p) => p.join || p.leave)) return [];
    let n = 0;
    while (batch.length + n < MAX_BATCH && n < this.queue.length) {
      const p = this.queue[n] as Pending;
      if (p.join || p.leave || p.prepare) break;
      n++;
    }
    return this.queue.splice(0, n);
  }

  /** Read what other hosts appended, outside any transaction: committed positions have no gaps. */
  private async followAlone(): Promise<void> {
    let c: PoolClient | null = null;
    try {
      c = await this.opts.pool.connect();
      await this.followWith(c, true);
      (await this.recordAgents(c))();
      await this.lookAtPeers(c);
      this.available();
      this.arm();
    } catch (err) {
      this.markUnavailable(err as Error);
    } finally {
      c?.release();
    }
  }

  /** Apply every event after this host's position and publish each (they are committed); `tell: false` at
   *  start, before anyone listens. */
  private async followWith(c: PoolClient, tell: boolean, head?: number): Promise<void> {
    while (head === undefined || this.engine.state.seq < head) {
      const batch = await rowsAfter(c, this.boardId, this.engine.state.seq);
      if (!batch.length) return;
      this.applyRows(batch, tell);
    }
  }

  /** Apply rows read from the log, in order, from this host's position on. */
  private applyRows(batch: readonly StoredRow[], tell: boolean): void {
    for (const row of batch) {
      const at = this.engine.state.seq;
      if (row.seq <= at) continue;
      // Committed positions up to the head have no gaps; one missing was deleted by hand. The board goes on
      // past it: waiting for a row that never comes would stop every host.
      if (row.seq > at + 1) this.setAside({ seq: at + 1, body: null }, { ok: false, kind: null, why: `position${row.seq - at > 2 ? `s #${at + 1}–#${row.seq - 1} are` : ' is'} missing from the log` }, row.seq - 1);
      const verdict = checkRow(row, this.engine.state);
      if (!verdict.ok) {
        this.setAside(row, verdict, row.seq);
        continue;
      }
      this.engine.follow(verdict.event);
      this.publish(verdict.event, tell);
    }
  }

  /**
   * What is stored at `row.seq` (up to `through`) is not applied: the board moves past it unchanged, and it is
   * kept aside with why (quarantine.ts), told once. Every host does the same with the same rows.
   */
  private setAside(row: { seq: number; body: string | null }, verdict: Extract<StoredEventVerdict, { ok: false }>, through: number): void {
    this.engine.passOver(through);
    this.durable.board.seq = through;
    this.quarantine.add({ seq: row.seq, kind: verdict.kind, why: verdict.why, store: 'database', body: row.body });
  }

  private publish(e: BoardEvent, tell = true): void {
    this.durable.publish(e, tell);
  }

  private async transact(batch: Pending[]): Promise<void> {
    let c: PoolClient | null = null;
    /** Rows found past the head and taken out (lockTimeAndLease): kept aside once that is committed. */
    let removed: { head: number; rows: StoredRow[] } = { head: 0, rows: [] };
    const answers: Array<() => void> = [];
    const made: BoardEvent[] = [];
    let outage: { by: number; hosts: number; claims: number } | null = null;
    try {
      c = await this.opts.pool.connect();
      const keyed = batch.filter((p) => p.key).map((p) => p.key as WriteKey);
      const client = c;
      // Sent at once (one round trip; inOrder): BEGIN, the lock, then what is read under it. The board is
      // locked from the lock's statement to COMMIT, and every other host waits that long: each round trip
      // taken out of it is taken out of every host's wait (issue 45: two hosts' p99).
      const [, locked, ahead] = await inOrder<[unknown, Awaited<ReturnType<typeof lockTimeAndLease>>, Awaited<ReturnType<typeof rowsAndKeys>>]>(c, [
        // A host stopped (SIGSTOP, a laptop lid) in the middle of its transaction would hold the board's lock
        // for as long as it sleeps, and every host would wait on it: the server ends such a transaction instead
        // (it rolls back; nothing of it was acknowledged). Set with BEGIN, in the same round trip.
        () => client.query(`BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${this.idleMs}`),
        () => lockTimeAndLease(client, this.boardId, this.opts.hostId, this.incarnation),
        // Runs once the lock is held (the server takes a pipeline's statements one after another), on a
        // snapshot taken then: every row up to the head, and the keys as committed.
        () => rowsAndKeys(client, this.boardId, this.engine.state.seq, keyed),
      ]);
      const { head, now, strays } = locked;
      let hostLive = locked.hostLive;
      removed = { head, rows: strays };
      this.applyRows(ahead.rows, true);
      // Under the lock nothing lands past head: reading up to it is reading everything (more than one batch
      // of rows behind, the rest now).
      if (head > this.engine.state.seq) await this.followWith(c, true, head);
      // The first transaction after an outage, whichever host runs it, moves every lease on by it (outage.ts),
      // before anything is judged by the clock: this host's own lease just below, then every claim.
      if (locked.quietMs > this.outageMs) {
        const quiet = await quietMs(c, this.boardId);
        if (quiet > this.outageMs) {
          const moved = await extendHosts(c, this.boardId, quiet, this.opts.hostId, this.incarnation);
          hostLive = moved.hostLive;
          outage = { by: quiet, hosts: moved.hosts, claims: 0 };
        }
      }
      if (!hostLive && !batch[0]?.join) {
        // The database says this host's lease is over: whatever it believes, it acts for nobody now.
        throw new HostLapsedError();
      }
      const agentsRecorded = await this.recordAgents(c);
      for (const p of batch) if (p.prepare) await p.prepare(c);
      // Last await before deciding: what queued since BEGIN was sent joins now (lateJoiners).
      const late = this.lateJoiners(batch);
      batch.push(...late);
      const lateKeys = late.filter((p) => p.key).map((p) => p.key as WriteKey);
      const stored = ahead.keys;
      // Refusals kept in memory only (unstoredRefusals), kept there once this transaction has committed: one it
      // rolls back, or decides again (KeySeenError), was told to nobody.
      const refusedHere = new WriteKeys(() => this.clock.now());
      this.clock.fix(this.opts.decisionTime?.() ?? now);
      const keep: StoredKey[] = [];
      this.capture = made;
      if (outage) outage.claims = this.engine.extendForOutage(this.clock.now() - outage.by, outage.by);
      this.engine.holdQuota();
      for (const p of batch) {
        const k = p.key;
        const seen = k && stored.get(keyId(k.agentId, k.key));
        const here = k && !seen ? refusedHere.lookup(k.agentId, k.key, k.hash) : null;
        const unstored = k && !seen ? (here?.found ? here : this.unstoredRefusals.lookup(k.agentId, k.key, k.hash)) : null;
        if (k && unstored?.found) {
          const outcome: Result<unknown> = 'reused' in unstored ? { ok: false, error: unstored.reused } : (unstored.outcome as Result<unknown>);
          answers.push(() => p.resolve(p.replayed ? p.replayed(outcome) : outcome));
          continue;
        }
        if (k && seen) {
          const outcome = firstOutcome(seen, k.key, k.hash);
          answers.push(() => p.resolve(p.replayed ? p.replayed(outcome) : outcome));
          continue;
        }
        const from = made.length;
        const d = p.decide(this.engine);
        // A refusal's key is stored only as its refusal is journaled (the agent's refusals' quota), as the
        // journal does: a loop of refused writes, each with a fresh key, would otherwise be a stored row each.
        // One past the quota is kept in this host's memory only: a retry here is answered the same refusal, and
        // elsewhere or after a restart it is decided again (it did nothing, so deciding it again can do nothing twice).
        const keepKey = !!k && !!d.keep && (d.keep.ok || made.slice(from).some((e) => e.kind === 'write-rejected') || this.engine.refusalJournaled(k.agentId));
        if (k && d.keep && !keepKey) refusedHere.put({ agent: k.agentId, key: k.key, hash: k.hash, at: this.clock.now(), outcome: d.keep });
        if (k && d.keep && keepKey) {
          const rec: StoredKey = { agent: k.agentId, key: k.key, hash: k.hash, outcome: d.keep };
          keep.push(rec);
          // The same key twice in one transaction: the second is a retry of the first.
          stored.set(keyId(k.agentId, k.key), rec);
        }
        answers.push(() => p.resolve(d.answer));
      }
      this.capture = null;
      // The append and COMMIT in one round trip (inOrder). A COMMIT behind a failed append rolls back, and the
      // append's error is what is thrown: nothing is answered unless both were answered, so never before COMMIT.
      // After an outage the append is written even with nothing in it: it is what ends the board's quiet. The
      // late joiners' keys, not read under the lock, are checked first in the same round trip (keysUnseen).
      await inOrder(client, [
        ...(lateKeys.length ? [() => keysUnseen(client, this.boardId, lateKeys)] : []),
        ...(made.length || keep.length || outage ? [() => append(client, this.boardId, made, keep)] : []),
        () => client.query('COMMIT'),
      ]);
      this.clock.release();
      this.engine.keepQuota();
      agentsRecorded();
      for (const r of refusedHere.records()) this.unstoredRefusals.put(r);
    } catch (err) {
      this.capture = null;
      this.clock.release();
      if (c) {
        await c.query('ROLLBACK').catch(() => undefined);
        // A late joiner's key found stored is the board's answer, not a broken connection: it goes back to the pool.
        c.release(err instanceof KeySeenError ? undefined : (err as Error));
        c = null;
      }
      if (err instanceof KeySeenError) {
        // A late joiner was a retry of a write the board already has. Nothing of this transaction happened;
        // its writes go back to the front of the queue, in order, and the next transaction reads all their keys.
        this.engine.rewind(this.durable.board);
        // A board closed meanwhile runs no more transactions (shut already told what was queued): told here.
        if (this.closed) for (const p of batch) p.fail(new BoardUnavailableError('the board is closed; nothing was done'));
        else this.queue.unshift(...batch);
        return;
      }
      // Nothing of this transaction happened: the engine goes back to the committed board, and nobody hears
      // of its events. (A COMMIT whose answer was lost may yet have landed: following the log brings it back,
      // and a retried key finds its first outcome.)
      this.engine.rewind(this.durable.board);
      const lapsed = err instanceof HostLapsedError;
      // A name another host has is this join's refusal, not the database's fault: the board stays available.
      const why = lapsed ? new BoardUnavailableError(err.message) : err instanceof HostNameTakenError ? err : this.markUnavailable(err as Error);
      for (const p of batch) p.fail(why);
      if (lapsed) void this.rejoin();
      return;
    } finally {
      c?.release();
    }
    for (const row of removed.rows) {
      const kind = (parsedKind(row.body) ?? '').slice(0, 40) || null;
      this.quarantine.add({ seq: row.seq, kind, why: `it was stored past the board's last event (#${removed.head}), where no host's write puts one, and taken out of the log`, store: 'database', body: row.body });
    }
    for (const e of made) this.publish(e);
    if (outage) this.warn(`forkbench: the shared board showed no sign of life for ${(outage.by / 1000).toFixed(1)} s (its database could not be reached); every lease that ran then was moved on by that long: ${outage.hosts} host${outage.hosts === 1 ? '' : 's'}, ${outage.claims} claim${outage.claims === 1 ? '' : 's'}`);
    this.available();
    for (const a of answers) a();
    this.arm();
  }

  /**
   * Write this host's agents that came or went since the last time; the function it returns forgets them as
   * written, to be called once that is committed (a rolled-back transaction leaves them for the next one).
   */
  private async recordAgents(c: PoolClient): Promise<() => void> {
    const registering = [...this.unregistered];
    const leaving = [...this.departed];
    if (registering.length)
      await c.query(
        `INSERT INTO forkbench.agents (board_id, agent_id, host_id, name, profile, gone)
         SELECT $1, a, $2, n, p, false FROM unnest($3::text[], $4::text[], $5::text[]) AS x(a, n, p)
         ON CONFLICT (board_id, agent_id) DO UPDATE SET host_id = excluded.host_id, name = excluded.name, profile = excluded.profile, gone = false`,
        [this.boardId, this.opts.hostId, registering.map(([id]) => id), registering.map(([, a]) => a.name), registering.map(([, a]) => a.profile)],
      );
    if (leaving.length) await c.query('UPDATE forkbench.agents SET gone = true WHERE board_id = $1 AND host_id = $2 AND agent_id = ANY($3::text[])', [this.boardId, this.opts.hostId, leaving]);
    return () => {
      for (const [id, about] of registering) if (this.unregistered.get(id) === about) this.unregistered.delete(id);
      for (const id of leaving) this.departed.delete(id);
    };
  }

  private markUnavailable(err: Error): BoardUnavailableError {
    if (this.unavailable) return this.unavailable;
    this.unavailable = new BoardUnavailableError(`the shared board's database cannot be reached (${err.message}); nothing was done: send it again (the CLI does, with its key)`);
    this.warn(`forkbench: ${this.unavailable.message}`);
    this.lost.fire(this.unavailable);
    return this.unavailable;
  }

  private available(): void {
    if (!this.unavailable) return;
    this.unavailable = null;
    this.warn(`forkbench: the shared board's database answers again`);
    this.back.fire();
    this.requestFollow();
  }

  /** The timer on the earliest deadline. */
  private arm(): void {
    if (this.closed) return;
    this.timer.arm(this.engine.nextDeadline());
  }
}

/** The kind a stored text names, if it is JSON that names one. */
function parsedKind(body: string): string | null {
  try {
    const kind = (JSON.parse(body) as { kind?: unknown } | null)?.kind;
    return typeof kind === 'string' ? kind : null;
  } catch {
    return null;
  }
}

/** A stored row as an event this board may apply, or why not (storedEvents.ts). */
function checkRow(row: StoredRow, board: Readonly<Board>): StoredEventVerdict {
  let raw: unknown;
  try {
    raw = JSON.parse(row.body);
  } catch {
    return { ok: false, kind: null, why: 'it is not JSON' };
  }
  return checkStoredEvent(raw, board, row.seq);
}

/** How a read of the board's log that the database did not answer is told. */
const LOG_UNREAD = (driverSaid: string): string => `the board's log could not be read from the database: ${driverSaid}`;

/** PostgreSQL's SQLSTATE for a unique index refusing a row. */
const UNIQUE_VIOLATION = '23505';

class HostLapsedError extends Error {
  constructor() {
    super("this host's lease on the shared board lapsed (it was stopped or cut off for too long); it acts for no agent until it has joined again");
  }
}
