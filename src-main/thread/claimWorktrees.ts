import type { BoardEvent } from '../../src-shared/board/events.js';
import type { GitRemote, RecordHost, Task, TaskWorktree } from '../../src-shared/board/model.js';
import { HOST_ACTOR, USER } from '../../src-shared/board/model.js';
import { shortSha } from '../../src-shared/git/taskBranch.js';
import { DisposableStore } from '../../src-shared/lifecycle/disposableStore.js';
import { Emitter } from '../../src-shared/lifecycle/emitter.js';
import { plural } from '../../src-shared/text/plural.js';
import type { ClaimWorktree } from '../../src-shared/protocol/agentMethods.js';
import type { GitIsolation } from '../../src-shared/protocol/windowApi.js';
import { Limits } from '../../src-shared/board/limits.js';
import { outputAsText } from '../../src-shared/text/controlChars.js';
import { runsHere, type BoardService, type WriteKey } from '../board/boardService.js';
import type { LeaseEngine } from '../board/leaseEngine.js';
import { keyedWrite, priorOutcome } from '../board/keyedWrite.js';
import { reject, type Result } from '../../src-shared/board/result.js';
import type { AgentCallHooks } from '../agents/agentRpc.js';
import type { AgentLockFolders } from '../roster/goneAgentLocks.js';
import type { MergeCandidate, RemoteMerge } from '../git/taskReview.js';
import type { MergeQueue } from './mergeQueue.js';
import type { ApprovalSeal } from './approvalSeal.js';
import { trackingRef } from '../git/taskRemote.js';
import { WorktreeError, WorktreeManager } from '../git/worktreeManager.js';
import type { ArrivalTiming } from '../git/recordArrival.js';
import type { ParkedSeams } from '../git/parkedWork.js';
import { RemoteMismatchError } from '../git/remoteJoin.js';

const WorktreeConstants = {
  /** A worktree of a small repository is ready in ~0.1–0.5 s here; past 1.5 s the holder and the window are told why they wait. */
  slowNoteMs: 1500,
} as const;

/** A git failure as a person reads it: our own problems say what to do; git's own errors are quoted. */
export function gitReason(err: Error): string {
  return err instanceof WorktreeError ? err.message : `git failed: ${err.message}`;
}

/** An approval's merge landed on the remote's base, which the person's own branch does not have yet. */
export interface BaseMoved {
  taskId: string;
  title: string;
  remote: string;
  base: string;
  sha: string;
}

/**
 * Why the work a decision finds in review is not the work this host can show (`shown`, checked before the
 * decision) or the person was shown (`seen`), or null when it is both: the host's view of a shared board lags,
 * and a new `done` may land between the diff and the click.
 */
function unshownWork(now: Task, shown: string | null, seen: string | undefined): string | null {
  const sha = (now.submitted ?? now.record)?.sha ?? null;
  if (!sha) return null;
  if (seen !== undefined && seen !== sha)
    return `${now.id}'s work in review is now ${shortSha(sha)}, not the ${shortSha(seen)} you were shown: nothing was approved. Look at its diff again.`;
  if (sha !== shown) return `${now.id}'s work in review is now ${shortSha(sha)}, which this host has not fetched yet: nothing was approved. Look at its diff again.`;
  return null;
}

/** An approval's outcome as the window's caller gets it: nothing, or the refusal thrown with its code. */
function unwrapApproval(r: Result<unknown>): void {
  if (!r.ok) throw Object.assign(new Error(r.error.message), { code: r.error.code });
}

/**
 * The Thread's claims as git sees them: each grant's worktree handed over (and its answer awaited by the
 * claim and by the assignment message), each ended claim's folder fenced, each recorded move and each
 * freeze passed to the folder's hooks, and approval that merges before it approves. In a Thread without
 * git, every one of these is a no-op and `reason` says why.
 */
