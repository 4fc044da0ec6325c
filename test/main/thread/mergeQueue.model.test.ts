import fc from 'fast-check';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { USER, type Task } from '../../../src-shared/board/model.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import type { BoardService } from '../../../src-main/board/boardService.js';
import { WorktreeError } from '../../../src-main/git/taskRepo.js';
import type { MergeCandidate } from '../../../src-main/git/taskReview.js';
import { MergeQueue, type LandingSteps } from '../../../src-main/thread/mergeQueue.js';
import { ApprovalSeal } from '../../../src-main/thread/approvalSeal.js';
import type { QueueEntry } from '../../../src-shared/board/model.js';
import type { VerifyOutcome } from '../../../src-main/agents/verifyRunner.js';

/**
 * Issue 34, the merge queue, model-based: random sequences of adding tasks (with dependencies), submitting them,
 * approving them (into the queue), reordering the queue, a person's reject or removal of a queued task, and host
 * restarts (the runner gone mid-verify, the board reopened from its journal), against the real engine, journal
 * and runner. The repository is a model (a list of base commits) and each verify's outcome, each conflict and
 * each person's commit to the base during a verify is drawn by fast-check. After every step, and once the queue
 * is idle at the end:
 * - the base only ever moves to a merge whose verify passed, and only from the head it was merged onto;
 * - an entry lands only once every task it waits on is done, and it is the lowest-ranked entry that can land;
 * - a failing verify or a conflict sends the task back (not done, not queued) with the output in a note;
 * - at the end nothing that could land is left in the queue.
 */

const RUNS = Number(process.env.FORKBENCH_QUEUE_MODEL_RUNS ?? 150);
const ID_COUNT = 7;
const START_TASKS = 4;
const ids = Array.from({ length: ID_COUNT }, (_, i) => `T-${i + 1}`);

type Op =
  | { op: 'add'; after: string[] }
  /** A person changes what a task waits on (a queued one too): refused when it would close a cycle. */
  | { op: 'after'; task: string; after: string[] }
  | { op: 'submit'; task: string }
  | { op: 'approve'; task: string }
  | { op: 'move'; task: string; before: string | null }
  | { op: 'reject' | 'unqueue'; task: string }
  | { op: 'submitSome' | 'approveSome'; pick: number }
  | { op: 'settle' }
  | { op: 'restart' };

const id = fc.constantFrom(...ids);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ op: fc.constant('add' as const), after: fc.array(id, { maxLength: 2 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('after' as const), task: id, after: fc.array(id, { maxLength: 2 }) }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('submit' as const), task: id }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('approve' as const), task: id }) },
  // The same two, on a task in the state they need (picked among them): most sequences then reach the queue.
  { weight: 4, arbitrary: fc.record({ op: fc.constant('submitSome' as const), pick: fc.nat() }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('approveSome' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('move' as const), task: id, before: fc.option(id, { nil: null }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('reject' as const, 'unqueue' as const), task: id }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('settle' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('restart' as const) }) },
);
/** What each merge's check meets, drawn per call: its verify passes, it conflicts, a person commits to the base
 *  while it verifies, the host is killed while it verifies. */
const worldArb = fc.record({
  pass: fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
  conflict: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 40, maxLength: 40 }),
  personCommit: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 40, maxLength: 40 }),
  hang: fc.array(fc.integer({ min: 0, max: 7 }), { minLength: 40, maxLength: 40 }),
});
interface World {
  pass: boolean[];
  conflict: number[];
  personCommit: number[];
  hang: number[];
}

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

/** The repository as the queue's steps see it, with what the invariants need recorded beside it. */
/** The host's approval key: the person's approvals are sealed with it, as the window's are. */
const hostSeal = ApprovalSeal.ephemeral();

