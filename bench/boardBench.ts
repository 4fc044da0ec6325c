import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JournalBoard } from '../src-main/board/journalBoard.js';
import { boardClock } from '../src-main/base/clock.js';
import { LeaseEngine } from '../src-main/board/leaseEngine.js';
import { percentile, printTable, type Row } from './table.js';

const AGENTS = 100;
const agentOf = (i: number) => `agent-${i % AGENTS}`;

/** Tasks each agent works in one round of the in-process bench: its ~50 writes a round (claim, renew, note,
 *  done, release of each) stay within an agent's write burst (BoardLimits.agentWriteBurst, 60). */
const TASKS_PER_AGENT = 10;
/** Board time passed between rounds (untimed): enough for every agent's write quota to refill whole (1 write
 *  a second); no claim lives across rounds, so none lapses. */
const ROUND_GAP_MS = 60_000;

/**
 * Fenced operations per second in process (no disk) on a board of `tasks` tasks, ten to an agent. Each
 * operation is measured over the same ~100k calls at both sizes (rounds over every task), so the two sizes
 * compare cost per operation rather than warm-up. The agents' write quotas are part of what is measured; the
 * board's clock skips ahead between rounds so that they never refuse.
 */
function inProcess(tasks: number): Record<'claim' | 'renew' | 'note' | 'done', number> {
  let skipped = 0;
  const engine = new LeaseEngine(boardClock(0, () => performance.now() + skipped));
  engine.createThread('bench');
  // Each agent holds its ten at once: a person's setting past the default claim limit (3).
  engine.setSettings({ claimLimit: TASKS_PER_AGENT });
  for (let i = 0; i < tasks; i++) engine.addTask({ title: `task ${i}` });
  const ids = [...engine.state.tasks.keys()];
  const agents = ids.map((_, i) => `agent-${Math.floor(i / TASKS_PER_AGENT)}`);
  const tokens = new Array<number>(tasks);
  const OPS = 100_000;
  const rounds = Math.max(1, Math.round(OPS / tasks));
  const spent = { claim: 0n, renew: 0n, note: 0n, done: 0n };
  const time = (op: keyof typeof spent, f: (i: number) => void) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < tasks; i++) f(i);
    spent[op] += process.hrtime.bigint() - t0;
  };
  const must = (r: { ok: boolean }, what: string) => {
    if (!r.ok) throw new Error(`${what} refused`);
  };
  for (let round = 0; round < rounds; round++) {
    time('claim', (i) => {
      const r = engine.claim(agents[i] as string, ids[i]);
      if (!r.ok) throw new Error(r.error.message);
      tokens[i] = r.value.token;
    });
    time('renew', (i) => must(engine.renew(agents[i] as string, ids[i] as string, tokens[i]), 'renew'));
    time('note', (i) => must(engine.note(agents[i] as string, ids[i] as string, 'progress', tokens[i]), 'note'));
    time('done', (i) => must(engine.done(agents[i] as string, ids[i] as string, tokens[i]), 'done'));
    // untimed: put every task back in the backlog for the next round
    for (let i = 0; i < tasks; i++) must(engine.release(agents[i] as string, ids[i] as string, tokens[i]), 'release');
    for (let i = 0; i < tasks; i++) must(engine.userRelease(ids[i] as string), 'user release');
    skipped += ROUND_GAP_MS;
  }
  const perSec = (ns: bigint) => (rounds * tasks * 1e9) / Number(ns);
  return { claim: perSec(spent.claim), renew: perSec(spent.renew), note: perSec(spent.note), done: perSec(spent.done) };
}

/** Best of three runs: the figure a quiet machine gives, not one disturbed by a GC or another process. */
function bestOf(tasks: number): Record<'claim' | 'renew' | 'note' | 'done', number> {
  const runs = [inProcess(tasks), inProcess(tasks), inProcess(tasks)];
  const best = (k: 'claim' | 'renew' | 'note' | 'done') => Math.max(...runs.map((r) => r[k]));
  return { claim: best('claim'), renew: best('renew'), note: best('note'), done: best('done') };
}

