import { createHash } from 'node:crypto';
import fc from 'fast-check';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HOST_ACTOR, USER, type QueueEntry, type SealedApproval, type Task } from '../../../src-shared/board/model.js';
import { Limits } from '../../../src-shared/board/limits.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { readLog } from '../../../src-main/board/journal.js';
import type { BoardService } from '../../../src-main/board/boardService.js';
import type { LeaseEngine } from '../../../src-main/board/leaseEngine.js';
import { queuedInRank } from '../../../src-shared/board/mergeQueue.js';
import type { ApprovedWork, MergeCandidate } from '../../../src-main/git/taskReview.js';
import { MergeQueue, type LandingSteps } from '../../../src-main/thread/mergeQueue.js';
import { ApprovalSeal } from '../../../src-main/thread/approvalSeal.js';
import type { VerifyOutcome } from '../../../src-main/agents/verifyRunner.js';
import type { Result } from '../../../src-shared/board/result.js';

/**
 * Issue 49, model-based: the merge queue lands exactly what the person approved, or nothing. Random sequences
 * of claims, commits and dones, approvals, the person's reassigns, releases, rejects and take-outs, the
 * holder's own release, lapses (the board clock moved past the lease), new dones after a send-back, and host
 * restarts, against the real engine, journal and runner. The landing's steps are a model of a repository
 * (a list of base commits) which, drawn by fast-check, answers a take-back of the entry in flight: while its
 * merge is made, while its verify runs, and while the base moves. After every step and once the queue is idle:
 * - the base only ever moves to a merge of a commit the person approved under the token it was approved for,
 *   while that approval still stood: every take-back answered before the landing wins;
 * - a take-back asked while the base moves (after the board agreed to the landing) is refused, not answered;
 * - every landing the board agreed to ends approved, on this host or the next one (a restart in between);
 * - the queue is never left with an entry that could land.
 * Someone with the store's key also appends approvals the person never made (issue 42): unsealed, sealed with
 * another key, or a copy of a seal the person's approval of the task once carried, also while the approval it
 * was copied from is being landed and just taken back. None of them lands.
 */

/** A model commit's name as git would write one: the board checks what it reads back (storedEvents.ts), and a
 *  board holds no other. */
const oid = (name: string): string => createHash('sha1').update(name).digest('hex');
const RUNS = Number(process.env.FORKBENCH_QUEUE_MODEL_RUNS ?? 120);
const AGENTS = ['a', 'b', 'c'] as const;
const START_TASKS = 4;

type TakeBack = 'reassign' | 'release' | 'reject' | 'unqueue';
type Op =
  | { op: 'add' }
  /** An open task is claimed, committed on and said done; a claimed one (reassigned, sent back) is worked anew. */
  | { op: 'work'; pick: number; agent: number }
  | { op: 'approve'; pick: number }
  | { op: 'takeBack'; what: TakeBack; pick: number; agent: number }
  /** The holder lets go of its task in review: the work stays frozen in review, and so does its approval. */
  | { op: 'agentRelease'; pick: number }
  | { op: 'lapse' }
  | { op: 'settle' }
  | { op: 'restart' }
  /** A queue entry written into the store, not by the person's window: no seal, another key's, or a replay. */
  | { op: 'forge'; pick: number; how: Forgery };
type Forgery = 'unsealed' | 'otherKey' | 'replayed';

const pick = fc.nat();
const agent = fc.integer({ min: 0, max: AGENTS.length - 1 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ op: 'add' as const }) },
  { weight: 8, arbitrary: fc.record({ op: fc.constant('work' as const), pick, agent }) },
  { weight: 8, arbitrary: fc.record({ op: fc.constant('approve' as const), pick }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('takeBack' as const), what: fc.constantFrom<TakeBack>('reassign', 'release', 'reject', 'unqueue'), pick, agent }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('agentRelease' as const), pick }) },
  { weight: 1, arbitrary: fc.constant({ op: 'lapse' as const }) },
  { weight: 2, arbitrary: fc.constant({ op: 'settle' as const }) },
  { weight: 2, arbitrary: fc.constant({ op: 'restart' as const }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('forge' as const), pick, how: fc.constantFrom<Forgery>('unsealed', 'otherKey', 'replayed') }) },
);
/** The host's approval key (every host of a run shares its data folder, so its key), and one no host holds. */
const hostSeal = ApprovalSeal.ephemeral();
const otherSeal = ApprovalSeal.ephemeral();
/** What happens to the entry being landed, drawn per landing step: nothing (most often), or a person's take-back
 *  of it asked right then (0-3: reassign, release, reject, take out), and whether its verify passes. */
