/**
 * What the PostgreSQL board's bench (pgBoardBench.ts) and its host threads (pgHostThread.ts) share: the load
 * (agents, their fenced writes, the goal's rate and its schedule) and the meter on each host's pool.
 */
import pg from 'pg';
import { Limits } from '../src-shared/board/limits.js';
import type { Result } from '../src-shared/board/result.js';
import type { BoardService } from '../src-main/board/boardService.js';
import { PgBoard } from '../src-main/board/pg/pgBoard.js';

/** Agents writing at once: a busy shared board (tens of agents on a few machines), each waiting for its
 *  answer before its next call, as the CLI does. */
export const AGENTS = 100;
/** The goal's rate: fenced writes a second offered to the board, for the latency at that load. */
export const PACED_RATE = 1_000;
/** How long that rate is offered: 5,000 writes, 13 claims an agent (its 13 notes within the write burst). */
export const PACED_MS = 5_000;
/** Lead time before the first paced write is due, so the schedule starts on an idle board. */
export const PACED_START_MS = 50;
/** Connections per host: one deciding transaction at a time, plus the follower's poll and the lease's
 *  renewal; more would only sit idle. */
export const POOL_MAX = 4;

export type Op = 'renew' | 'note' | 'done';

/** What one host's connections did, counted at its pool. */
export class PoolMeter {
  queries = 0;
  /** Statements sent while none was awaited on their connection: pipelined ones share a round trip. */
  roundTrips = 0;
  commits = 0;
  /** How long each transaction held the board's lock, as this host saw it: from the answer to the locking
   *  statement to the answer to its COMMIT (what another host waits for). */
  readonly lockHeld: number[] = [];
  /** How long each transaction waited for the board's lock: from BEGIN sent (the lock behind it, pipelined)
   *  to the locking statement's answer (another host's hold, and one round trip). */
  readonly lockWait: number[] = [];
  /** The lock held, in two parts (the read under it is answered with the lock, in the same round trip): this
   *  host's own work (the read's answer to the last round trip sent: deciding, and this process's event loop),
   *  and that round trip (the server's insert, its WAL flush, the answer's way back). */
  readonly underLockClient: number[] = [];
  readonly underLockCommit: number[] = [];
  /** Keyed writes per deciding transaction, as its reads of keys carry them. */
  readonly keyedBatches: number[] = [];
  readonly byStatement = new Map<string, { n: number; ms: number; all: number[] }>();

  watch(pool: pg.Pool): void {
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...a: unknown[]) => unknown;
      let inFlight = 0;
      let lockedAt: number | null = null;
      // A deciding transaction's moments on this connection (transact's two pipelined round trips).
      let begunAt: number | null = null;
      let readAt: number | null = null;
      let commitSentAt: number | null = null;
      let keyed = 0;
      (client as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
        const text = typeof a[0] === 'string' ? a[0] : ((a[0] as { text?: string } | undefined)?.text ?? '?');
        this.queries++;
        if (inFlight++ === 0) this.roundTrips++;
        if (text === 'COMMIT') this.commits++;
        const t0 = performance.now();
        if (text.startsWith('BEGIN; SET LOCAL')) {
          begunAt = t0;
          keyed = 0;
        }
        // The keys a deciding transaction reads under the lock (rowsAndKeys) and those of the writes that joined
        // it later (keysUnseen): each statement's first array parameter is the agents of its keys.
        const keyAgents = begunAt !== null && text.includes('FROM forkbench.write_keys') && Array.isArray(a[1]) ? (a[1] as unknown[]).find((v) => Array.isArray(v)) : undefined;
        if (Array.isArray(keyAgents)) keyed += keyAgents.length;
        // The last round trip of a deciding transaction: the late joiners' check, the append, then COMMIT.
        if (commitSentAt === null && (text.startsWith('SELECT 1 / (count(*)') || text.startsWith('WITH ev AS') || text === 'COMMIT')) commitSentAt = t0;
        const settled = (ok: boolean) => {
          const t1 = performance.now();
          inFlight--;
          if (!ok) {
            lockedAt = begunAt = readAt = commitSentAt = null;
            return;
          }
          this.time(text, t1 - t0);
          if (text.includes('FOR UPDATE')) {
            lockedAt = t1;
            if (begunAt !== null) this.lockWait.push(t1 - begunAt);
          }
          if (text.startsWith('(SELECT seq, body, NULL')) readAt = t1;
          if (text === 'COMMIT' && lockedAt !== null) {
            this.lockHeld.push(t1 - lockedAt);
            if (keyed) this.keyedBatches.push(keyed);
            if (readAt !== null && commitSentAt !== null) {
              this.underLockClient.push(commitSentAt - readAt);
              this.underLockCommit.push(t1 - commitSentAt);
            }
          }
          if (text === 'COMMIT') lockedAt = begunAt = readAt = commitSentAt = null;
        };
        // pg's Pool.query (the host lease's renewal) passes a callback and gets no promise back: count its end too.
        const cb = a.length && typeof a[a.length - 1] === 'function' ? (a[a.length - 1] as (...r: unknown[]) => void) : null;
        if (cb) a[a.length - 1] = (err: unknown, ...rest: unknown[]) => (settled(!err), cb(err, ...rest));
        const r = query(...a);
        if (r && typeof (r as Promise<unknown>).then === 'function') (r as Promise<unknown>).then(() => settled(true), () => settled(false));
        return r;
      };
    });
  }

  private time(text: string, ms: number): void {
    const k = text.replace(/\s+/g, ' ').slice(0, 70);
    const s = this.byStatement.get(k) ?? { n: 0, ms: 0, all: [] };
    s.n++;
    s.ms += ms;
    s.all.push(ms);
    this.byStatement.set(k, s);
  }

  reset(): void {
    this.queries = 0;
    this.roundTrips = 0;
    this.commits = 0;
    this.lockHeld.length = 0;
    this.lockWait.length = 0;
    this.underLockClient.length = 0;
    this.underLockCommit.length = 0;
    this.keyedBatches.length = 0;
    this.byStatement.clear();
  }
}

