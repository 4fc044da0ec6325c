import { Limits } from '../src-shared/board/limits.js';
import { boardClock } from '../src-main/base/clock.js';
import { LeaseEngine } from '../src-main/board/leaseEngine.js';
import { median, percentile, printTable, type Row } from './table.js';
import { rng } from './seeded.js';

/**
 * Issue 34's figure for dispatch, in process (the engine's own cost, no disk): how long the board takes to
 * grant an idle agent the next ready task it may take on a 10k-task board (goal: p99 <= 5 ms).
 */

const TASKS = 10_000;
/** Dispatches measured on the dependency graph: a fifth of the board, enough for a stable p99. */
const GRANTS = 2_000;
/** A task waits on up to this many others: a plan's usual fan-in (as the dependency bench). */
const MAX_DEPS = 3;
/** Agents taking turns: more than any person runs, so no agent's write quota is what gets measured. */
const AGENTS = 100;
/** Board time skipped every 50 grants (untimed), so the agents' write quotas refill whole. */
const ROUND_GAP_MS = 60_000;

const must = <T>(r: { ok: true; value: T } | { ok: false; error: { message: string } }): T => {
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
};

/** An agent id as the host makes them (agentIds.ts): its profile is what a task's filter names. */
const agentId = (profile: string, n: number) => `${profile}-${n}-${n.toString(16).padStart(12, '0')}`;

function engineOf(): { engine: LeaseEngine; skip: (ms: number) => void } {
  let skipped = 0;
  const engine = new LeaseEngine(boardClock(0, () => performance.now() + skipped));
  engine.createThread('bench');
  // Agents hold many claims at once here: a person's setting past the default claim limit (3).
  engine.setSettings({ claimLimit: Limits.maxClaimLimit });
  engine.setSettings({ leaseMs: 12 * 60 * 60_000, dispatch: true });
  return { engine, skip: (ms) => (skipped += ms) };
}

/**
 * `dag`: each task waits on 1-3 earlier ones and a third are for `label:frontend` or `claude`; agents of two
 * profiles, half labelled frontend, are dispatched in turn (timed), then the task is done and approved
 * (untimed), which readies those waiting on it. `filtered`: every task is ready but all except T-10000 are for
 * `label:gpu`, which no agent has: each dispatch walks 9,999 ready tasks the agent may not take, then the
 * grant is released and the next agent (its back-off is its own) dispatched.
 */
function dispatches(shape: 'dag' | 'filtered'): number[] {
  const { engine, skip } = engineOf();
  const random = rng(34);
  for (let i = 1; i <= TASKS; i++) {
    const after: string[] = [];
    let takers: string[] = [];
    if (shape === 'dag') {
      if (i > 1) for (let k = 1 + Math.floor(random() * MAX_DEPS); k > 0; k--) after.push(`T-${1 + Math.floor(random() * (i - 1))}`);
      const r = random();
      takers = r < 0.17 ? ['label:frontend'] : r < 0.33 ? ['claude'] : [];
    } else if (i < TASKS) takers = ['label:gpu'];
    must(engine.addTask({ title: `task ${i}` }, 'user', after, takers));
  }
  const agents: string[] = [];
  const count = shape === 'dag' ? AGENTS : 400;
  for (let n = 0; n < count; n++) {
    const id = agentId(n % 2 ? 'claude' : 'shell', n);
    agents.push(id);
    if (n % 4 < 2) must(engine.setAgentDispatch(id, 'thread', ['frontend']));
  }
  const ms: number[] = [];
  const rounds = shape === 'dag' ? GRANTS : count;
  for (let n = 0; n < rounds; n++) {
    const agent = agents[n % agents.length] as string;
    const t0 = performance.now();
    const r = engine.dispatch(agent);
    ms.push(performance.now() - t0);
    if (!r.ok) continue; // nothing this agent may take is ready now: timed all the same
    if (shape === 'filtered') must(engine.release(agent, r.value.taskId, r.value.token));
    else {
      must(engine.done(agent, r.value.taskId, r.value.token));
      must(engine.approve(r.value.taskId));
    }
    if (n % 50 === 49) skip(ROUND_GAP_MS);
  }
  return ms.sort((a, b) => a - b);
}

/** Rounds of each board, alternating, as the dependency bench: pairs back to back see the same load. */
const PAIRS = 20;

/**
 * What dispatch's indexes cost the write path once built: claims by id and releases (each a change of state
 * every index hears) on two 10k-task boards, a third of their tasks for `label:frontend` or `claude`, one of
 * which has dispatched (so its indexes exist). Median over pairs of rounds of built/unbuilt ops/s.
 */
function writeRatio(): { claim: number; release: number } {
  const board = (built: boolean) => {
    const { engine, skip } = engineOf();
    const random = rng(9);
    for (let i = 1; i <= TASKS; i++) {
      const r = random();
      must(engine.addTask({ title: `task ${i}` }, 'user', [], r < 0.17 ? ['label:frontend'] : r < 0.33 ? ['claude'] : []));
    }
    if (built) engine.dispatchPick(agentId('shell', 1));
    const agents = Array.from({ length: TASKS }, (_, i) => `agent-${Math.floor(i / 10)}`);
    return () => {
      const tokens: number[] = [];
      let t0 = process.hrtime.bigint();
      for (let i = 0; i < TASKS; i++) tokens.push(must(engine.claim(agents[i] as string, `T-${i + 1}`)).token);
      const claim = Number(process.hrtime.bigint() - t0);
      t0 = process.hrtime.bigint();
      for (let i = 0; i < TASKS; i++) must(engine.release(agents[i] as string, `T-${i + 1}`, tokens[i]));
      const release = Number(process.hrtime.bigint() - t0);
      skip(ROUND_GAP_MS);
      return { claim, release };
    };
  };
  const plain = board(false);
  const built = board(true);
  const ratios = { claim: [] as number[], release: [] as number[] };
  for (let r = 0; r < PAIRS; r++) {
    let p: { claim: number; release: number };
    let b: { claim: number; release: number };
    if (r % 2 === 0) {
      p = plain();
      b = built();
    } else {
      b = built();
      p = plain();
    }
    ratios.claim.push(p.claim / b.claim);
    ratios.release.push(p.release / b.release);
  }
  return { claim: median(ratios.claim), release: median(ratios.release) };
}

export async function dispatchBench(): Promise<Row[]> {
  dispatches('dag'); // warm the JIT
  const dag = dispatches('dag');
  const filtered = dispatches('filtered');
  return [
    { name: 'dispatch next ready, 10k tasks p50', value: percentile(dag, 50), unit: 'ms', note: `each waits on 1-${MAX_DEPS} earlier, a third for a label or profile; ${GRANTS} grants, each then approved` },
    { name: 'dispatch next ready, 10k tasks p99', value: percentile(dag, 99), unit: 'ms', note: 'goal <= 5' },
    { name: 'dispatch past 9,999 it may not take p50', value: percentile(filtered, 50), unit: 'ms', note: 'all ready, all but T-10000 for label:gpu, which no agent has' },
    { name: 'dispatch past 9,999 it may not take p99', value: percentile(filtered, 99), unit: 'ms', note: 'goal <= 5' },
    ...(() => {
      const w = writeRatio();
      const note = `ops/s with dispatch's indexes built / without (3 indexes: *, claude, label:frontend); median of ${PAIRS} back-to-back pairs`;
      return [
        { name: 'claim by id, 10k tasks, indexes built', value: w.claim, unit: 'ratio', note },
        { name: 'release, 10k tasks, indexes built', value: w.release, unit: 'ratio', note },
      ];
    })(),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) printTable('dispatch', await dispatchBench());