/** Acknowledged (fsync'd) writes per second, one writer at a time and 100 concurrent writers. */
async function durable(): Promise<{ serial: number; concurrent: number }> {
  const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-bench-'));
  try {
    const svc = await JournalBoard.open({ dir });
    const add = () => svc.run((e) => e.addTask({ title: 'x' }));
    const SERIAL = 300;
    let t0 = performance.now();
    for (let i = 0; i < SERIAL; i++) await add();
    const serial = SERIAL / ((performance.now() - t0) / 1000);
    const ROUNDS = 30;
    t0 = performance.now();
    for (let r = 0; r < ROUNDS; r++) await Promise.all(Array.from({ length: AGENTS }, add));
    const concurrent = (ROUNDS * AGENTS) / ((performance.now() - t0) / 1000);
    await svc.close();
    return { serial, concurrent };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The same, as agents write with idempotency keys (issue 31): each write's key line goes into the journal in
 * the same append as its events. Notes on claimed tasks, so each write is a fenced op with a key.
 */
async function durableKeyed(): Promise<{ serial: number; concurrent: number }> {
  const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-bench-'));
  try {
    const svc = await JournalBoard.open({ dir });
    const tokens: number[] = [];
    for (let i = 0; i < AGENTS; i++) {
      await svc.run((e) => e.addTask({ title: `t${i}` }));
      const c = await svc.run((e) => e.claim(agentOf(i), `T-${i + 1}`));
      if (!c.ok) throw new Error(c.error.message);
      tokens.push(c.value.token);
    }
    let n = 0;
    const note = async (i: number) => {
      const key = `k-${n++}`;
      const r = await svc.runKeyed({ agentId: agentOf(i), key, hash: key }, (e) => e.renew(agentOf(i), `T-${i + 1}`, tokens[i]), (v) => v);
      if (!r.result.ok) throw new Error(r.result.error.message);
    };
    const SERIAL = 300;
    let t0 = performance.now();
    for (let i = 0; i < SERIAL; i++) await note(i % AGENTS);
    const serial = SERIAL / ((performance.now() - t0) / 1000);
    const ROUNDS = 30;
    t0 = performance.now();
    for (let r = 0; r < ROUNDS; r++) await Promise.all(Array.from({ length: AGENTS }, (_, i) => note(i)));
    const concurrent = (ROUNDS * AGENTS) / ((performance.now() - t0) / 1000);
    await svc.close();
    return { serial, concurrent };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** How long after its deadline the host's timer frees a lapsed claim (real timers, real clock). */
async function expiryLag(): Promise<number[]> {
  const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-bench-'));
  try {
    const svc = await JournalBoard.open({ dir });
    await svc.run((e) => e.setSettings({ leaseMs: 2000 }));
    const CLAIMS = 200;
    for (let i = 0; i < CLAIMS; i++) await svc.run((e) => e.addTask({ title: `t${i}` }));
    const deadlines = new Map<number, number>();
    const lags: number[] = [];
    const done = new Promise<void>((resolve) => {
      svc.onEvent((e) => {
        if (e.kind === 'claim-ended' && e.reason === 'lapsed') {
          lags.push(svc.clock.now() - (deadlines.get(e.token) as number));
          if (lags.length === CLAIMS) resolve();
        }
      });
    });
    // Stagger the grants over ~1 s so deadlines are spread out, as they are in real use.
    for (let i = 0; i < CLAIMS; i++) {
      const r = await svc.run((e) => e.claim(agentOf(i), `T-${i + 1}`));
      if (!r.ok) throw new Error(r.error.message);
      deadlines.set(r.value.token, svc.state.tasks.get(`T-${i + 1}`)?.claim?.deadline as number);
      if (i % 20 === 0) await new Promise((res) => setTimeout(res, 100));
    }
    await done;
    await svc.close();
    return lags.sort((a, b) => a - b);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function boardBench(): Promise<Row[]> {
  inProcess(1000); // warm up the JIT so the first size measured is not penalised
  const small = bestOf(1_000);
  const large = bestOf(10_000);
  const rows: Row[] = [];
  for (const op of ['claim', 'renew', 'note', 'done'] as const) {
    rows.push({ name: `${op} ops/s, 1k tasks`, value: small[op], unit: 'ops/s', note: '10 tasks an agent, in process, no fsync' });
    rows.push({ name: `${op} ops/s, 10k tasks`, value: large[op], unit: 'ops/s' });
    rows.push({ name: `${op} cost 10k/1k`, value: small[op] / large[op], unit: 'ratio', note: 'goal <= 1.3' });
  }
  const d = await durable();
  rows.push({ name: 'fsync’d writes/s, 1 writer', value: d.serial, unit: 'ops/s', note: 'acked after fdatasync' });
  rows.push({ name: 'fsync’d writes/s, 100 writers', value: d.concurrent, unit: 'ops/s', note: 'group commit' });
  const k = await durableKeyed();
  rows.push({ name: 'fsync’d keyed renewals/s, 1 writer', value: k.serial, unit: 'ops/s', note: 'idempotency key journaled with the write' });
  rows.push({ name: 'fsync’d keyed renewals/s, 100 writers', value: k.concurrent, unit: 'ops/s', note: 'group commit' });
  const lags = await expiryLag();
  rows.push({ name: 'expiry lag p50', value: percentile(lags, 50), unit: 'ms', note: '200 claims, 2 s lease' });
  rows.push({ name: 'expiry lag p99', value: percentile(lags, 99), unit: 'ms', note: 'goal <= 100' });
  rows.push({ name: 'expiry lag max', value: lags.at(-1) as number, unit: 'ms' });
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) printTable('board', await boardBench());