export class ClaimWorktrees {
  private readonly store = new DisposableStore();
  private closed = false;
  /** Each task's latest worktree hand-over, by the token it was for. */
  private readonly issuing = new Map<string, { token: number; done: Promise<ClaimWorktree | null> }>();
  /** The folders being made now: task → the agent that waits on it. */
  private readonly preparing = new Map<string, string>();
  /** The merge queue, once the Thread has one (useQueue). */
  private queue: MergeQueue | null = null;
  private seal: ApprovalSeal | null = null;
  /** Tasks this host is approving now: their approval's own follow-up is approve's, not approvedElsewhere's. */
  private readonly approvingHere = new Set<string>();
  /** The remote's base moved past the person's branch here (an approval's merge landed): they are told. */
  readonly onBaseMoved = new Emitter<BaseMoved>();

  constructor(
    private readonly board: BoardService,
    /** Git worktrees under claims, or null with the reason this Thread has none. */
    readonly git: WorktreeManager | null,
    readonly reason: string,
    /** Where a failure of background git work (after another host's approval) is said. */
    private readonly warn?: (message: string) => void,
  ) {}

  /**
   * The Thread's worktrees, or none with the reason (not a repository, no perl, git failing). Made before the
   * agents' socket, whose hooks they answer: the socket's path is known before it listens, and the fence
   * hooks only dial it once an agent commits.
   */
  static async open(folder: string, board: BoardService, socketPath: string, timing: ArrivalTiming = {}, warn?: (message: string) => void, parkedSeams?: ParkedSeams): Promise<ClaimWorktrees> {
    const git = await WorktreeManager.open(folder, board.dir, board, socketPath, timing, parkedSeams).catch((err: Error) => ({ reason: `git could not be used here: ${err.message}` }));
    if (!(git instanceof WorktreeManager)) return new ClaimWorktrees(board, null, git.reason, warn);
    // A clone of another remote does not join (RemoteMismatchError goes to the opener, which says why).
    const joined = await git.join().catch((err: Error) => err);
    if (joined instanceof RemoteMismatchError) throw joined;
    if (joined) return new ClaimWorktrees(board, null, `the Thread's remote could not be read: ${joined.message}`, warn);
    const cleared = [...git.folders.clearInterrupted(), ...git.notes.clearInterrupted()];
    if (cleared.length) warn?.(`forkbench: cleared ${cleared.length} git lock(s) or unfinished worktree(s) left by a grant its host stopped inside: ${cleared.join(', ')}`);
    // Records this host made and had not pushed when it stopped (or was killed) go out now, in the background.
    void git.pushes.resume().catch(() => undefined);
    // Parked folders: a clean-up a kill cut short is finished or redone, the rest wait out their grace.
    git.parked.start();
    return new ClaimWorktrees(board, git, '', warn);
  }

  /** The Thread is shutting or shut: nothing more is reported from git work that outlives it. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * What the agents' socket asks of git: a new claim's folder, a reported branch move read from git itself
   * (a report is a claim; the repository is the fact), and a branch put back at its record.
   */
  agentHooks(warn?: (message: string) => void): Pick<AgentCallHooks, 'afterGrant' | 'readMove' | 'offRecord'> {
    const afterGrant = (taskId: string, token: number) => this.worktreeOf(taskId, token);
    const records = this.git?.records;
    if (!records) return { afterGrant };
    return {
      afterGrant,
      readMove: (taskId, ref, to) => records.readMove(taskId, ref, to),
      offRecord: (taskId) => void records.repair(taskId).catch((err: Error) => warn?.(`forkbench: could not put ${taskId}'s branch back at its record: ${err.message}`)),
    };
  }

