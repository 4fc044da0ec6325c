import type { BoardEvent, BoardEventKind } from '../../src-shared/board/events.js';
import { HOST_ACTOR, VERIFY_ACTOR, type QueueEntry, type SendBackCause, type Task } from '../../src-shared/board/model.js';
import { Limits } from '../../src-shared/board/limits.js';
import { nextToLand } from '../../src-shared/board/mergeQueue.js';
import type { Result } from '../../src-shared/board/result.js';
import { shortSha } from '../../src-shared/git/taskBranch.js';
import { DisposableStore } from '../../src-shared/lifecycle/disposableStore.js';
import { outputAsText } from '../../src-shared/text/controlChars.js';
import { failureNote, type VerifyOutcome } from '../agents/verifyRunner.js';
import type { Clock } from '../base/clock.js';
import type { BoardService } from '../board/boardService.js';
import type { LandingOf, LeaseEngine } from '../board/leaseEngine.js';
import type { ApprovedWork, MergeCandidate } from '../git/taskReview.js';
import { WorktreeError } from '../git/taskRepo.js';

export const MergeQueueConstants = {
  /** Merges of one entry before it gives up: each retry means the base moved between the merge and its landing
   *  (a person's commit, another host's approval) while the verify ran. Four outlast a few such moves; a base
   *  that keeps moving under a minutes-long verify is left to a person (the entry leaves the queue, in review). */
  maxLandTries: 4,
} as const;

/** The work of landing one entry, apart from the order: git and a verify run for a Thread (queueLanding.ts),
 *  a model of a repository in the property test. */
export interface LandingSteps {
  /** Merge exactly the approved sha onto the base as it is now; null: no worktree, nothing to merge. Throws a
   *  WorktreeError (`merge-conflict`, `wrong-token`: the work's; `stale-approval`: the task's work is no longer
   *  what was approved; any other: the repository's). */
  candidate(t: Task, approved: ApprovedWork): Promise<MergeCandidate | null>;
  /** Run `command` on the merge result, in a checkout of its own. */
  verify(t: Task, c: MergeCandidate, command: string): Promise<VerifyOutcome>;
  /** Move the base to the merge, a compare-and-swap from `c.onto`: false when the base moved meanwhile. */
  land(t: Task, c: MergeCandidate): Promise<boolean>;
  /** Whether the base has `merge` now: a host that stopped after the board agreed to land it asks on its start. */
  landed(t: Task, merge: string): Promise<boolean>;
  /** The merge landed: the board approves the task (as `by`), and git tidies after it. */
  approve(t: Task, c: MergeCandidate | null, by: string, tries: number): Promise<void>;
  /** Whether `entry` is the person's act on this host: its seal (approvalSeal.ts) holds. An entry anyone with
   *  the store's key appended is not, and never lands. */
  sealed(t: Task, entry: QueueEntry): boolean;
  /** The queue is closing: end whatever check still runs. */
  dispose?(): void;
}

/** Board events after which the queue may have a new head: an entry joined, moved or left, or a task an
 *  entry waits on was approved (it lands only after). */
const HEAD_MAY_CHANGE: ReadonlySet<BoardEventKind> = new Set(['queued', 'queue-moved', 'unqueued', 'approved', 'returned', 'after-set']);
/** Send-backs that are the work's to fix (its holder merges the base in, or commits what it said it did). */
const WORK_PROBLEMS = new Set(['merge-conflict', 'wrong-token']);

type Waiter = { resolve: () => void; reject: (err: Error) => void };

/** A send-back or removal as the approving caller hears it. */
export class QueueOutcomeError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'QueueOutcomeError';
  }
}

/**
 * The merge queue's runner (issue 34): the one owner that lands a Thread's approved tasks, one at a time, in
 * landing order (src-shared/board/mergeQueue.ts). Each entry is merged onto the base as it is now, its merge
 * checked by the Thread's verify command in a checkout of its own, and only a passing merge moves the base; a
 * conflict or a failing verify sends the task back to its agent with the files or the output's tail.
 *
 * The queue itself is in the board's record (`queued` events), not here: a host that stops mid-verify finds
 * the entry at the head when it starts again and lands it anew (start()). On a board several hosts share, each
 * host lands the entries approved on it (`mine`), where their worktrees and branches are.
 */
export class MergeQueue {
  private readonly store = new DisposableStore();
  private running: Promise<void> | null = null;
  private again = false;
  private disposed = false;
  private readonly waiters = new Map<string, Waiter[]>();
  /** Why the runner is sending an entry back or taking it out, for its waiters once the board says so. */
  private readonly reasons = new Map<string, Error>();
  /** The entry being landed now. */
  private landingNow: string | null = null;

