/**
 * The board on PostgreSQL (issue 31) beside the journal, on a private server with durable commits (fsync on,
 * synchronous_commit on: a write is answered only after its WAL is flushed):
 * - fenced ops/s and latency (renew, note, done by agents holding claims, with their tokens and keys, many
 *   agents at once) at 10k tasks: the journal, PostgreSQL with one host, and two hosts on one board (each its
 *   own pool, as two machines would be), in this thread and again each host with its agents in a thread of its
 *   own (two machines have an event loop each: pgHostThread.ts);
 * - a claim made on host A seen on host B (A's answer to B's event: LISTEN/NOTIFY, then B's catch-up read);
 * - a host that stops (closed without releasing, as a crash) while its agents hold claims: until the other host
 *   has ended them `host-lost`, with the default host lease (5 s renewal, 15 s lifetime);
 * - PgBoard.open on the board those runs leave (it reads every event at open).
 *
 * Where PostgreSQL's time goes: each host's pool is counted (transactions, writes per transaction, round trips
 * per transaction, how long each waits for the board's lock and holds it, the hold split into the host's own
 * work and the commit's round trip, time in each statement); FORKBENCH_BENCH_PROFILE=1 prints the statements'
 * times.
 */
import { Limits } from '../src-shared/board/limits.js';
import * as fs from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { BoardEvent } from '../src-shared/board/events.js';
import type { BoardService } from '../src-main/board/boardService.js';
import { JournalBoard } from '../src-main/board/journalBoard.js';
import { PgBoard } from '../src-main/board/pg/pgBoard.js';
import { HostLeaseTimes } from '../src-main/board/pg/hostLease.js';
import { startPgCluster, type PgCluster } from '../test/helpers/pgCluster.js';
import { percentileOf, printTable, type Row } from './table.js';
import { AGENTS, type Agent, claimAll, claimTasks, CYCLE, fencedWrite, type Host, must, onSchedule, openHost, PACED_MS, PACED_PER_AGENT, PACED_RATE, PACED_START_MS, type PoolMeter } from './pgBoardKit.js';
import type { FromThread, ThreadHostData, ToThread } from './pgHostThread.js';

/** The board size the goals are stated at. */
const TASKS = 10_000;
/** Claims each agent works in one round: 4 fenced writes each (renew, note, renew, done), so one round is
 *  4,000 fenced writes; its 10 notes stay within an agent's write burst (BoardLimits.agentWriteBurst, 60). */
const CLAIMS_PER_AGENT = 10;
/** Rounds per store: 12,000 fenced writes, a few seconds each at the goal's rate; the notes of all rounds
 *  (30 an agent) still fit the burst. */
const ROUNDS = 3;
/** Claims made on one host and awaited on the other: enough for a p99 (the 3rd-largest of 300). */
const CROSS_CLAIMS = 300;
/** Host-lost trials, run at once on boards of their own (each takes the host lease's ~20 s, so in parallel
 *  the suite pays that once). */
const HOST_LOST_TRIALS = 5;
/** Claims the stopped host's agents hold in each trial. */
const HOST_LOST_CLAIMS = 10;
/** Times each store's board is opened for the open-time figure (the best is reported: the load's noise). */
const OPENS = 3;

class Bench {
  private readonly dirs: string[] = [];
  private readonly hosts: Host[] = [];
  private boards = 0;

  constructor(private readonly pgc: PgCluster, readonly url: string) {}

  tempDir(): string {
    const d = fs.mkdtempSync(join(tmpdir(), 'forkbench-pgbench-'));
    this.dirs.push(d);
    return d;
  }

  newBoardName(): string {
    return `bench-${++this.boards}`;
  }

