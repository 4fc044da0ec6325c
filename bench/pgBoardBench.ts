/**
 * The board on PostgreSQL (issue 31) beside the journal, on a private server with durable commits (fsync on,
 * synchronous_commit on: a write is answered only after its WAL is flushed):
 * - fenced ops/s and latency (renew, note, done by agents holding claims, with their tokens and keys, many
 *   agents at once) at 10k tasks: the journal, PostgreSQL with one host, and two hosts on one board (each its
 *   own pool, as two machines would be);
 * - a claim made on host A seen on host B (A's answer to B's event: LISTEN/NOTIFY, then B's catch-up read);
 * - a host that stops (closed without releasing, as a crash) while its agents hold claims: until the other host
 *   has ended them `host-lost`, with the default host lease (5 s renewal, 15 s lifetime);
 * - PgBoard.open on the board those runs leave (it reads every event at open).
 *
 * Where PostgreSQL's time goes: each host's pool is counted (transactions, writes per transaction, round trips
 * per transaction, how long each holds the board's lock, time in each statement); FORKBENCH_BENCH_PROFILE=1
 * prints the statements' times.
 */
import { Limits } from '../src-shared/board/limits.js';
import * as fs from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import pg from 'pg';
import type { BoardEvent } from '../src-shared/board/events.js';
import type { Result } from '../src-shared/board/result.js';
import type { BoardService } from '../src-main/board/boardService.js';
import { JournalBoard } from '../src-main/board/journalBoard.js';
import { PgBoard } from '../src-main/board/pg/pgBoard.js';
import { HostLeaseTimes } from '../src-main/board/pg/hostLease.js';
import { startPgCluster, type PgCluster } from '../test/helpers/pgCluster.js';
import { percentileOf, printTable, type Row } from './table.js';

/** The board size the goals are stated at. */
const TASKS = 10_000;
/** Agents writing at once: a busy shared board (tens of agents on a few machines), each waiting for its
 *  answer before its next call, as the CLI does. */
const AGENTS = 100;
/** Claims each agent works in one round: 4 fenced writes each (renew, note, renew, done), so one round is
 *  4,000 fenced writes; its 10 notes stay within an agent's write burst (BoardLimits.agentWriteBurst, 60). */
const CLAIMS_PER_AGENT = 10;
/** Rounds per store: 12,000 fenced writes, a few seconds each at the goal's rate; the notes of all rounds
 *  (30 an agent) still fit the burst. */
const ROUNDS = 3;
/** The goal's rate: fenced writes a second offered to the board, for the latency at that load. */
const PACED_RATE = 1_000;
/** How long that rate is offered: 5,000 writes, 13 claims an agent (its 13 notes within the write burst). */
const PACED_MS = 5_000;
/** Lead time before the first paced write is due, so the schedule starts on an idle board. */
const PACED_START_MS = 50;
/** Claims made on one host and awaited on the other: enough for a p99 (the 3rd-largest of 300). */
const CROSS_CLAIMS = 300;
/** Host-lost trials, run at once on boards of their own (each takes the host lease's ~20 s, so in parallel
 *  the suite pays that once). */
const HOST_LOST_TRIALS = 5;
/** Claims the stopped host's agents hold in each trial. */
const HOST_LOST_CLAIMS = 10;
/** Times each store's board is opened for the open-time figure (the best is reported: the load's noise). */
const OPENS = 3;
/** Connections per host: one deciding transaction at a time, plus the follower's poll and the lease's
 *  renewal; more would only sit idle. */
const POOL_MAX = 4;

type Op = 'renew' | 'note' | 'done';