  constructor(
    private readonly board: BoardService,
    private readonly steps: LandingSteps,
    private readonly clock: Clock,
    private readonly mine: (t: Task) => boolean = () => true,
    private readonly warn?: (message: string) => void,
  ) {}

  /** Follow the board and land what is queued already (entries a stopped host left, the head included). */
  start(): void {
    this.store.add(this.board.onEvent((e) => this.follow(e)));
    this.kick();
  }

  /** Resolves once the queue is idle: nothing landing now. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * How an approval ends: resolves when the task lands (approved), rejects when it is sent back or taken out,
   * with the reason. A task no longer queued answers at once from the board.
   */
  outcome(taskId: string): Promise<void> {
    const t = this.board.state.tasks.get(taskId);
    if (t?.state === 'done') return Promise.resolve();
    if (!t?.queued) return Promise.reject(new QueueOutcomeError('bad-state', `${taskId} is not in the merge queue${t?.sentBack ? `: it was sent back (${t.sentBack.reason})` : ''}`));
    return new Promise((resolve, reject) => {
      const list = this.waiters.get(taskId) ?? [];
      list.push({ resolve, reject });
      this.waiters.set(taskId, list);
    });
  }

  private follow(e: BoardEvent): void {
    // An entry landing here is settled once its approval's tidying is over (land), not at the event.
    if (e.kind === 'approved' && e.taskId !== this.landingNow) this.settle(e.taskId, null);
    else if (e.kind === 'returned') this.settle(e.taskId, this.takeReason(e.taskId) ?? new QueueOutcomeError('sent-back', `${e.taskId} was sent back by ${e.by}: ${e.reason}`));
    else if (e.kind === 'unqueued') this.settle(e.taskId, this.takeReason(e.taskId) ?? new QueueOutcomeError('bad-state', `${e.taskId} left the merge queue: ${e.reason}`));
    if (HEAD_MAY_CHANGE.has(e.kind)) this.kick();
  }

  private takeReason(taskId: string): Error | undefined {
    const r = this.reasons.get(taskId);
    this.reasons.delete(taskId);
    return r;
  }

  /** Answer the approvals waiting on `taskId`: landed (null), or the reason it did not (undefined: not yet). */
  private settle(taskId: string, err: Error | null | undefined): void {
    const list = this.waiters.get(taskId);
    if (!list || err === undefined) return;
    this.waiters.delete(taskId);
    for (const w of list) (err ? w.reject(err) : w.resolve());
  }

