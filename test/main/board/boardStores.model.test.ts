/**
 * The lease engine's model-based test (test/helpers/leaseModel.ts, the same model, steps and invariants as
 * leaseEngine.model.test.ts) run against each store through BoardService, as a host uses it: the journal, and
 * PostgreSQL with one host and with two hosts on one board. A store passes only by deciding exactly what the
 * bare engine decides, whatever it does to order, keep and share the events.
 *
 * The board's clock is a ManualClock injected into the store (the journal's `monotonic`; PgBoard's
 * `decisionTime`, in place of the database server's clock, and `localClock`, so its estimate between
 * transactions is the same clock). With two hosts, each step goes at random to host A or B (an agent's step
 * makes that host its agent's host, as an agent that moved would). After each step the invariants are checked
 * on the host that ran it (its write caught up under the board's lock, so it holds the head). At random steps,
 * and at the end, the test reads every host: it waits until all hold the board's latest position (the other
 * host follows by its wake-up, LISTEN, or its poll) and checks each. Between those reads nothing waits for the
 * other host, so the next step may well go to a host that has not followed yet, and must decide at the head
 * all the same.
 */
import fc from 'fast-check';
import fs from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import type { Task } from '../../../src-shared/board/model.js';
import type { Result } from '../../../src-shared/board/result.js';
import { ManualClock } from '../../../src-main/base/clock.js';
import type { BoardService } from '../../../src-main/board/boardService.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { PgBoard } from '../../../src-main/board/pg/pgBoard.js';
import { checkInvariants, expectReplays, Model, planStep, setupSteps, stepArb, tasksOf, type GrantWatch, type Op } from '../../helpers/leaseModel.js';
import { startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';

/** The journal costs a synced append per step: as many sequences as the bare engine's 10,000 would take
 *  minutes; 150 of its full length take seconds. */
const JOURNAL_RUNS = Number(process.env.FORKBENCH_STORE_MODEL_RUNS ?? 150);
const JOURNAL_STEPS = 40;
/** Each PostgreSQL step is a transaction (and with two hosts a wake-up of the other): a few dozen sequences of
 *  up to 30 steps keep each case to seconds on a 2-core CI machine; raise it for a longer hunt. */
const PG_RUNS = Number(process.env.FORKBENCH_PG_MODEL_RUNS ?? 40);
const PG_STEPS = 30;
/** How long a host may take to follow a step another host committed: its LISTEN wake-up takes milliseconds; a
 *  missed one is caught by its poll (PgBoard's default 2 s), so this allows for a few polls on a loaded machine. */
const CATCH_UP_MS = 10_000;
/** Whole-case budget: generous, because a failure shrinks (re-running many sequences) before it reports. */
const CASE_TIMEOUT_MS = 600_000;

interface Host extends GrantWatch {
  readonly name: string;
  readonly board: BoardService;
  /** Every event this host published, in the board's order. */
  readonly events: BoardEvent[];
  /** Its tasks as of its last check, and how many of its events that check had seen. */
  checked: { tasks: Map<string, Task>; seen: number };
}

interface Store {
  readonly clock: ManualClock;
  readonly hosts: Host[];
  readonly warnings: string[];
  close(): Promise<void>;
}

function watch(name: string, board: BoardService): Host {
  const events: BoardEvent[] = [];
  board.onEvent((e) => events.push(e));
  return { name, board, events, maxGranted: 0, checked: { tasks: tasksOf(board.engine), seen: 0 } };
}

/** The invariants on one host's engine, over every event it published since its last check. */
function checkHost(m: Model, r: Store, h: Host): void {
  checkInvariants(m, h.board.engine, r.clock.now(), h.checked.tasks, h.events.slice(h.checked.seen), h);
  h.checked = { tasks: tasksOf(h.board.engine), seen: h.events.length };
}

/** Read every host: once all hold the board's head, each keeps the invariants and all hold one board. */
async function checkAll(m: Model, r: Store): Promise<void> {
  await inStep(r.hosts);
  const first = r.hosts[0] as Host;
  for (const h of r.hosts) {
    checkHost(m, r, h);
    expect(h.board.state).toEqual(first.board.state);
  }
}

/** Resolves once `h` holds the board up to `seq`, waiting on its events, not on time. */
function until(h: Host, seq: number): Promise<void> {
  if (h.board.state.seq >= seq) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`host ${h.name} did not follow the board to position ${seq} within ${CATCH_UP_MS} ms (it is at ${h.board.state.seq})`));
    }, CATCH_UP_MS);
    const sub = h.board.onEvent(() => {
      if (h.board.state.seq < seq) return;
      clearTimeout(timer);
      sub.dispose();
      resolve();
    });
  });
}

/** Every host at the latest position any of them holds. */
async function inStep(hosts: Host[]): Promise<void> {
  const head = Math.max(...hosts.map((h) => h.board.state.seq));
  await Promise.all(hosts.map((h) => until(h, head)));
}