/** What one host's connections did, counted at its pool. */
class PoolMeter {
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
  /** The lock held, in three parts: the read under it (lock's answer to the read's), this host's own work
   *  (the read's answer to the append sent: deciding, and this process's event loop), and the append and
   *  COMMIT (sent to answered: the server's insert, its WAL flush, one round trip). */
  readonly underLockRead: number[] = [];
  readonly underLockClient: number[] = [];
  readonly underLockCommit: number[] = [];
  /** Keyed writes per transaction, as its one lookup of keys carries them. */
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
      (client as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
        const text = typeof a[0] === 'string' ? a[0] : ((a[0] as { text?: string } | undefined)?.text ?? '?');
        this.queries++;
        if (inFlight++ === 0) this.roundTrips++;
        if (text === 'COMMIT') this.commits++;
        // The keys' look-up (keysOf, or rowsAndKeys under the lock): its first array parameter is the agents of the keys.
        const keyAgents = text.includes('FROM forkbench.write_keys') && Array.isArray(a[1]) ? (a[1] as unknown[]).find((v) => Array.isArray(v)) : undefined;
        if (Array.isArray(keyAgents) && keyAgents.length) this.keyedBatches.push(keyAgents.length);
        const t0 = performance.now();
        if (text.startsWith('BEGIN; SET LOCAL')) begunAt = t0;
        if (text.startsWith('WITH ev AS') || (text === 'COMMIT' && commitSentAt === null)) commitSentAt = t0;
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
            if (readAt !== null && commitSentAt !== null) {
              this.underLockRead.push(readAt - lockedAt);
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
    this.underLockRead.length = 0;
    this.underLockClient.length = 0;
    this.underLockCommit.length = 0;
    this.keyedBatches.length = 0;
    this.byStatement.clear();
  }
}

interface Host {
  board: PgBoard;
  pool: pg.Pool;
  meter: PoolMeter;
}

class Bench {
  private readonly dirs: string[] = [];
  private readonly hosts: Host[] = [];
  private boards = 0;

  constructor(private readonly pgc: PgCluster, private readonly url: string) {}

  tempDir(): string {
    const d = fs.mkdtempSync(join(tmpdir(), 'forkbench-pgbench-'));
    this.dirs.push(d);
    return d;
  }

  newBoardName(): string {
    return `bench-${++this.boards}`;
  }

  async host(name: string, hostId: string, hostLease?: { renewMs: number; lifetimeMs: number }): Promise<Host> {
    const pool = new pg.Pool({ connectionString: this.url, max: POOL_MAX, pipeline: true });
    pool.on('error', () => undefined);
    const meter = new PoolMeter();
    meter.watch(pool);
    const board = await PgBoard.open({
      pool,
      listenClient: () => new pg.Client({ connectionString: this.url }),
      name,
      dir: this.tempDir(),
      hostId,
      hostName: hostId,
      threadId: name,
      goal: 'bench',
      hostLease,
      warn: () => undefined,
    });
    const h = { board, pool, meter };
    this.hosts.push(h);
    return h;
  }

  /** A host stopped as a crash would: no release, no more renewals; its connections are left to drop. */
  async crash(h: Host): Promise<void> {
    await h.board.close();
  }