  /**
   * The folders whose git locks a gone agent left, for the roster to clear once nothing of it is left: each
   * task whose lock was cleared has its branch put back at its record then. The repair its claim's end asked
   * for may have given up on that lock meanwhile (a group still finishing, or a loaded machine: a fence chaos
   * run left a refused commit on T-15's branch so), and nothing else would ask again.
   */
  lockFolders(): AgentLockFolders | null {
    const git = this.git;
    if (!git) return null;
    const { folders, records } = git;
    return {
      locksOf: (agentId) => folders.locksOf(agentId),
      agentsWithFolders: () => folders.agentsWithFolders(),
      clearLocks: (locks) => {
        const cleared = folders.clearLocks(locks);
        const tasks = new Set(locks.filter((l) => cleared.includes(l.path)).map((l) => l.taskId));
        for (const taskId of tasks) void records.repair(taskId).catch((err: Error) => this.warn?.(`forkbench: could not put ${taskId}'s branch back at its record: ${err.message}`));
        return cleared;
      },
    };
  }

  /** Once the agents' socket listens: the Thread's own folder gets the hooks that fence agents' commits. */
  async fenceThreadFolder(warn?: (message: string) => void): Promise<void> {
    await this.git?.threadFolder.fence().catch((err: Error) => warn?.(`forkbench: the Thread's folder could not be fenced for agents: ${err.message}`));
  }

  isolation(): GitIsolation {
    return this.git ? this.git.isolation() : { isolated: false, reason: this.reason };
  }

  /** The worktrees, for a window: throws the reason when this Thread has none. */
  require(): WorktreeManager {
    if (this.git) return this.git;
    throw new WorktreeError('no-worktree', `this Thread has no worktrees: ${this.reason}`);
  }

  /** Where a task's work is: its worktree, or the Thread's folder where there is none. */
  workdirOf(t: Task, folder: string): string {
    return t.worktree && this.git ? this.git.workdirOf(t.worktree.path) : folder;
  }

  /**
   * The board's event, as it concerns git: a grant gets its folder, an ended claim's folder answers to
   * nobody, a reassignment does both, a recorded move or a freeze reaches the folder's hooks.
   */
  follow(e: BoardEvent): void {
    const git = this.git;
    if (!git) return;
    git.parked.follow(e);
    // On a shared board, a grant to another host's agent is that host's to give a folder (in its own clone).
    if (e.kind === 'grant') {
      if (runsHere(this.board, e.agentId)) this.grant(e.taskId, e.agentId, e.token);
    } else if (e.kind === 'reassign') {
      git.folders.fence(e.taskId, e.from.token, 'stale-token', `your claim on ${e.taskId} ended (reassigned)`);
      if (runsHere(this.board, e.to.agentId)) this.grant(e.taskId, e.to.agentId, e.to.token);
    } else if (e.kind === 'branch-recorded') {
      git.folders.recorded(e.taskId, e.record.sha);
      // Each host pushes the commits it recorded, and only those: another host's may not be in this clone.
      if (this.recordedHere(e.host)) git.pushes.recorded(e.taskId, e.record.sha);
      git.notes.recorded(e.taskId, e.record);
    } else if (e.kind === 'record-rewound') git.folders.recorded(e.taskId, e.to.sha);
    else if (e.kind === 'submitted') git.folders.frozen(e.taskId, true);
    else if (e.kind === 'returned') git.folders.frozen(e.taskId, false);
    else if (e.kind === 'approved' && !this.approvingHere.has(e.taskId)) this.approvedElsewhere(e.taskId);
    else if (e.kind === 'claim-ended') {
      const lapsed = e.reason === 'lapsed';
      // Whatever the ended claim's git moved and the board did not record (a commit whose report died with its
      // pane) is moved aside now, the branch put back at the record; a report that comes later is refused and
      // put back then (issue 49). Only the host that ran the agent has its branch.
      if (e.reason !== 'completed' && runsHere(this.board, e.agentId))
        void git.records.repair(e.taskId).catch((err: Error) => this.warn?.(`forkbench: could not put ${e.taskId}'s branch back at its record: ${err.message}`));
      git.folders.fence(
        e.taskId,
        e.token,
        lapsed ? 'lapsed' : 'stale-token',
        lapsed ? `your lease on ${e.taskId} lapsed; claim it again if it is still open` : `your claim on ${e.taskId} ended (${e.reason})`,
      );
    }
  }