const worldArb = fc.record({
  inMerge: fc.array(fc.integer({ min: 0, max: 19 }), { minLength: 30, maxLength: 30 }),
  inVerify: fc.array(fc.integer({ min: 0, max: 19 }), { minLength: 30, maxLength: 30 }),
  inMove: fc.array(fc.integer({ min: 0, max: 7 }), { minLength: 30, maxLength: 30 }),
  pass: fc.array(fc.integer({ min: 0, max: 7 }), { minLength: 30, maxLength: 30 }),
  /** How long (turns of the event loop) the base's move and the approval after it take: a restart may come
   *  between the board's agreement and the move, or between the move and the approval. */
  slow: fc.array(fc.integer({ min: 0, max: 30 }), { minLength: 30, maxLength: 30 }),
});
type World = { inMerge: number[]; inVerify: number[]; inMove: number[]; pass: number[]; slow: number[] };
const TAKE_BACKS: readonly TakeBack[] = ['reassign', 'release', 'reject', 'unqueue'];
/** A world's draw past the take-backs that replays the person's seal mid-landing (see interfere). */
const REPLAY_IN_FLIGHT = TAKE_BACKS.length;

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

const keyOf = (w: ApprovedWork) => `${w.sha}|${w.token}`;

/** What the runs exercised, over all of them: a property that never met a landing proves nothing. */
const seen = { landed: 0, answeredInFlight: 0, refusedInMove: 0, restartsCommitting: 0, forgedTakenOut: 0, replayedInFlight: 0 };

/** The person: what they approved and have not taken back (the approvals that stand), per task. */
class Person {
  readonly standing = new Map<string, string>();
  /** The seal each task's last approval carried, for a forger to copy. */
  readonly seals = new Map<string, string>();
  constructor(private readonly board: () => BoardService) {}

  async approve(id: string): Promise<void> {
    const r = await this.board().run((e) => e.enqueue(id, USER, (a) => hostSeal.seal(a)));
    if (r.ok) this.standing.set(id, keyOf({ sha: r.value.sha, token: r.value.token ?? null }));
    if (r.ok && r.value.seal) this.seals.set(id, r.value.seal);
  }

  /** A take-back answered ok wins: the approval no longer stands. Returns whether it was answered. */
  async takeBack(what: TakeBack, id: string, to: string): Promise<boolean> {
    const r = await this.board().run((e): Result<unknown> => {
      if (what === 'reassign') return e.assign(id, to, USER, true);
      if (what === 'release') return e.userRelease(id, USER);
      if (what === 'reject') return e.rejectReview(id, 'not like this', USER);
      return e.unqueue(id, 'not yet', USER);
    });
    if (r.ok) this.standing.delete(id);
    return r.ok;
  }
}

/** The repository as the queue's steps see it, and the judge of what moves its base. */
class ModelRepo implements LandingSteps {
  base: string[] = [oid('c0')];
  private n = 0;
  private calls = { inMerge: 0, inVerify: 0, inMove: 0, pass: 0, slow: 0 };
  /** What each merge is of: the approval (sha|token) the runner asked to merge. */
  readonly mergeOf = new Map<string, string>();
  readonly violations: string[] = [];
  /** Landings the board agreed to (queue-committed) whose base moved: each must end approved. */
  readonly movedFor = new Map<string, string>();

  constructor(
    private readonly board: () => BoardService,
    private readonly person: Person,
    private readonly world: World,
  ) {}

  /** Some turns of the event loop, as a git process or a journal write takes. */
  async slowly(): Promise<void> {
    for (let i = this.draw('slow'); i > 0; i--) await new Promise<void>((r) => setImmediate(r));
  }