class ModelRepo implements LandingSteps {
  base: string[] = ['c0'];
  private n = 0;
  private call = 0;
  /** Each merge's verify outcome; the base may move only to merges that passed. */
  readonly verified = new Map<string, boolean>();
  readonly violations: string[] = [];
  /** The entry whose merge moved under it: its next candidate is a retry, not a new pick. */
  private retrying: string | null = null;
  /** The first verify of a host that hangs (the host killed mid-verify): it never answers. */
  hung = false;
  private hangs: () => void = () => undefined;
  /** Resolves once a verify of this host hangs: waiting for the queue to be idle then would wait forever. */
  hanging = new Promise<void>((r) => (this.hangs = r));

  /** A new host: its verifies may hang again (`mayHang`). */
  restarted(mayHang: boolean): void {
    this.hung = !mayHang;
    this.hanging = new Promise<void>((r) => (this.hangs = r));
  }

  constructor(
    private readonly board: () => BoardService,
    private readonly world: World,
  ) {}

  private draw<K extends keyof World>(k: K): World[K][number] {
    return this.world[k][this.call++ % this.world[k].length] as World[K][number];
  }

  async candidate(t: Task): Promise<MergeCandidate> {
    const tasks = this.board().state.tasks;
    if (this.retrying !== t.id && !t.queued?.landing) {
      // The oracle, apart from the queue's order: every task it waits on is done, and no entry that could land
      // has a lower rank (one that can land waits on no queued task, so landing order puts it first).
      const open = (t.after ?? []).filter((d) => tasks.get(d)?.state !== 'done');
      if (open.length) this.violations.push(`${t.id} picked while ${open.join(', ')} not done`);
      for (const o of tasks.values()) {
        if (!o.queued || o.id === t.id || (o.after ?? []).some((d) => tasks.get(d)?.state !== 'done')) continue;
        if (o.queued.rank < (t.queued?.rank ?? 0)) this.violations.push(`${t.id} picked before ${o.id}, which could land and ranks lower`);
      }
    }
    this.retrying = null;
    if (this.draw('conflict') === 0) throw new WorktreeError('merge-conflict', `${t.id} does not merge cleanly: conflicts in f.txt`);
    return { base: 'main', onto: this.base.at(-1) as string, merge: `m${++this.n}-${t.id}` };
  }

  async verify(t: Task, c: MergeCandidate): Promise<VerifyOutcome> {
    const passed = this.draw('pass');
    if (this.draw('personCommit') === 0) this.base.push(`p${++this.n}`);
    if (!this.hung && this.draw('hang') === 0) {
      this.hung = true;
      this.hangs();
      return new Promise<VerifyOutcome>(() => undefined);
    }
    this.verified.set(c.merge as string, passed);
    await new Promise<void>((r) => setImmediate(r));
    return { passed, exitCode: passed ? 0 : 1, signal: null, timedOut: false, durationMs: 1, tail: `FAILED in ${t.id}` };
  }

  async land(t: Task, c: MergeCandidate): Promise<boolean> {
    if (this.base.at(-1) !== c.onto) {
      this.retrying = t.id;
      return false;
    }
    if (this.verified.get(c.merge as string) !== true) this.violations.push(`base moved to ${c.merge}, whose verify did not pass`);
    const open = (t.after ?? []).filter((d) => this.board().state.tasks.get(d)?.state !== 'done');
    if (open.length) this.violations.push(`${t.id} landed while ${open.join(', ')} not done`);
    this.base.push(c.merge as string);
    return true;
  }

  sealed(t: Task, entry: QueueEntry): boolean {
    return hostSeal.holds(this.board().state.threadId, t.id, entry);
  }

  async landed(_t: Task, merge: string): Promise<boolean> {
    return this.base.includes(merge);
  }

  async approve(t: Task, _c: MergeCandidate | null, by: string): Promise<void> {
    const r = await this.board().run((e) => e.approve(t.id, by));
    if (!r.ok) throw new Error(r.error.message);
  }
}