  /** A record was made on this host: its event names this host, or names none on a board of this host's. */
  private recordedHere(host: RecordHost | undefined): boolean {
    const here = this.board.engine.here;
    return host ? host.id === here?.id : here === null;
  }

  /**
   * A claim began: hand its worktree over (make it, or continue in the task's parked one). Notes the holder
   * and reviewer should see go on the task. If no worktree can be had, the claim ends and the task is blocked
   * with the reason, rather than let the agent work unfenced in the shared folder.
   */
  private grant(taskId: string, agentId: string, token: number): void {
    const git = this.git as WorktreeManager;
    // A large repository's checkout takes seconds: say so on the board while the holder waits.
    const slow = this.closed
      ? null
      : this.store.timeout(() => {
          if (!this.closed) void this.note(taskId, `Making the git worktree for ${taskId} (a large repository takes a while)…`).catch(() => undefined);
        }, WorktreeConstants.slowNoteMs);
    this.preparing.set(taskId, agentId);
    const done = git.folders.grant(taskId, agentId, token).finally(() => {
      slow?.dispose();
      if (this.preparing.get(taskId) === agentId) this.preparing.delete(taskId);
    }).then(
      async (issued) => {
        for (const n of issued.notes) await this.note(taskId, n);
        return issued;
      },
      async (err: Error) => {
        const why = gitReason(err);
        if (!this.closed) await this.board.run((e) => e.failWorktree(taskId, token, `No worktree: ${why}`)).catch(() => undefined);
        throw new Error(why);
      },
    );
    // Whoever waits sees the failure; nobody waiting is fine too (the board already says it).
    done.catch(() => undefined);
    this.issuing.set(taskId, { token, done });
  }

  /** Whether the host is making a claim's folder for `agentId` now (its own claim or a person's assignment):
   *  the agent waits on the host then, and the liveness check does not count that wait as its silence. */
  preparingFor(agentId: string): boolean {
    for (const a of this.preparing.values()) if (a === agentId) return true;
    return false;
  }

  /** The worktree of the claim (task, token) once it is ready; null in a Thread without worktrees. */
  async worktreeOf(taskId: string, token: number): Promise<ClaimWorktree | null> {
    const pending = this.issuing.get(taskId);
    if (!pending || pending.token !== token) return null;
    return pending.done;
  }