  private draw(k: keyof World): number {
    const a = this.world[k];
    return a[this.calls[k]++ % a.length] as number;
  }

  /** A take-back of the entry in flight, asked by the person now, if the world says so; or (REPLAY_IN_FLIGHT)
   *  the person's take-out followed at once by a copy of the seal their approval carried, appended by someone
   *  with the store's key while the landing is between its seal check and its board steps. */
  private async interfere(k: 'inMerge' | 'inVerify' | 'inMove', t: Task): Promise<{ what: TakeBack; answered: boolean } | null> {
    const d = this.draw(k);
    if (d === REPLAY_IN_FLIGHT && k !== 'inMove') {
      const copied = this.person.seals.get(t.id);
      const at = this.board().state.tasks.get(t.id)?.queued?.at;
      const answered = await this.person.takeBack('unqueue', t.id, '');
      console.log("REPLAY", at, answered, !!copied);
      // The copy says the approval's time and takes the head of the queue (a 'queue-moved' row of its own), where
      // the approval it copies was being landed.
      const forge = (e: LeaseEngine): Result<unknown> => {
        const r = e.enqueue(t.id, USER, () => copied as string);
        const head = queuedInRank(e.state.tasks)[0];
        return r.ok && head && head.id !== t.id ? e.moveQueued(t.id, head.id) : r;
      };
      if (answered && copied && at !== undefined && (await forgedAt(at, () => this.board().run(forge))).ok) seen.replayedInFlight++;
      return { what: 'unqueue', answered };
    }
    const what = TAKE_BACKS[d];
    if (!what) return null;
    const holder = this.board().state.tasks.get(t.id)?.claim?.agentId;
    const to = AGENTS.find((a) => a !== holder) as string;
    return { what, answered: await this.person.takeBack(what, t.id, to) };
  }

  async candidate(t: Task, approved: ApprovedWork): Promise<MergeCandidate> {
    if ((await this.interfere('inMerge', t))?.answered) seen.answeredInFlight++;
    const merge = oid(`m${++this.n}-${t.id}`);
    // Exactly what the runner asked for, checked by nothing here: the board's compare-and-set is under test.
    this.mergeOf.set(merge, keyOf(approved));
    return { base: 'main', onto: this.base.at(-1) as string, merge };
  }

  async verify(t: Task): Promise<VerifyOutcome> {
    if ((await this.interfere('inVerify', t))?.answered) seen.answeredInFlight++;
    const passed = this.draw('pass') !== 0;
    await new Promise<void>((r) => setImmediate(r));
    return { passed, exitCode: passed ? 0 : 1, signal: null, timedOut: false, durationMs: 1, tail: `FAILED in ${t.id}` };
  }

  async land(t: Task, c: MergeCandidate): Promise<boolean> {
    // The board agreed; a take-back asked now must be refused, or it would be answered and lose.
    const late = await this.interfere('inMove', t);
    if (late && !late.answered) seen.refusedInMove++;
    if (late?.answered) this.violations.push(`a ${late.what} of ${t.id} was answered after the board agreed to land ${c.merge}`);
    if (this.base.at(-1) !== c.onto) return false;
    const merge = c.merge as string;
    const approval = this.mergeOf.get(merge);
    const standing = this.person.standing.get(t.id);
    if (approval !== standing) this.violations.push(`base moved to ${merge}, a merge of ${t.id} at ${approval}, but the approval that stands is ${standing ?? 'none'}`);
    this.base.push(merge);
    this.movedFor.set(t.id, merge);
    seen.landed++;
    return true;
  }

  sealed(t: Task, entry: QueueEntry): boolean {
    return hostSeal.holds(this.board().state.threadId, t.id, entry);
  }

  async landed(_t: Task, merge: string): Promise<boolean> {
    return this.base.includes(merge);
  }