class StoreStep implements fc.AsyncCommand<Model, Store> {
  constructor(
    readonly s: Op,
    /** Which host runs the step: 0 is A, 1 is B. */
    readonly via: number,
    /** After the step, read every host (else the next step goes ahead while the other host may lag). */
    readonly readAll: boolean,
  ) {}
  check(): boolean {
    return true;
  }
  toString(): string {
    return `${JSON.stringify(this.s)}@${this.via ? 'B' : 'A'}${this.readAll ? '+read' : ''}`;
  }
  async run(m: Model, r: Store): Promise<void> {
    const host = r.hosts[this.via] as Host;
    const plan = planStep(m, this.s);
    if (plan.advanceMs !== undefined) r.clock.advance(plan.advanceMs);
    if (plan.agent) host.board.membership?.hostAgent(plan.agent);
    const answer = plan.kind === 'decision' ? await host.board.run((e) => plan.call(e) as Result<unknown>) : await host.board.apply((e) => plan.call(e));
    plan.check(answer, host.board.engine);
    checkHost(m, r, host);
    // the store's log (the journal on disk, the database's event table) replays to the board the engine holds
    expectReplays(await host.board.log(), host.board.state);
    if (this.readAll) await checkAll(m, r);
  }
}

async function runSequences(open: (clock: ManualClock) => Promise<Store>, hosts: number, runs: number, steps: number): Promise<void> {
  const cmd = fc.tuple(stepArb, fc.integer({ min: 0, max: hosts - 1 }), fc.boolean()).map(([s, via, readAll]) => new StoreStep(s, via, readAll));
  await fc.assert(
    fc.asyncProperty(fc.commands([cmd], { maxCommands: steps }), async (cmds) => {
      const clock = new ManualClock();
      const store = await open(clock);
      try {
        const first = store.hosts[0] as Host;
        for (const setup of setupSteps) expect((await first.board.run(setup)).ok).toBe(true);
        await inStep(store.hosts);
        for (const h of store.hosts) h.checked = { tasks: tasksOf(h.board.engine), seen: h.events.length };
        const model = new Model();
        await fc.asyncModelRun(() => ({ model, real: store }), cmds);
        await checkAll(model, store);
        expect(store.warnings).toEqual([]);
      } finally {
        await store.close();
      }
    }),
    { numRuns: runs },
  );
}

describe('lease engine model against the journal store', () => {
  it(`keeps the safety properties over ${JOURNAL_RUNS} sequences of up to ${JOURNAL_STEPS} steps`, async () => {
    await runSequences(
      async (clock) => {
        const dir = fs.mkdtempSync(join(os.tmpdir(), 'fb-storemodel-'));
        const warnings: string[] = [];
        const board = await JournalBoard.open({ dir, threadId: 'model', monotonic: () => clock.now(), warn: (w) => warnings.push(w) });
        return {
          clock,
          warnings,
          hosts: [watch('journal', board)],
          close: async () => {
            await board.close();
            fs.rmSync(dir, { recursive: true, force: true });
          },
        };
      },
      1,
      JOURNAL_RUNS,
      JOURNAL_STEPS,
    );
  }, CASE_TIMEOUT_MS);
});

describe('lease engine model against PostgreSQL', () => {
  let pgc: PgCluster;
  let url: string;
  let boards = 0;

  beforeAll(async () => {
    // Durability is not what this test is about (pgBoard.test.ts restarts the server): without fsync each
    // step's commit costs no disk flush, so more sequences fit the same time.
    pgc = await startPgCluster({ fsync: false });
    url = await pgc.createDatabase('model');
  });
  afterAll(() => pgc?.dispose());

  /** `n` hosts on a board of its own (one database, a new board name per sequence), each with its own pool as
   *  a separate machine would have. */
  const pgStore =
    (n: number) =>
    async (clock: ManualClock): Promise<Store> => {
      const name = `model-${++boards}`;
      const dir = fs.mkdtempSync(join(os.tmpdir(), 'fb-pgmodel-'));
      const warnings: string[] = [];
      const opened: Array<{ board: PgBoard; pool: pg.Pool }> = [];
      const close = async (): Promise<void> => {
        for (const { board, pool } of opened.splice(0)) {
          await board.close();
          await pool.end();
        }
        fs.rmSync(dir, { recursive: true, force: true });
      };
      try {
        for (let i = 0; i < n; i++) {
          const hostId = `host-${'AB'[i]}`;
          const pool = new pg.Pool({ connectionString: url, max: 4, pipeline: true });
          pool.on('error', () => undefined);
          opened.push({
            pool,
            board: await PgBoard.open({
              pool,
              listenClient: () => new pg.Client({ connectionString: url }),
              name,
              dir,
              hostId,
              hostName: hostId,
              threadId: 'model',
              decisionTime: () => clock.now(),
              localClock: () => clock.now(),
              warn: (w) => warnings.push(`${hostId}: ${w}`),
            }),
          });
        }
      } catch (err) {
        await close();
        throw err;
      }
      return { clock, warnings, hosts: opened.map(({ board }, i) => watch(`host-${'AB'[i]}`, board)), close };
    };

  it(`one host: keeps the safety properties over ${PG_RUNS} sequences of up to ${PG_STEPS} steps`, async () => {
    await runSequences(pgStore(1), 1, PG_RUNS, PG_STEPS);
  }, CASE_TIMEOUT_MS);

  it(`two hosts on one board, each step on either: keeps the safety properties over ${PG_RUNS} sequences of up to ${PG_STEPS} steps`, async () => {
    await runSequences(pgStore(2), 2, PG_RUNS, PG_STEPS);
  }, CASE_TIMEOUT_MS);
});