  /**
   * Approve a task in review. Where the task has a worktree its branch is merged into the base first, and
   * only if the head was written under the submitting claim's token and merges cleanly: otherwise the task
   * stays in review with the reason as a note, and the base branch is untouched. On a board with a remote
   * (several machines), the merge is pushed to the remote's base first, and the board approves only once it
   * landed there; the person's own branches are not moved, they are told.
   */
  async approve(taskId: string, by: string = USER, key?: WriteKey, o: { wait?: boolean; seen?: string } = {}): Promise<void> {
    const wait = o.wait ?? true;
    // A retried approval whose first try was decided gets that outcome, before any merge is tried again.
    const prior = await priorOutcome(this.board, key);
    if (prior) {
      unwrapApproval(prior);
      // Its first try queued it: the retry waits for the landing as the first did.
      if (wait && this.queue && this.board.state.tasks.get(taskId)?.queued) await this.queue.outcome(taskId);
      return;
    }
    const t = this.board.state.tasks.get(taskId);
    const git = this.git;
    // Only work this host can show is approved here (issue 45): its commit is fetched now if another host made
    // it, and if it cannot be, the approval is refused before anything is written.
    const shown = await this.showable(t);
    if (this.queue && this.seal && git) {
      // Work to merge goes through the merge queue (issue 34): approval answers once it landed or came back.
      // Sealed here, on the host the window (or the person's verify) asked: the queue lands only sealed entries.
      // Which it is is decided on the board as the decision finds it, not on this host's view, which lags a
      // shared board: a task still 'claimed' here but in review there was approved with its work never merged.
      const seal = this.seal;
      let queued = false;
      const decide = (e: LeaseEngine): Result<unknown> => {
        const now = e.state.tasks.get(taskId);
        queued = now?.state === 'review' && !!now.worktree;
        if (!queued) return e.approve(taskId, by);
        // The queue lands exactly the sha it seals here: it must be the work this host has (and the person saw).
        const unseen = now && unshownWork(now, shown, o.seen);
        return unseen ? reject('bad-state', unseen) : e.enqueue(taskId, by, (a) => seal.seal(a));
      };
      // Approved here, whichever it is: a task with nothing to merge is no other host's to tidy after.
      this.approvingHere.add(taskId);
      let r: Result<unknown>;
      try {
        r = (await keyedWrite(this.board, key, decide, () => null)).result;
      } finally {
        this.approvingHere.delete(taskId);
      }
      unwrapApproval(r);
      return queued && wait ? this.queue.outcome(taskId) : undefined;
    }
    const branch = t?.state === 'review' && git ? t.worktree : null;
    const remote = this.board.state.settings.remote;
    let merged: string | null = null;
    let landed: RemoteMerge | null = null;
    this.approvingHere.add(taskId);
    try {
      if (git && t && branch) {
        try {
          if (remote) {
            landed = await git.review.mergeToRemote(taskId, t.title, remote);
            merged = landed?.merged ?? null;
          } else merged = await git.review.merge(taskId, t.title);
        } catch (err) {
          await this.note(taskId, `Not merged: ${gitReason(err as Error)}`);
          throw err;
        }
      }
      const decide = (e: LeaseEngine) => e.approve(taskId, by);
      const r = (await keyedWrite(this.board, key, decide, () => null)).result;
      await this.afterApproval(taskId, r, branch ?? null, merged, landed && { baseSha: landed.baseSha, tries: landed.tries });
    } finally {
      this.approvingHere.delete(taskId);
    }
  }

  /**
   * The commit of a task's work in review that this host can show (null: no git work to show, or a board from
   * before records), fetched from the remote if another host made it. Throws `work-elsewhere`, saying where
   * the work is, when it cannot be had here: a person is never asked to approve what they could not see.
   */
  private async showable(t: Task | undefined): Promise<string | null> {
    if (!this.git || !t?.worktree) return null;
    const reached = await this.git.review.reach(t.id);
    if (reached.ok) return reached.sha;
    throw new WorktreeError('work-elsewhere', `${reached.elsewhere.message} Nothing was approved: ${t.id} stays in review.`);
  }

  /** Approval through the merge queue (MergeQueue): called once the merge `c` landed on the base. */
  async approveLanded(taskId: string, by: string, c: MergeCandidate | null, tries = 1): Promise<void> {
    const branch = this.git ? (this.board.state.tasks.get(taskId)?.worktree ?? null) : null;
    this.approvingHere.add(taskId);
    try {
      const r = await this.board.run((e) => e.approve(taskId, by));
      await this.afterApproval(taskId, r, branch, c?.merge ?? null, c && { baseSha: c.onto, tries });
    } finally {
      this.approvingHere.delete(taskId);
    }
  }

  /** The merge queue that lands approvals with work to merge, and the seal that marks an approval as this
   *  host's (the person's act); without a queue, approval merges at once. */
  useQueue(queue: MergeQueue, seal: ApprovalSeal): void {
    this.queue = queue;
    this.seal = seal;
  }