  async host(name: string, hostId: string, hostLease?: { renewMs: number; lifetimeMs: number }): Promise<Host> {
    const h = await openHost(this.url, name, hostId, this.tempDir(), hostLease);
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

function agentsOn(hosts: BoardService[], label: string): Agent[] {
  const agents = Array.from({ length: AGENTS }, (_, i) => ({ id: `${label}-agent-${i}`, host: hosts[i % hosts.length] as BoardService }));
  for (const a of agents) a.host.membership!.hostAgent(a.id);
  return agents;
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
 * each agent's writes on a fixed schedule (onSchedule), agent i on host i mod hosts, all in this thread.
 */
async function pacedOps(hosts: BoardService[], label: string, timed: () => void = () => undefined): Promise<Throughput & { crossLags: number[] }> {
  const agents = agentsOn(hosts, label);
  const held = await claimAll(agents, openTasks(hosts[0] as BoardService), Math.ceil(PACED_PER_AGENT / CYCLE.length));
  timed();
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
  const latencies = await onSchedule(
    agents.map((agent, k) => ({ agent, k, held: held[k] as Array<{ task: string; token: number }> })),
    t0,
    (a, task, op, at) => {
      if (op === 'done' && other && a.host === hosts[0]) answeredAt.set(task, at);
    },
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

/**
 * The server's WAL flushes (fdatasync of its log: what makes a commit durable, and what a COMMIT waits for with
 * synchronous_commit on), from pg_stat_wal; their times need track_wal_io_timing (set on the bench's server).
 * Backends report their counts at most once a second, so a run's last second may be missing from the count,
 * not from the mean time a flush took.
 */
class WalFlushes {
  private constructor(private readonly c: pg.Client) {}

  static async open(url: string): Promise<WalFlushes> {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    return new WalFlushes(c);
  }

  async reset(): Promise<void> {
    await this.c.query(`SELECT pg_stat_reset_shared('wal')`);
  }

  async read(): Promise<{ flushes: number; meanMs: number }> {
    const r = await this.c.query<{ n: string; ms: number }>('SELECT wal_sync AS n, wal_sync_time AS ms FROM pg_stat_wal');
    const flushes = Number(r.rows[0]?.n ?? 0);
    return { flushes, meanMs: flushes ? (r.rows[0]?.ms ?? 0) / flushes : NaN };
  }

  /** The row for the flushes since reset: the disk's part of every commit, and so of every hold of the lock. */
  async row(name: string): Promise<Row> {
    const { flushes, meanMs } = await this.read();
    return { name: `${name}: the server's WAL flush, mean`, value: meanMs, unit: 'ms', note: `${flushes} flushes counted (pg_stat_wal); each commit waits for one, with the board's lock held` };
  }

  end(): Promise<void> {
    return this.c.end();
  }
}

/** The fenced ops as fast as answered, then paced, on `hosts` (one board, the agents spread over them): their
 *  rows, and the paced run (its cross-host lags). Each run's pool meters are counted from zero. */
async function hostsRun(
  name: string,
  hosts: ReadonlyArray<{ board: PgBoard; meter: PoolMeter }>,
  label: string,
  note: string,
  wal: WalFlushes,
  goals = false,
): Promise<{ rows: Row[]; paced: Awaited<ReturnType<typeof pacedOps>> }> {
  const boards = hosts.map((h) => h.board);
  const meters = hosts.map((h) => h.meter);
  for (const m of meters) m.reset();
  const fast = await fencedOps(boards, label);
  const meterLines = meterRows(name, meters, fast.ops + ROUNDS * AGENTS * CLAIMS_PER_AGENT);
  // Counted from the paced writes on (the claims before them are not what the rate is about).
  let walReset: Promise<void> = Promise.resolve();
  const paced = await pacedOps(boards, `${label}-paced`, () => {
    meters.forEach((m) => m.reset());
    walReset = wal.reset();
  });
  await walReset;
  const walLine = await wal.row(`${name} at ${PACED_RATE.toLocaleString('en-US')} ops/s`);
  profile(`${name}, paced`, meters);
  // What another host waits for: the lock held from its statement's answer to COMMIT's, at the goal's rate.
  const held = meters.flatMap((m) => m.lockHeld);
  const pacedTrips = meters.reduce((s, m) => s + m.roundTrips, 0) / Math.max(1, meters.reduce((s, m) => s + m.commits, 0));
  const lockLine: Row = { name: `${name}: board locked a transaction at ${PACED_RATE.toLocaleString('en-US')} ops/s, p50`, value: percentileOf(held, 50), unit: 'ms', note: `p99 ${percentileOf(held, 99).toFixed(1)} ms; ${held.length} transactions, ${pacedTrips.toFixed(2)} round trips of the pool a commit (lease and follow included)` };
  const all = (k: 'lockWait' | 'underLockClient' | 'underLockCommit') => meters.flatMap((m) => m[k]);
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
    note: `p99 ${percentileOf(all('underLockClient'), 99).toFixed(1)} ms (read answered to the last round trip sent); that round trip (append, COMMIT's WAL flush) ${p50p99(all('underLockCommit'))}`,
  };
  return { rows: [...throughputRows(name, fast, paced, note, goals), ...meterLines, lockLine, waitLine, splitLine, walLine], paced };
}

/**
 * The goal's rate on two hosts each in a thread of its own, as two machines each have their own event loop:
 * `main` (this thread) and a host that joins its board in a worker (pgHostThread.ts), agent i on the first if i
 * is even, else on the second, as pacedOps spreads them. Same schedule, same writes, same meter.
 */
async function pacedOnThreads(bench: Bench, main: Host, label: string): Promise<{ latencies: number[]; crossLags: number[]; figures: Array<Pick<PoolMeter, 'lockHeld' | 'lockWait' | 'underLockClient' | 'underLockCommit' | 'keyedBatches'>> }> {
  const open = openTasks(main.board);
  const claimsEach = Math.ceil(PACED_PER_AGENT / CYCLE.length);
  const all = Array.from({ length: AGENTS }, (_, k) => ({ id: `${label}-agent-${k}`, k, tasks: open.slice(k * claimsEach, (k + 1) * claimsEach) }));
  const mine = all.filter((a) => a.k % 2 === 0);
  must(await main.board.run((e) => e.setSettings({ claimLimit: Limits.maxClaimLimit })), 'claim limit');
  const data: ThreadHostData = { url: bench.url, name: main.board.sharedName, hostId: `${label}-thread-host`, dir: bench.tempDir(), agents: all.filter((a) => a.k % 2 === 1) };
  const worker = new Worker(new URL('./pgHostThread.mjs', import.meta.url), { workerData: data });
  const replies: FromThread[] = [];
  const waiting = new Map<FromThread['type'], (m: FromThread) => void>();
  const failed = new Promise<never>((_, reject) => worker.once('error', reject));
  worker.on('message', (m: FromThread) => {
    const w = waiting.get(m.type);
    if (w) w(m);
    else replies.push(m);
  });
  const reply = <K extends FromThread['type']>(type: K): Promise<Extract<FromThread, { type: K }>> => {
    const had = replies.findIndex((m) => m.type === type);
    if (had >= 0) return Promise.resolve(replies.splice(had, 1)[0] as Extract<FromThread, { type: K }>);
    return Promise.race([failed, new Promise<Extract<FromThread, { type: K }>>((resolve) => waiting.set(type, (m) => resolve(m as Extract<FromThread, { type: K }>)))]);
  };
  const tell = (m: ToThread) => worker.postMessage(m);
  try {
    for (const a of mine) main.board.membership!.hostAgent(a.id);
    const [held] = await Promise.all([claimTasks(main.board, mine), reply('ready')]);
    main.meter.reset();
    // One clock for both threads: performance.timeOrigin + now() (pgHostThread.ts).
    const t0 = performance.timeOrigin + performance.now() + PACED_START_MS;
    tell({ type: 'go', t0 });
    const answeredAt = new Map<string, number>();
    const [latencies, ran] = await Promise.all([
      onSchedule(
        mine.map((a, i) => ({ agent: { id: a.id, host: main.board }, k: a.k, held: held[i] as Array<{ task: string; token: number }> })),
        t0 - performance.timeOrigin,
        (_a, task, op, at) => {
          if (op === 'done') answeredAt.set(task, performance.timeOrigin + at);
        },
      ),
      reply('ran'),
    ]);
    tell({ type: 'heard', tasks: [...answeredAt.keys()] });
    const heard = new Map((await reply('heard')).at);
    tell({ type: 'close' });
    await reply('closed');
    return {
      latencies: [...latencies, ...ran.latencies],
      crossLags: [...answeredAt].map(([t, at]) => (heard.get(t) as number) - at),
      figures: [main.meter, ran],
    };
  } finally {
    await worker.terminate();
  }
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
    a.board.membership!.hostAgent(`lost-agent-${i}`);
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

  // track_wal_io_timing: the WAL flushes' times in pg_stat_wal (WalFlushes); it changes nothing that is written.
  const pgc = await startPgCluster({ fsync: true, settings: { track_wal_io_timing: 'on' } });
  const bench = new Bench(pgc, await pgc.createDatabase('bench'));
  const wal = await WalFlushes.open(bench.url);
  try {
    // One host.
    const one = await bench.host(bench.newBoardName(), 'host-1');
    await fill(one.board);
    rows.push(...(await hostsRun('postgres, 1 host', [one], 'one', `${AGENTS} agents, keyed, fsync on, ${TASKS / 1000}k tasks`, wal, true)).rows);

    // Two hosts on one board, half the agents on each.
    const name2 = bench.newBoardName();
    const a = await bench.host(name2, 'host-a');
    const b = await bench.host(name2, 'host-b');
    await fill(a.board);
    await waitUntil(b.board, () => b.board.state.seq === a.board.state.seq);
    const { rows: twoRows, paced: p2 } = await hostsRun('postgres, 2 hosts', [a, b], 'two', `${AGENTS / 2} agents on each host, one board`, wal, true);
    rows.push(...twoRows);

    // Two hosts again, each in a thread of its own (two machines have an event loop each), on the first board.
    await wal.reset();
    const threads = await pacedOnThreads(bench, one, 'threads');
    const t = (k: 'lockHeld' | 'lockWait' | 'underLockClient' | 'underLockCommit') => threads.figures.flatMap((f) => f[k]);
    const tn = 'postgres, 2 hosts, a thread each';
    rows.push({ name: `${tn}: p50 at ${PACED_RATE.toLocaleString('en-US')} ops/s`, value: percentileOf(threads.latencies, 50), unit: 'ms', note: `the same schedule and writes, ${AGENTS / 2} agents in each host's thread` });
    rows.push({ name: `${tn}: p99 at ${PACED_RATE.toLocaleString('en-US')} ops/s`, value: percentileOf(threads.latencies, 99), unit: 'ms', note: 'goal <= 20' });
    rows.push({ name: `${tn}: board locked a transaction, p50`, value: percentileOf(t('lockHeld'), 50), unit: 'ms', note: `p99 ${percentileOf(t('lockHeld'), 99).toFixed(1)} ms; waited for it p50 ${percentileOf(t('lockWait'), 50).toFixed(1)} / p99 ${percentileOf(t('lockWait'), 99).toFixed(1)} ms` });
    rows.push({ name: `${tn}: the lock held: the host's own part, p50`, value: percentileOf(t('underLockClient'), 50), unit: 'ms', note: `p99 ${percentileOf(t('underLockClient'), 99).toFixed(1)} ms; the last round trip (append, COMMIT's WAL flush) p50 ${percentileOf(t('underLockCommit'), 50).toFixed(1)} / p99 ${percentileOf(t('underLockCommit'), 99).toFixed(1)} ms` });
    rows.push(await wal.row(tn));
    rows.push({ name: `${tn}: done on one seen on the other, p99`, value: percentileOf(threads.crossLags, 99), unit: 'ms', note: `${threads.crossLags.length} dones; goal <= 250` });

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
    await wal.end();
    await bench.dispose();
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) printTable('pgBoard', await pgBoardBench());