  /** The steps as one host runs them: once it is gone (a restart), nothing of it acts again, as a process
   *  killed in any step does nothing more; its calls never answer. */
  forHost(): { steps: LandingSteps; die: () => void } {
    let alive = true;
    const gate =
      <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
      async (...a: A): Promise<R> =>
        alive ? f(...a) : new Promise<R>(() => undefined);
    const steps: LandingSteps = {
      candidate: gate((t: Task, w: ApprovedWork) => this.candidate(t, w)),
      verify: gate((t: Task) => this.verify(t)),
      // A host may die in the slow part before the base moves, or after it and before the approval.
      land: gate(async (t: Task, c: MergeCandidate) => {
        await this.slowly();
        return alive ? this.land(t, c) : new Promise<boolean>(() => undefined);
      }),
      landed: gate((t: Task, m: string) => this.landed(t, m)),
      sealed: (t, entry) => this.sealed(t, entry),
      approve: gate(async (t: Task, c: MergeCandidate | null, by: string) => {
        await this.slowly();
        return alive ? this.approve(t, c, by) : new Promise<void>(() => undefined);
      }),
    };
    return { steps, die: () => (alive = false) };
  }

  async approve(t: Task, _c: MergeCandidate | null, by: string): Promise<void> {
    const r = await this.board().run((e) => e.approve(t.id, by));
    if (!r.ok) this.violations.push(`the base moved for ${t.id}, but its approval was refused: ${r.error.message}`);
    else this.person.standing.delete(t.id);
  }
}

/** A row written with the store's key says whatever time its writer likes: here, the time of the approval it
 *  copies, so nothing but its position tells the copy from the original. */
async function forgedAt<T>(at: number, write: () => Promise<T>): Promise<T> {
  const wall = Date.now;
  Date.now = () => at;
  try {
    return await write();
  } finally {
    Date.now = wall;
  }
}

let shaN = 0;
/** An agent's commit on the task it holds, recorded by the board as the fence would (a worktree of the claim,
 *  a move of its branch from the record), then its done: the work the person may approve. */
async function commitAndDone(board: BoardService, id: string): Promise<void> {
  const t = board.state.tasks.get(id);
  const c = t?.claim;
  if (!t || !c || t.state !== 'claimed') return;
  const branch = `forkbench/${id}`;
  if (t.worktree?.token !== c.token)
    await board.run((e) => e.recordWorktree(id, { path: `/wt/${id}-${c.token}`, branch, token: c.token, base: 'main', baseCommit: oid('c0') }, HOST_ACTOR, { sha: oid('c0'), tree: oid('t0'), token: 0, by: HOST_ACTOR }));
  const from = board.state.tasks.get(id)?.record?.sha ?? oid('c0');
  const sha = oid(`w${++shaN}`);
  // The runner may take the task back meanwhile (a take-back it draws): refused then, as an agent is.
  const rec = await board.run((e) => e.recordBranch(c.agentId, id, c.token, { ref: `refs/heads/${branch}`, from, to: sha, tree: oid(`tree-${sha}`) }));
  if (rec.ok) await board.run((e) => e.done(c.agentId, id, c.token));
}

function pickOf(board: BoardService, n: number, f: (t: Task) => boolean): Task | undefined {
  const some = [...board.state.tasks.values()].filter(f);
  return some[n % Math.max(1, some.length)];
}