export function must<T>(r: Result<T>, what: string): T {
  if (!r.ok) throw new Error(`${what} refused: ${r.error.code}: ${r.error.message}`);
  return r.value;
}

export type Agent = { id: string; host: BoardService };

/** Each agent claims `n` tasks from `open` (taken from its front), one call at a time, all agents at once. */
export async function claimAll(agents: Agent[], open: string[], n: number): Promise<Array<Array<{ task: string; token: number }>>> {
  // Each agent holds its share at once: a person's setting past the default claim limit (3).
  if (agents[0]) must(await agents[0].host.run((e) => e.setSettings({ claimLimit: Limits.maxClaimLimit })), 'claim limit');
  return Promise.all(
    agents.map(async (a) => {
      const mine: Array<{ task: string; token: number }> = [];
      for (let j = 0; j < n; j++) {
        const task = open.shift() as string;
        mine.push({ task, token: must(await a.host.run((e) => e.claim(a.id, task)), `claim ${task}`).token });
      }
      return mine;
    }),
  );
}

/** The fenced cycle of one claim: every write with the agent's token and a fresh key (the CLI makes one per call). */
export const CYCLE: readonly Op[] = ['renew', 'note', 'renew', 'done'];
let keys = 0;
export function fencedWrite(a: Agent, task: string, token: number, op: Op): Promise<unknown> {
  const key = `k-${++keys}`;
  return a.host
    .runKeyed(
      { agentId: a.id, key, hash: key },
      (e) => (op === 'renew' ? e.renew(a.id, task, token) : op === 'note' ? e.note(a.id, task, 'progress: step done, tests pass', token) : e.done(a.id, task, token)),
      (v) => v,
    )
    .then((r) => must(r.result, `${op} ${task}`));
}


/** Each agent claims its tasks, in order, one call at a time, all agents at once: its claims and their tokens. */
export function claimTasks(board: BoardService, agents: ReadonlyArray<{ id: string; tasks: readonly string[] }>): Promise<Array<Array<{ task: string; token: number }>>> {
  return Promise.all(
    agents.map(async (a) => {
      const mine: Array<{ task: string; token: number }> = [];
      for (const task of a.tasks) mine.push({ task, token: must(await board.run((e) => e.claim(a.id, task)), `claim ${task}`).token });
      return mine;
    }),
  );
}

/** One host's board, its pool and the meter on that pool. */
export interface Host {
  board: PgBoard;
  pool: pg.Pool;
  meter: PoolMeter;
}

/** A host on the board `name` in the database at `url`: a pool of its own, metered, as another machine. */
export async function openHost(url: string, name: string, hostId: string, dir: string, hostLease?: { renewMs: number; lifetimeMs: number }): Promise<Host> {
  const pool = new pg.Pool({ connectionString: url, max: POOL_MAX, pipeline: true });
  pool.on('error', () => undefined);
  const meter = new PoolMeter();
  meter.watch(pool);
  const board = await PgBoard.open({
    pool,
    listenClient: () => new pg.Client({ connectionString: url }),
    name,
    dir,
    hostId,
    hostName: hostId,
    threadId: name,
    goal: 'bench',
    hostLease,
    warn: () => undefined,
  });
  return { board, pool, meter };
}

/** Fenced writes each agent makes at the goal's rate for PACED_MS. */
export const PACED_PER_AGENT = Math.round((PACED_RATE * PACED_MS) / 1000 / AGENTS);

/**
 * The goal's rate, offered: agent number `k` of AGENTS makes its j-th write when due, at
 * t0 + (j * AGENTS + k) / PACED_RATE s, so all AGENTS agents together (on one host or on several) offer
 * PACED_RATE writes a second. A write's latency counts from when it was due, so a write that waited behind its
 * agent's previous one counts that wait too (no coordinated omission). `t0` is on this thread's
 * performance.now(). `answered` hears of each write as it is answered.
 */
export async function onSchedule(
  agents: ReadonlyArray<{ agent: Agent; k: number; held: ReadonlyArray<{ task: string; token: number }> }>,
  t0: number,
  answered: (agent: Agent, task: string, op: Op, at: number) => void = () => undefined,
): Promise<number[]> {
  const latencies: number[] = [];
  await Promise.all(
    agents.map(async ({ agent, k, held }) => {
      for (let j = 0; j < PACED_PER_AGENT; j++) {
        const due = t0 + ((j * AGENTS + k) * 1000) / PACED_RATE;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const { task, token } = held[Math.floor(j / CYCLE.length)] as { task: string; token: number };
        const op = CYCLE[j % CYCLE.length] as Op;
        await fencedWrite(agent, task, token, op);
        const now = performance.now();
        latencies.push(now - due);
        answered(agent, task, op, now);
      }
    }),
  );
  return latencies;
}