  private kick(): void {
    if (this.disposed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** Land heads until none can land. An entry that could not be landed nor taken out (the board read-only)
   *  stops the run: the next event or start tries again, rather than spin on it. */
  private async drain(): Promise<void> {
    for (;;) {
      if (this.disposed || this.board.readOnlyReason) return;
      const t = nextToLand(this.board.state.tasks, this.mine);
      const entry = t?.queued;
      if (!t || !entry) return;
      this.landingNow = t.id;
      try {
        await this.land(t, entry);
        this.settle(t.id, this.board.state.tasks.get(t.id)?.state === 'done' ? null : undefined);
      } catch (err) {
        if (this.disposed) return;
        this.warn?.(`forkbench: the merge queue could not land ${t.id}: ${(err as Error).message}`);
        if (!this.board.state.tasks.get(t.id)?.queued) {
          this.settle(t.id, err as Error);
          continue;
        }
        this.reasons.set(t.id, err as Error);
        const r = await this.board.run((e) => e.unqueue(t.id, clip(`it could not be landed: ${(err as Error).message}`), HOST_ACTOR)).catch(() => null);
        if (!r?.ok) return;
      } finally {
        this.landingNow = null;
      }
      if (this.disposed) return;
      // No step may leave the same entry at the head: one still there, unchanged, could not proceed (a refusal
      // its step met), and trying it again would meet the same refusal for ever (issue 49). It leaves the queue
      // with the reason, and the queue goes on with the next.
      if (this.stillQueued(t.id, entry) && nextToLand(this.board.state.tasks, this.mine)?.id === t.id) {
        const why = new QueueOutcomeError('stuck', `${t.id} left the merge queue: its landing could not proceed (see its notes); it stays in review, approve it again`);
        this.reasons.set(t.id, why);
        const r = await this.board.run((e) => e.unqueue(t.id, 'its landing could not proceed (see its notes): approve it again', HOST_ACTOR)).catch(() => null);
        if (!r?.ok) return;
      }
    }
  }

  /**
   * Land one entry: merge exactly the sha it was approved at (under its token), verify the merge, ask the board
   * to agree (queueCommit, the landing's compare-and-set), and only then move the base and approve. A take-back
   * answered before the board's yes wins: the merge is discarded and nothing is said to have landed.
   */
  private async land(t: Task, entry: QueueEntry): Promise<void> {
    const id = t.id;
    if (!this.steps.sealed(t, entry)) {
      // Checked before anything else, a committing entry included: a row that says "approved by user" without
      // this host's seal was written into the store, not by the person's window, so nothing of it is merged.
      const why = `its approval was not made in the person's window on this host (the queue entry${entry.by ? ` "by ${entry.by}"` : ''} carries no valid seal: it was written into the board's store directly)`;
      this.warn?.(`forkbench: ${id} was taken out of the merge queue unmerged: ${why}. It stays in review: approve it in the window if it should land.`);
      this.reasons.set(id, new QueueOutcomeError('unsealed', `${id} left the merge queue: ${why}`));
      await this.takeOut(id, `not merged: ${why}; approve it in the window if it should land`, 'unsealed');
      return;
    }
    const approved: ApprovedWork = { sha: entry.sha, token: entry.token ?? null };
    // Each board step names this entry: the seal checked above is this entry's, not the next one's.
    const landing: LandingOf = { ...approved, entry: entry.seq ?? null };
    if (entry.committing) {
      // The host stopped after the board agreed to land it: git says whether the base moved before it stopped.
      const merge = entry.landing?.merge ?? null;
      const c: MergeCandidate | null = entry.landing ? { base: t.worktree?.base ?? '', onto: entry.landing.onto, merge } : null;
      if (merge === null || (await this.steps.landed(t, merge))) {
        await this.note(id, `Merge queue: ${id}'s host stopped after the board agreed to land it, and ${merge ? `the base has its merge ${shortSha(merge)}` : 'it had nothing to merge'}: approved now.`);
        await this.steps.approve(t, c, entry.by, 1);
        return;
      }
      await this.note(id, `Merge queue: landing ${id} again from the start (its host stopped before the base moved).`);
    } else if (entry.landing) await this.note(id, `Merge queue: landing ${id} again from the start (its host stopped while landing it).`);
    const command = t.verify ?? this.board.state.settings.verify;
    for (let tries = 1; ; tries++) {
      let c: MergeCandidate | null;
      try {
        c = await this.steps.candidate(t, approved);
      } catch (err) {
        return this.refused(id, err as Error);
      }
      if (this.disposed) return;
      if (c && !(await this.step(id, entry, this.board.run((e) => e.queueLanding(id, landing, c.onto, c.merge))))) return;
      if (c?.merge && command) {
        await this.note(id, `Merge queue: merged onto ${c.base} at ${shortSha(c.onto)} as ${shortSha(c.merge)}; verifying with \`${command}\` in a checkout of its own…`);
        const started = this.clock.now();
        const outcome = await this.steps.verify(t, c, command);
        // Taken back while it verified (reassigned, released, rejected, taken out): the board said why already.
        if (this.disposed || !this.stillQueued(id, entry)) return;
        if (!outcome.passed) {
          const why = `the merge onto ${c.base} failed its verify, so ${c.base} was not moved. ${failureNote(command, outcome)}`;
          this.reasons.set(id, new QueueOutcomeError('verify-failed', `${id} was sent back: ${why}`));
          await this.sendBack(id, `Merge queue: ${why}`, VERIFY_ACTOR, 'verify-failed');
          return;
        }
        await this.note(id, `Merge queue: verify \`${command}\` passed on the merge in ${((this.clock.now() - started) / 1000).toFixed(1)} s.`);
      }
      // The landing's compare-and-set: after the git work, in the board's one order of writes. A take-back
      // answered before it wins here; one asked after it is refused until the base moved (queueCommit).
      if (this.disposed || !(await this.step(id, entry, this.board.run((e) => e.queueCommit(id, landing, c?.merge ?? null))))) return;
      // Without a verify command the merge lands unchecked, as approval did before the queue: the queue's view
      // says so (queueView's `verify`), not a note on each task.
      const landed = c ? await this.landOrRefuse(t, c) : 'landed';
      if (landed === 'refused') return;
      if (c && landed === 'moved') {
        if (this.disposed) return;
        if (tries < MergeQueueConstants.maxLandTries) {
          // The next try's queue-landing ends the board's agreement to this merge, which never reached the base.
          await this.note(id, `Merge queue: ${c.base} moved while ${id} was being checked; merging again on its new head.`);
          continue;
        }
        const where = c.remote ? `${c.base} on ${c.remote}` : c.base;
        const what = c.remote ? 'pushed' : 'merged';
        return this.refused(id, new WorktreeError('base-moved', `${where} moved under each of ${tries} merges (other approvals, or someone pushing to it): nothing was ${what} and ${id} stays in review. Approve again.`));
      }
      // Landed: the board agreed before the base moved, and take-backs have been refused since, so it approves.
      await this.steps.approve(t, c, entry.by, tries);
      return;
    }
  }

  /**
   * A board step of a landing: true once taken. Refused because the entry is gone or is no longer the approval
   * (taken back meanwhile): false, the merge is discarded, and the task's notes say so. Refused while the entry
   * stands (another entry lands first now, say): false too, and the drain goes on with the head. Anything else
   * (the board could not decide) is thrown, for the drain to take the entry out with the reason.
   */
  private async step(id: string, entry: QueueEntry, p: Promise<Result<null>>): Promise<boolean> {
    const r = await p;
    if (r.ok) return true;
    if (this.disposed) return false;
    if (!this.stillQueued(id, entry)) {
      await this.note(id, `Merge queue: not landed: ${r.error.message}.`);
      return false;
    }
    if (nextToLand(this.board.state.tasks, this.mine)?.id !== id) return false;
    throw new QueueOutcomeError(r.error.code, r.error.message);
  }

  private async landOrRefuse(t: Task, c: MergeCandidate): Promise<'landed' | 'moved' | 'refused'> {
    try {
      return (await this.steps.land(t, c)) ? 'landed' : 'moved';
    } catch (err) {
      await this.refused(t.id, err as Error);
      return 'refused';
    }
  }

  /** The merge could not be made or landed: the work's problem goes back to its agent, the repository's
   *  leaves the queue (in review, for a person to approve again once it is fixed). An approval that no longer
   *  stands (`stale-approval`) leaves the queue too: its take-back said why. */
  private async refused(id: string, err: Error): Promise<void> {
    const message = err.message;
    // The approving caller gets git's own error, code and all, as approval gave it before the queue.
    this.reasons.set(id, err);
    if (err instanceof WorktreeError && WORK_PROBLEMS.has(err.problem)) return this.sendBack(id, `Merge queue: ${message}`, HOST_ACTOR, err.problem === 'merge-conflict' ? 'conflict' : undefined);
    await this.note(id, `Not merged: ${message}`);
    await this.takeOut(id, 'it could not be merged (see the note)');
  }

  /** Send the task back to its agent; a task no longer in review (a board from before take-backs left it
   *  queued) leaves the queue with the same reason instead. No refusal is passed over. */
  private async sendBack(id: string, text: string, by: string, cause?: SendBackCause): Promise<void> {
    const r = await this.board.run((e) => e.rejectReview(id, clip(text), by, cause));
    if (r.ok || !this.board.state.tasks.get(id)?.queued) return;
    await this.takeOut(id, text);
  }

  /** Take the entry out with the reason; throws when the board refuses while it is still queued. */
  private async takeOut(id: string, reason: string, code?: 'unsealed'): Promise<void> {
    const r = await this.board.run((e) => e.unqueue(id, clip(reason), HOST_ACTOR, code));
    if (!r.ok && this.board.state.tasks.get(id)?.queued) throw new Error(r.error.message);
  }

  /** The same entry is still queued: nobody took it out, sent it back or approved it anew while it was checked. */
  private stillQueued(id: string, entry: QueueEntry): boolean {
    const q = this.board.state.tasks.get(id)?.queued;
    return !!q && (q.seq ?? null) === (entry.seq ?? null) && q.at === entry.at && q.by === entry.by && q.sha === entry.sha && (q.token ?? null) === (entry.token ?? null);
  }

  private note(taskId: string, text: string): Promise<unknown> {
    return this.board.run((e: LeaseEngine) => e.userNote(taskId, clip(text), HOST_ACTOR));
  }

  dispose(): void {
    this.disposed = true;
    this.store.dispose();
    this.steps.dispose?.();
    this.reasons.clear();
    for (const id of [...this.waiters.keys()])
      this.settle(id, new QueueOutcomeError('closing', `the Thread closed while ${id} waited in the merge queue: it stays queued and lands when the Thread opens again`));
  }
}

/** Text as a note takes it: printable and no longer than a note. */
const clip = (s: string): string => outputAsText(s).slice(0, Limits.maxNoteChars);