  /** What follows the board's decision on an approval whose merge (if any) landed: the notes a person reads,
   *  the person told of a remote's base that moved, the task's folders and branch tidied. */
  private async afterApproval(taskId: string, r: Result<null>, branch: TaskWorktree | null, merged: string | null, landed: { baseSha: string; tries: number } | null): Promise<void> {
    const git = this.git;
    const remote = this.board.state.settings.remote;
    if (!r.ok && merged) await this.note(taskId, `Merged as ${shortSha(merged)}${remote ? ` and pushed to ${remote.name}` : ''}, but approval was refused: ${r.error.message}`);
    unwrapApproval(r);
    if (!git || !branch) return;
    if (remote && landed) {
      const retried = landed.tries > 1 ? ` (${branch.base} had moved there meanwhile: merged again on its new head, ${plural(landed.tries - 1, 'retry', 'retries')})` : '';
      await this.note(
        taskId,
        merged
          ? `Merged ${branch.branch} into ${branch.base} on ${remote.name} as ${shortSha(merged)}, pushed over ${shortSha(landed.baseSha)}${retried}. ${branch.base} in each clone is not moved: git pull there to get it.`
          : `${branch.branch} had no commits that ${branch.base} on ${remote.name} lacks: nothing to merge.`,
      );
      if (merged) void this.tellBaseMoved(taskId, remote, branch.base, merged).catch(() => undefined);
    } else await this.note(taskId, merged ? `Merged ${branch.branch} into ${branch.base} as ${shortSha(merged)}.` : `${branch.branch} had no commits that ${branch.base} lacks: nothing to merge.`);
    const baseRev = remote ? trackingRef(remote.name, branch.base) : undefined;
    const said = await git.review.cleanupMerged(taskId, baseRev).catch((err: Error) => [`The worktree could not be removed: ${err.message}`]);
    for (const n of said) await this.note(taskId, n);
  }

  /**
   * Another host approved a task on a board with a remote: it pushed the merge to the remote's base before
   * the board approved. This host fetches the base (its remote-tracking ref only), tells its person when
   * their branch is behind it, and removes the task's folders it made itself.
   */
  private approvedElsewhere(taskId: string): void {
    const git = this.git;
    const remote = this.board.state.settings.remote;
    const t = this.board.state.tasks.get(taskId);
    if (!git || !remote || !t || this.closed) return;
    const base = t.worktree?.base ?? t.parked[0]?.base;
    if (!base) return;
    const mine = [t.worktree, ...t.parked].some((f) => f && git.review.ours(f));
    void (async () => {
      const sha = await git.review.remoteBase(remote, base);
      await this.tellBaseMoved(taskId, remote, base, sha);
      if (!mine || this.closed) return;
      const said = await git.review.cleanupMerged(taskId, trackingRef(remote.name, base));
      for (const n of said) await this.note(taskId, n);
    })().catch((err: Error) => {
      if (!this.closed) this.warn?.(`forkbench: after ${taskId}'s approval on another host: ${err.message}`);
    });
  }

  /** The person is told the remote's base moved, unless their own branch already has that commit. */
  private async tellBaseMoved(taskId: string, remote: GitRemote, base: string, sha: string): Promise<void> {
    const git = this.git;
    if (!git || this.closed) return;
    if (await git.review.hasCommitOn(base, sha)) return;
    const title = this.board.state.tasks.get(taskId)?.title ?? '';
    this.onBaseMoved.fire({ taskId, title, remote: remote.name, base, sha });
  }

  /** A note from the host itself, about git work on the task. */
  private note(taskId: string, text: string): Promise<unknown> {
    // git's messages are terminal output, and the engine takes text as the edges validated it: made
    // printable and cut to a note's length here, where the text enters the board.
    return this.board.run((e) => e.userNote(taskId, outputAsText(text).slice(0, Limits.maxNoteChars), HOST_ACTOR));
  }

  /** The Thread is shutting: no slow-worktree note or block from here on. */
  stop(): void {
    this.closed = true;
    this.store.dispose();
    this.git?.pushes.dispose();
    // Its sweep under way settles in close(), which awaits it.
    void this.git?.parked.dispose();
    this.onBaseMoved.dispose();
  }

  /** After stop(): a worktree being made and a parked folder being cleaned up finish (the board is still open
   *  for them), and the Thread's folder is given back its own hooks. */
  async close(): Promise<void> {
    this.stop();
    // A parked folder's clean-up under way finishes that folder (its rename, its board write) before the board
    // closes: a disposed host is never still moving folders.
    await this.git?.parked.dispose();
    await this.git?.idle();
    await this.git?.notes.close();
    await this.git?.threadFolder.unfence().catch(() => undefined);
  }
}