async function runSequence(ops: Op[], world: World): Promise<void> {
  const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-mq-model-'));
  roots.push(root);
  const open = () => JournalBoard.open({ dir: root, threadId: 'mq', warn: () => undefined });
  let board = await open();
  await board.run((e) => e.setSettings({ verify: 'make check' }));
  // A few tasks to start with, so most steps meet a board with work on it.
  for (let i = 0; i < START_TASKS; i++) await board.run((e) => e.addTask({ title: `start ${i + 1}` }));
  const repo = new ModelRepo(() => board, world);
  const start = () => {
    const q = new MergeQueue(board, repo, board.clock);
    q.start();
    return q;
  };
  let queue = start();
  const check = () => expect(repo.violations).toEqual([]);
  for (const o of ops) {
    switch (o.op) {
      case 'add':
        await board.run((e) => e.addTask({ title: 'work' }, USER, o.after.filter((d) => board.state.tasks.has(d))));
        break;
      case 'after':
        await board.run((e) => e.editTask(o.task, {}, USER, o.after));
        break;
      case 'submit':
        if (board.state.tasks.get(o.task)?.state !== 'open') break;
        await board.run((e) => e.claim('a', o.task, true));
        await board.run((e) => e.done('a', o.task));
        break;
      case 'submitSome':
      case 'approveSome': {
        const want = o.op === 'submitSome' ? 'open' : 'review';
        const some = [...board.state.tasks.values()].filter((t) => t.state === want && !t.queued);
        const t = some[o.pick % Math.max(1, some.length)];
        if (!t) break;
        if (o.op === 'submitSome') {
          await board.run((e) => e.claim('a', t.id, true));
          await board.run((e) => e.done('a', t.id));
        } else await board.run((e) => e.enqueue(t.id, USER, (a) => hostSeal.seal(a)));
        break;
      }
      case 'approve':
        // What ClaimWorktrees.approve does with work to merge; its caller's wait is the queue's business.
        await board.run((e) => e.enqueue(o.task, USER, (a) => hostSeal.seal(a)));
        break;
      case 'move':
        await board.run((e) => e.moveQueued(o.task, o.before, USER));
        break;
      case 'reject':
        await board.run((e) => e.rejectReview(o.task, 'not like this', USER));
        break;
      case 'unqueue':
        await board.run((e) => e.unqueue(o.task, 'not yet', USER));
        break;
      case 'settle':
        await Promise.race([queue.idle(), repo.hanging]);
        break;
      case 'restart':
        // The host goes (a verify may hang in it: it is never answered), and the next one opens the journal.
        queue.dispose();
        await board.close();
        board = await open();
        repo.restarted(true);
        queue = start();
        break;
    }
    check();
  }
  // The last host is stopped (a verify of it may hang) and a fresh one, whose verifies all answer, drains the rest.
  queue.dispose();
  await board.close();
  board = await open();
  repo.restarted(false);
  queue = start();
  await queue.idle();
  check();
  const tasks = [...board.state.tasks.values()];
  for (const t of tasks) {
    if (t.queued) expect((t.after ?? []).some((d) => board.state.tasks.get(d)?.state !== 'done'), `${t.id} left in the queue though it could land`).toBe(true);
    // A task sent back by a failing verify carries the output's tail in its reason.
    if (t.sentBack?.by === 'verify') expect(t.sentBack.reason).toContain(`FAILED in ${t.id}`);
  }
  // Every merge the base holds passed its verify; the person's commits are the rest.
  for (const c of repo.base.slice(1)) if (c.startsWith('m')) expect(repo.verified.get(c)).toBe(true);
  queue.dispose();
  await board.close();
}

describe('merge queue (model-based)', () => {
  it('never moves the base to a merge whose verify failed, and lands in dependency order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 40 }), worldArb, async (ops, world) => runSequence(ops, world)),
      { numRuns: RUNS },
    );
  }, 600_000);
});