  async dispose(): Promise<void> {
    for (const h of this.hosts.splice(0)) {
      await h.board.close();
      await h.pool.end().catch(() => undefined);
    }
    for (const d of this.dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
    await this.pgc.dispose();
  }
}

function must<T>(r: Result<T>, what: string): T {
  if (!r.ok) throw new Error(`${what} refused: ${r.error.code}: ${r.error.message}`);
  return r.value;
}

/** Fill a board to TASKS tasks (the person's adds, so no agent quota), all at once: both stores batch them. */
async function fill(board: BoardService): Promise<void> {
  const have = board.state.tasks.size;
  await Promise.all(Array.from({ length: TASKS - have }, (_, i) => board.run((e) => e.addTask({ title: `task ${have + i + 1}`, body: 'a task of the bench board' }))));
  if (board.state.tasks.size !== TASKS) throw new Error(`the board holds ${board.state.tasks.size} tasks, not ${TASKS}`);
}

interface Throughput {
  opsPerSec: number;
  latencies: number[];
  /** Fenced writes in the timed phases. */
  ops: number;
}

/** The board's open tasks, lowest first: each workload claims from the front. */
function openTasks(board: BoardService): string[] {
  return [...board.state.tasks.values()].filter((t) => t.state === 'open').map((t) => t.id);
}

type Agent = { id: string; host: BoardService };

function agentsOn(hosts: BoardService[], label: string): Agent[] {
  const agents = Array.from({ length: AGENTS }, (_, i) => ({ id: `${label}-agent-${i}`, host: hosts[i % hosts.length] as BoardService }));
  for (const a of agents) a.host.hostAgent(a.id);
  return agents;
}

/** Each agent claims `n` tasks from `open` (taken from its front), one call at a time, all agents at once. */
async function claimAll(agents: Agent[], open: string[], n: number): Promise<Array<Array<{ task: string; token: number }>>> {
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
const CYCLE: readonly Op[] = ['renew', 'note', 'renew', 'done'];
let keys = 0;
function fencedWrite(a: Agent, task: string, token: number, op: Op): Promise<unknown> {
  const key = `k-${++keys}`;
  return a.host
    .runKeyed(
      { agentId: a.id, key, hash: key },
      (e) => (op === 'renew' ? e.renew(a.id, task, token) : op === 'note' ? e.note(a.id, task, 'progress: step done, tests pass', token) : e.done(a.id, task, token)),
      (v) => v,
    )
    .then((r) => must(r.result, `${op} ${task}`));
}

/**
 * As fast as the board answers (closed loop): ROUNDS rounds, each agent claims CLAIMS_PER_AGENT open tasks
 * (untimed), then all agents at once work their claims, each waiting for an answer before its next write.
 * Agent i writes through host i mod hosts. The latency here is mostly waiting in line: AGENTS writes are
 * always outstanding, so mean latency = AGENTS / throughput (Little's law) whatever the store.
 */
async function fencedOps(hosts: BoardService[], label: string): Promise<Throughput> {
  const agents = agentsOn(hosts, label);
  const open = openTasks(hosts[0] as BoardService);
  const latencies: number[] = [];
  let wall = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const held = await claimAll(agents, open, CLAIMS_PER_AGENT);
    const t0 = performance.now();
    await Promise.all(
      agents.map(async (a, i) => {
        for (const { task, token } of held[i] as Array<{ task: string; token: number }>) {
          for (const op of CYCLE) {
            const s = performance.now();
            await fencedWrite(a, task, token, op);
            latencies.push(performance.now() - s);
          }
        }
      }),
    );
    wall += performance.now() - t0;
  }
  return { opsPerSec: (latencies.length * 1000) / wall, latencies, ops: latencies.length };
}

/**
 * At the goal's rate (open loop): PACED_RATE fenced writes a second offered by AGENTS agents for PACED_MS,
 * each agent's writes on a fixed schedule. A write's latency counts from when it was due, so a write that
 * waited behind its agent's previous one counts that wait too (no coordinated omission).
 */
async function pacedOps(hosts: BoardService[], label: string, timed: () => void = () => undefined): Promise<Throughput & { crossLags: number[] }> {
  const agents = agentsOn(hosts, label);
  const perAgent = Math.round((PACED_RATE * PACED_MS) / 1000 / AGENTS);
  const held = await claimAll(agents, openTasks(hosts[0] as BoardService), Math.ceil(perAgent / CYCLE.length));
  timed();
  const latencies: number[] = [];
  // With two hosts: each `done` answered on the first host, until the second host's window hears of it.
  const answeredAt = new Map<string, number>();
  const heardAt = new Map<string, number>();
  const other = hosts[1];
  const sub = other?.onEvent((e) => {
    if (e.kind === 'submitted') heardAt.set(e.taskId, performance.now());
  });
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const t0 = performance.now() + PACED_START_MS;
  await Promise.all(
    agents.map(async (a, k) => {
      for (let j = 0; j < perAgent; j++) {
        const due = t0 + ((j * AGENTS + k) * 1000) / PACED_RATE;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const { task, token } = (held[k] as Array<{ task: string; token: number }>)[Math.floor(j / CYCLE.length)] as { task: string; token: number };
        const op = CYCLE[j % CYCLE.length] as Op;
        await fencedWrite(a, task, token, op);
        const now = performance.now();
        latencies.push(now - due);
        if (op === 'done' && other && a.host === hosts[0]) answeredAt.set(task, now);
      }
    }),
  );
  loop.disable();
  if (other) await waitUntil(other, () => [...answeredAt.keys()].every((t) => heardAt.has(t)));
  sub?.dispose();
  const crossLags = [...answeredAt].map(([t, at]) => (heardAt.get(t) as number) - at);
  if (process.env.FORKBENCH_BENCH_PROFILE) process.stderr.write(`\n${label}: this process's event loop delay p50 ${(loop.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms; load average ${loadavg()[0]?.toFixed(1)}\n`);
  return { opsPerSec: (latencies.length * 1000) / (performance.now() - t0), latencies, ops: latencies.length, crossLags };
}

function throughputRows(name: string, t: Throughput, paced: Throughput, note: string, goals = false): Row[] {
  return [
    { name: `${name}: fenced ops/s`, value: t.opsPerSec, unit: 'ops/s', note: `${note}; as fast as answered${goals ? '; goal >= 1,000' : ''}` },
    { name: `${name}: p50, p99 at that rate`, value: percentileOf(t.latencies, 50), unit: 'ms', note: `p99 ${percentileOf(t.latencies, 99).toFixed(1)} ms (${AGENTS} writes always waiting: queueing)` },
    { name: `${name}: p50 at ${PACED_RATE.toLocaleString('en-US')} ops/s`, value: percentileOf(paced.latencies, 50), unit: 'ms', note: `offered on a schedule for ${PACED_MS / 1000} s; ${Math.round(paced.opsPerSec).toLocaleString('en-US')} ops/s done` },
    { name: `${name}: p99 at ${PACED_RATE.toLocaleString('en-US')} ops/s`, value: percentileOf(paced.latencies, 99), unit: 'ms', note: goals ? 'goal <= 20' : '' },
  ];
}

/** FORKBENCH_BENCH_PROFILE=1: where a host's transactions spent their time, statement by statement. */
function profile(name: string, meters: PoolMeter[]): void {
  if (!process.env.FORKBENCH_BENCH_PROFILE) return;
  const all = new Map<string, { n: number; ms: number; all: number[] }>();
  for (const m of meters)
    for (const [k, v] of m.byStatement) {
      const s = all.get(k) ?? { n: 0, ms: 0, all: [] };
      all.set(k, { n: s.n + v.n, ms: s.ms + v.ms, all: [...s.all, ...v.all] });
    }
  const batches = meters.flatMap((m) => m.keyedBatches);
  const q = (p: number) => percentileOf(batches, p);
  if (batches.length) process.stderr.write(`\n${name}: keyed writes per transaction: p10 ${q(10)}, p50 ${q(50)}, p90 ${q(90)}, max ${Math.max(...batches)} (${batches.length} transactions)\n`);
  process.stderr.write(`\n${name}: statements (count, total ms, mean, p50, p99, max ms)\n`);
  const f = (v: number) => v.toFixed(2).padStart(7);
  for (const [k, v] of [...all].sort((a, b) => b[1].ms - a[1].ms))
    process.stderr.write(`  ${String(v.n).padStart(6)} ${v.ms.toFixed(0).padStart(7)} ${f(v.ms / v.n)} ${f(percentileOf(v.all, 50))} ${f(percentileOf(v.all, 99))} ${f(Math.max(...v.all))}  ${k}\n`);
}

function meterRows(name: string, meters: PoolMeter[], ops: number): Row[] {
  const commits = meters.reduce((s, m) => s + m.commits, 0);
  const queries = meters.reduce((s, m) => s + m.queries, 0);
  const roundTrips = meters.reduce((s, m) => s + m.roundTrips, 0);
  profile(name, meters);
  const batches = meters.flatMap((m) => m.keyedBatches);
  return [
    { name: `${name}: transactions`, value: commits, unit: 'commits', note: `all ${ROUNDS} rounds, claims included` },
    { name: `${name}: fenced writes a transaction`, value: percentileOf(batches, 50), unit: 'writes', note: `p50 of the transactions that carried keyed writes; mean ${(batches.reduce((x, y) => x + y, 0) / Math.max(1, batches.length)).toFixed(1)}` },
    { name: `${name}: round trips a transaction`, value: roundTrips / Math.max(1, commits), unit: 'trips', note: `every round trip of the pool (lease, poll too) over commits; ${(queries / Math.max(1, commits)).toFixed(1)} statements; ${ops} writes` },
  ];
}

/** The fenced ops as fast as answered, then paced, on `hosts` (one board, the agents spread over them): their
 *  rows, and the paced run (its cross-host lags). Each run's pool meters are counted from zero. */
async function hostsRun(
  name: string,
  hosts: ReadonlyArray<{ board: PgBoard; meter: PoolMeter }>,
  label: string,
  note: string,
  goals = false,
): Promise<{ rows: Row[]; paced: Awaited<ReturnType<typeof pacedOps>> }> {
  const boards = hosts.map((h) => h.board);
  const meters = hosts.map((h) => h.meter);
  for (const m of meters) m.reset();
  const fast = await fencedOps(boards, label);
  const meterLines = meterRows(name, meters, fast.ops + ROUNDS * AGENTS * CLAIMS_PER_AGENT);
  // Counted from the paced writes on (the claims before them are not what the rate is about).
  const paced = await pacedOps(boards, `${label}-paced`, () => meters.forEach((m) => m.reset()));
  profile(`${name}, paced`, meters);
  // What another host waits for: the lock held from its statement's answer to COMMIT's, at the goal's rate.
  const held = meters.flatMap((m) => m.lockHeld);
  const pacedTrips = meters.reduce((s, m) => s + m.roundTrips, 0) / Math.max(1, meters.reduce((s, m) => s + m.commits, 0));
  const lockLine: Row = { name: `${name}: board locked a transaction at ${PACED_RATE.toLocaleString('en-US')} ops/s, p50`, value: percentileOf(held, 50), unit: 'ms', note: `p99 ${percentileOf(held, 99).toFixed(1)} ms; ${held.length} transactions, ${pacedTrips.toFixed(2)} round trips of the pool a commit (lease and follow included)` };
  const all = (k: 'lockWait' | 'underLockRead' | 'underLockClient' | 'underLockCommit') => meters.flatMap((m) => m[k]);
  const p50p99 = (v: number[]) => `p50 ${percentileOf(v, 50).toFixed(1)} / p99 ${percentileOf(v, 99).toFixed(1)} ms`;
  const waitLine: Row = {
    name: `${name}: waited for the board's lock at ${PACED_RATE.toLocaleString('en-US')} ops/s, p50`,
    value: percentileOf(all('lockWait'), 50),
    unit: 'ms',
    note: `p99 ${percentileOf(all('lockWait'), 99).toFixed(1)} ms; BEGIN sent to the lock's answer (another host's hold, one round trip)`,
  };
  const splitLine: Row = {
    name: `${name}: the lock held: the host's own part, p50`,
    value: percentileOf(all('underLockClient'), 50),
    unit: 'ms',
    note: `p99 ${percentileOf(all('underLockClient'), 99).toFixed(1)} ms (read answered to append sent); read ${p50p99(all('underLockRead'))}; append + COMMIT ${p50p99(all('underLockCommit'))}`,
  };
  return { rows: [...throughputRows(name, fast, paced, note, goals), ...meterLines, lockLine, waitLine, splitLine], paced };
}

async function journal(): Promise<{ rows: Row[] }> {
  const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-pgbench-journal-'));
  try {
    const board = await JournalBoard.open({ dir });
    await fill(board);
    const t = await fencedOps([board], 'journal');
    const paced = await pacedOps([board], 'journal-paced');
    const seq = board.state.seq;
    await board.close();
    const opens: number[] = [];
    for (let i = 0; i < OPENS; i++) {
      const t0 = performance.now();
      const again = await JournalBoard.open({ dir });
      opens.push(performance.now() - t0);
      await again.close();
    }
    return {
      rows: [
        ...throughputRows('journal, 1 host', t, paced, `${AGENTS} agents, keyed, fsync'd, ${TASKS / 1000}k tasks`),
        { name: 'journal: open', value: Math.min(...opens), unit: 'ms', note: `${seq.toLocaleString('en-US')} events; best of ${OPENS}` },
      ],
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Claims made on A, each awaited on B before the next: A's answer to B's event for that grant. */
async function crossHost(a: PgBoard, b: PgBoard): Promise<number[]> {
  // An agent per claim: one agent holds at most the Thread's claim limit, and none is released here.
  const agentOf = (i: number) => `cross-agent-${i}`;
  for (let i = 0; i < CROSS_CLAIMS; i++) a.hostAgent(agentOf(i));
  const seenAt = new Map<string, number>();
  const waiting = new Map<string, () => void>();
  const sub = b.onEvent((e: BoardEvent) => {
    if (e.kind !== 'grant' || !e.agentId.startsWith('cross-agent-')) return;
    seenAt.set(e.taskId, performance.now());
    waiting.get(e.taskId)?.();
  });
  const lags: number[] = [];
  const open = [...a.state.tasks.values()].filter((t) => t.state === 'open').map((t) => t.id);
  try {
    for (let i = 0; i < CROSS_CLAIMS; i++) {
      const task = open[i] as string;
      const seen = new Promise<void>((resolve) => waiting.set(task, resolve));
      must(await a.run((e) => e.claim(agentOf(i), task)), `claim ${task}`);
      const answered = performance.now();
      if (!seenAt.has(task)) await seen;
      waiting.delete(task);
      lags.push((seenAt.get(task) as number) - answered);
    }
  } finally {
    sub.dispose();
  }
  return lags;
}

/**
 * One trial: two hosts with the default host lease; A's agents hold claims; A stops at a random moment of its
 * renewal period, as a crash would; until B has ended every one of A's claims `host-lost`.
 */
async function hostLostTrial(bench: Bench): Promise<{ last: number; each: number[] }> {
  const name = bench.newBoardName();
  const a = await bench.host(name, 'lost-host-a');
  const b = await bench.host(name, 'lost-host-b');
  const tasks: string[] = [];
  for (let i = 0; i < HOST_LOST_CLAIMS; i++) tasks.push(must(await a.board.run((e) => e.addTask({ title: `held ${i}` })), 'add').id);
  for (const [i, task] of tasks.entries()) {
    a.board.hostAgent(`lost-agent-${i}`);
    must(await a.board.run((e) => e.claim(`lost-agent-${i}`, task)), `claim ${task}`);
  }
  await waitUntil(b.board, () => tasks.every((t) => b.board.state.tasks.get(t)?.claim));
  // Anywhere in A's renewal period: the time lost depends on how long before the crash A last renewed.
  await new Promise((r) => setTimeout(r, Math.random() * HostLeaseTimes.renewMs));
  const ended = new Map<string, number>();
  const all = new Promise<void>((resolve) => {
    b.board.onEvent((e) => {
      if (e.kind === 'claim-ended' && e.reason === 'host-lost' && tasks.includes(e.taskId)) {
        ended.set(e.taskId, performance.now());
        if (ended.size === tasks.length) resolve();
      }
    });
  });
  const t0 = performance.now();
  await bench.crash(a);
  await all;
  const each = [...ended.values()].map((t) => t - t0);
  return { last: Math.max(...each), each };
}

/** Resolve once `cond` holds, looking at each of the board's events (never on a timer). */
function waitUntil(board: BoardService, cond: () => boolean): Promise<void> {
  if (cond()) return Promise.resolve();
  return new Promise((resolve) => {
    const sub = board.onEvent(() => {
      if (!cond()) return;
      sub.dispose();
      resolve();
    });
  });
}

export async function pgBoardBench(): Promise<Row[]> {
  const rows: Row[] = [];
  rows.push(...(await journal()).rows);

  const pgc = await startPgCluster({ fsync: true });
  const bench = new Bench(pgc, await pgc.createDatabase('bench'));
  try {
    // One host.
    const one = await bench.host(bench.newBoardName(), 'host-1');
    await fill(one.board);
    rows.push(...(await hostsRun('postgres, 1 host', [one], 'one', `${AGENTS} agents, keyed, fsync on, ${TASKS / 1000}k tasks`, true)).rows);

    // Two hosts on one board, half the agents on each.
    const name2 = bench.newBoardName();
    const a = await bench.host(name2, 'host-a');
    const b = await bench.host(name2, 'host-b');
    await fill(a.board);
    await waitUntil(b.board, () => b.board.state.seq === a.board.state.seq);
    const { rows: twoRows, paced: p2 } = await hostsRun('postgres, 2 hosts', [a, b], 'two', `${AGENTS / 2} agents on each host, one board`, true);
    rows.push(...twoRows);

    const lags = await crossHost(a.board, b.board);
    rows.push({ name: 'claim on A seen on B: p50', value: percentileOf(lags, 50), unit: 'ms', note: `${CROSS_CLAIMS} claims, one at a time (LISTEN/NOTIFY, then B's read)` });
    rows.push({ name: 'claim on A seen on B: p99', value: percentileOf(lags, 99), unit: 'ms', note: 'goal <= 250' });
    rows.push({ name: 'claim on A seen on B: max', value: Math.max(...lags), unit: 'ms' });
    rows.push({ name: 'done on A seen on B, under load: p50', value: percentileOf(p2.crossLags, 50), unit: 'ms', note: `${p2.crossLags.length} dones during the 2 hosts' ${PACED_RATE.toLocaleString('en-US')} ops/s` });
    rows.push({ name: 'done on A seen on B, under load: p99', value: percentileOf(p2.crossLags, 99), unit: 'ms', note: 'goal <= 250' });

    // Opening a third host on that board: it reads every event.
    const opens: number[] = [];
    for (let i = 0; i < OPENS; i++) {
      const t0 = performance.now();
      const c = await bench.host(name2, `host-open-${i}`);
      opens.push(performance.now() - t0);
      profile(`postgres: PgBoard.open ${i + 1} (${Math.round(opens.at(-1) as number)} ms)`, [c.meter]);
      await c.board.close();
    }
    rows.push({ name: 'postgres: PgBoard.open', value: Math.min(...opens), unit: 'ms', note: `${a.board.state.seq.toLocaleString('en-US')} events (${TASKS / 1000}k tasks); best of ${OPENS}, worst ${Math.round(Math.max(...opens))} ms` });

    process.stderr.write(`bench: pgBoard: ${HOST_LOST_TRIALS} host-lost trials at once (~20 s: the default host lease)…\n`);
    const trials = await Promise.all(Array.from({ length: HOST_LOST_TRIALS }, () => hostLostTrial(bench)));
    const lasts = trials.map((t) => t.last);
    rows.push({ name: 'host lost: claims ended, p50', value: percentileOf(lasts, 50) / 1000, unit: 's', note: `${HOST_LOST_TRIALS} trials (few: each waits out the lease), ${HOST_LOST_CLAIMS} claims each; crash to the last claim ended` });
    rows.push({ name: 'host lost: claims ended, max', value: Math.max(...lasts) / 1000, unit: 's', note: `goal <= 20; lease ${HostLeaseTimes.renewMs / 1000} s renew, ${HostLeaseTimes.lifetimeMs / 1000} s lifetime` });
  } finally {
    await bench.dispose();
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) printTable('pgBoard', await pgBoardBench());