async function runSequence(ops: Op[], world: World): Promise<void> {
  const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-mq-takeback-'));
  roots.push(root);
  let now = 1_000;
  const open = () => JournalBoard.open({ dir: root, threadId: 'mq', monotonic: () => now, warn: () => undefined });
  let board = await open();
  // The queue's take-backs, not the claim limit, are under test: the person lets an agent hold every task.
  await board.run((e) => e.setSettings({ verify: 'make check', claimLimit: Limits.maxClaimLimit }));
  for (let i = 0; i < START_TASKS; i++) await board.run((e) => e.addTask({ title: `start ${i + 1}` }));
  const person = new Person(() => board);
  const repo = new ModelRepo(() => board, person, world);
  let die = () => undefined as void;
  const start = () => {
    const host = repo.forHost();
    die = host.die;
    const q = new MergeQueue(board, host.steps, board.clock);
    q.start();
    return q;
  };
  let queue = start();
  const stop = async () => {
    die();
    queue.dispose();
    await board.close();
  };
  const check = (where: string) => expect(repo.violations, where).toEqual([]);
  for (const [i, o] of ops.entries()) {
    switch (o.op) {
      case 'add':
        await board.run((e) => e.addTask({ title: 'work' }));
        break;
      case 'work': {
        const t = pickOf(board, o.pick, (x) => x.state === 'open' || x.state === 'claimed');
        if (!t) break;
        if (t.state === 'open') {
          const r = await board.run((e) => e.claim(AGENTS[o.agent] as string, t.id, true));
          if (!r.ok) break;
        }
        await commitAndDone(board, t.id);
        break;
      }
      case 'approve': {
        const t = pickOf(board, o.pick, (x) => x.state === 'review' && !x.queued);
        if (t) await person.approve(t.id);
        break;
      }
      case 'takeBack': {
        // Mostly a queued task (the point), sometimes any in review.
        const t = pickOf(board, o.pick, (x) => !!x.queued) ?? pickOf(board, o.pick, (x) => x.state === 'review');
        if (!t) break;
        const holder = t.claim?.agentId;
        const to = AGENTS[o.agent] === holder ? (AGENTS.find((a) => a !== holder) as string) : (AGENTS[o.agent] as string);
        await person.takeBack(o.what, t.id, to);
        break;
      }
      case 'agentRelease': {
        const t = pickOf(board, o.pick, (x) => x.state === 'review' && !!x.claim);
        if (t?.claim) await board.run((e) => e.release(t.claim?.agentId as string, t.id, t.claim?.token));
        break;
      }
      case 'lapse':
        // Every lease runs out: claimed tasks go back to the backlog, work in review stays there unheld.
        now += Limits.defaultLeaseMs + 1;
        await board.apply((e) => e.sweep());
        break;
      case 'settle':
        await queue.idle();
        break;
      case 'forge': {
        const t = pickOf(board, o.pick, (x) => x.state === 'review' && !x.queued);
        if (!t) break;
        const copied = person.seals.get(t.id);
        const seal = o.how === 'otherKey' ? (a: SealedApproval) => otherSeal.seal(a) : o.how === 'replayed' && copied ? () => copied : undefined;
        await board.run((e) => e.enqueue(t.id, USER, seal));
        break;
      }
      case 'restart':
        // The host goes mid-landing (whatever step the runner is in), and the next one opens the journal.
        await stop();
        board = await open();
        queue = start();
        break;
    }
    check(`after step ${i} (${o.op})`);
  }
  await stop();
  board = await open();
  queue = start();
  await queue.idle();
  check('at the end');
  for (const t of board.state.tasks.values()) seen.restartsCommitting += t.notes.filter((n) => /host stopped (after the board agreed|before the base moved)/.test(n.text)).length;
  for (const e of readLog(root)) if (e.kind === 'unqueued' && /carries no valid seal/.test(e.reason)) seen.forgedTakenOut++;
  for (const t of board.state.tasks.values()) {
    // Every landing whose base moved ended approved (on the next host, when its host stopped in between).
    if (repo.movedFor.has(t.id) && repo.base.includes(repo.movedFor.get(t.id) as string)) expect(t.state, `${t.id}'s merge is on the base`).toBe('done');
    // Nothing that could land is left: with no dependencies, any entry left was not the head of anything.
    expect(t.queued ?? null, `${t.id} left in the queue`).toBeNull();
  }
  await stop();
}

describe('merge queue take-backs (model-based, issue 49)', () => {
  it('lands only a commit the person approved, under its token, while that approval stands; take-backs answered before the landing win', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 40 }), worldArb, async (ops, world) => runSequence(ops, world)),
      { numRuns: RUNS },
    );
    console.log(`take-backs model: ${JSON.stringify(seen)}`);
    // Floors well under what runs reach (about half as many landings as runs, a restart mid-landing in one run
    // of twenty): a change that stops the runs reaching a landing fails here rather than passing vacuously.
    expect(seen.landed).toBeGreaterThan(RUNS / 5);
    expect(seen.forgedTakenOut).toBeGreaterThan(RUNS / 10);
    expect(seen.answeredInFlight).toBeGreaterThan(RUNS / 10);
    expect(seen.refusedInMove).toBeGreaterThan(RUNS / 10);
    expect(seen.restartsCommitting).toBeGreaterThan(0);
    expect(seen.replayedInFlight).toBeGreaterThan(0);
  }, 600_000);
});
