import fc from 'fast-check';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callAsAgent } from '../../../src-main/agents/agentRpc.js';
import type { BoardService } from '../../../src-main/board/boardService.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { PgBoard } from '../../../src-main/board/pg/pgBoard.js';
import type { Board } from '../../../src-shared/board/reducer.js';
import { startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';

/**
 * Property: retries change nothing. Random sequences of keyed agent writes (claims, notes, renewals, done,
 * releases, adds, with current, missing and wrong tokens), person actions and time passing run on two real
 * boards (journal on disk) in step; one of them also gets, at random points, earlier writes sent again with
 * their keys — the retries a lost answer causes. Each retry must be answered exactly as its first try was,
 * and the two boards must end the same, event for event: a retry lands nothing, refused or not. Run on both
 * stores: two journals, and two boards on PostgreSQL (a restart there is a new PgBoard of the same host, whose
 * keys come back from the database).
 */
const AGENTS = ['a', 'b'] as const;
const TASKS = ['T-1', 'T-2', 'T-3'] as const;
const LEASE = 2_000;
const RUNS = Number(process.env.FORKBENCH_KEY_MODEL_RUNS ?? 200);
/** Each PostgreSQL write is a transaction and each restart a new pool and board: a few dozen sequences keep
 *  the case to seconds on a 2-core CI machine. */
const PG_RUNS = Number(process.env.FORKBENCH_PG_KEY_MODEL_RUNS ?? 30);
/** Whole-case budget: generous, because a failure shrinks (re-running many sequences) before it reports. */
const CASE_TIMEOUT_MS = 300_000;

type AgentOp =
  | { op: 'claim'; agent: string; task: string | null }
  | { op: 'renew' | 'release'; agent: string; task: string; tok: number }
  | { op: 'note' | 'done'; agent: string; task: string; tok: number; text: string }
  | { op: 'add'; agent: string; text: string };
type Step = AgentOp | { op: 'advance'; ms: number } | { op: 'person'; act: 'approve' | 'userRelease'; task: string } | { op: 'retry'; pick: number; times: number; reopen: boolean };

const agent = fc.constantFrom(...AGENTS);
const task = fc.constantFrom(...TASKS);
// 0: no token; else an offset from the newest token granted (0 the newest, 1 the one before…).
const tok = fc.integer({ min: -1, max: 3 });
const text = fc.constantFrom('x', 'y', 'z');
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('claim' as const), agent, task: fc.option(task, { nil: null }) }),
  fc.record({ op: fc.constantFrom('renew' as const, 'release' as const), agent, task, tok }),
  fc.record({ op: fc.constantFrom('note' as const, 'done' as const), agent, task, tok, text }),
  fc.record({ op: fc.constant('add' as const), agent, text }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: LEASE + 500 }) }),
  fc.record({ op: fc.constant('person' as const), act: fc.constantFrom('approve' as const, 'userRelease' as const), task }),
  fc.record({ op: fc.constant('retry' as const), pick: fc.nat(), times: fc.integer({ min: 1, max: 2 }), reopen: fc.boolean() }),
);

/** A board's state without its wall-clock stamps (each board reads Date.now() for them). */
function shape(b: Readonly<Board>): unknown {
  return {
    seq: b.seq,
    nextToken: b.nextToken,
    tasks: [...b.tasks.values()].map((t) => ({ id: t.id, state: t.state, claim: t.claim && { ...t.claim, grantedAtWall: 0 }, notes: t.notes.map((n) => [n.by, n.text]), failures: t.failures })),
  };
}

function paramsOf(s: AgentOp, newest: number): Record<string, unknown> {
  const token = s.op === 'claim' || s.op === 'add' || s.tok < 0 ? undefined : Math.max(1, newest - s.tok);
  switch (s.op) {
    case 'claim':
      return s.task === null ? {} : { taskId: s.task };
    case 'add':
      return { title: s.text };
    case 'note':
      return { taskId: s.task, text: s.text, token };
    case 'done':
      return { taskId: s.task, token, note: s.text };
    default:
      return { taskId: s.task, token };
  }
}

/** Opens (and, called again with the same name, reopens: a host restart) one board of a sequence, and closes
 *  one. */
interface Store {
  open(name: 'retried' | 'plain', root: string, now: () => number): Promise<BoardService>;
  close(board: BoardService): Promise<void>;
}

const holders = { fateOf: () => 'alive' as const };

const journal: Store = {
  open: (name, root, now) => JournalBoard.open({ dir: join(root, name), threadId: 'm', monotonic: now, holders, warn: () => undefined }),
  close: (board) => board.close(),
};

async function runSequence(steps: Step[], store: Store = journal): Promise<void> {
  const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-keymodel-'));
  let t = 0;
  const open = (name: 'retried' | 'plain') => store.open(name, root, () => t);
  let retried = await open('retried');
  let plain = await open('plain');
  try {
    for (const b of [retried, plain]) {
      await b.run((e) => e.setSettings({ leaseMs: LEASE }));
      for (const _ of TASKS) await b.run((e) => e.addTask({ title: 't' }));
    }
    const sent: Array<{ agent: string; method: string; params: Record<string, unknown>; answer: unknown }> = [];
    let n = 0;
    for (const s of steps) {
      if (s.op === 'advance') {
        t += s.ms;
        continue;
      }
      if (s.op === 'person') {
        const act = s.act;
        for (const b of [retried, plain]) await b.run((e) => (act === 'approve' ? e.approve(s.task) : e.userRelease(s.task)));
        continue;
      }
      if (s.op === 'retry') {
        if (!sent.length) continue;
        const first = sent[s.pick % sent.length] as (typeof sent)[number];
        if (s.reopen) {
          // A retry after the board host restarted: the key comes back from the journal. Both restart, so
          // both boards' clocks resume alike (from their last event).
          await store.close(retried);
          await store.close(plain);
          retried = await open('retried');
          plain = await open('plain');
        }
        for (let i = 0; i < s.times; i++) expect(await callAsAgent(retried, first.agent, first.method, first.params)).toEqual(first.answer);
        continue;
      }
      const params = { ...paramsOf(s, plain.state.nextToken - 1), key: `k-${n++}` };
      const a = await callAsAgent(retried, s.agent, s.op, params);
      const b = await callAsAgent(plain, s.agent, s.op, params);
      expect(a).toEqual(b);
      sent.push({ agent: s.agent, method: s.op, params, answer: a });
    }
    expect(shape(retried.state)).toEqual(shape(plain.state));
  } finally {
    await store.close(retried);
    await store.close(plain);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

describe('idempotency keys: a retried write lands nothing (model-based)', () => {
  it('boards with and without retries end the same, and every retry gets its first answer', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 40 }), (steps) => runSequence(steps)),
      { numRuns: RUNS },
    );
  }, 300_000);
});

describe('idempotency keys on PostgreSQL: a retried write lands nothing (model-based)', () => {
  let pgc: PgCluster;
  let url: string;
  let sequences = 0;
  /** Each board's pool, ended when the board closes: a restart is a new pool, as a new process has. */
  const pools = new Map<BoardService, pg.Pool>();

  beforeAll(async () => {
    // Durability is not what this test is about (pgBoard.test.ts restarts the server): without fsync a
    // commit costs no disk flush, so more sequences fit the same time.
    pgc = await startPgCluster({ fsync: false });
    url = await pgc.createDatabase('keys');
  });
  afterAll(() => pgc?.dispose());

  /** A sequence's boards: two board names of its own in one database, one host each, on the test's clock. */
  const postgres = (): Store => {
    const seq = ++sequences;
    const open: Store['open'] = async (name, root, now) => {
      const pool = new pg.Pool({ connectionString: url, max: 4, pipeline: true });
      pool.on('error', () => undefined);
      const board = await PgBoard.open({
        pool,
        listenClient: () => new pg.Client({ connectionString: url }),
        name: `keys-${seq}-${name}`,
        dir: root,
        hostId: `host-${name}`,
        hostName: name,
        threadId: 'm',
        holders,
        decisionTime: now,
        localClock: now,
        warn: () => undefined,
      });
      // Its agents are this host's, as its pty host's would be: after a restart their claims get grace, as
      // the journal's do.
      for (const a of AGENTS) board.hostAgent(a);
      pools.set(board, pool);
      return board;
    };
    const close = async (board: BoardService): Promise<void> => {
      await board.close();
      await pools.get(board)?.end();
      pools.delete(board);
    };
    return { open, close };
  };

  it('boards with and without retries end the same, and every retry gets its first answer', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 40 }), (steps) => runSequence(steps, postgres())),
      { numRuns: PG_RUNS },
    );
  }, CASE_TIMEOUT_MS);
});
