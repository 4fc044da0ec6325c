import { shortSha } from '../../src-shared/git/taskBranch.js';
import { GitError } from './git.js';
import { TaskRepo, WorktreeError } from './taskRepo.js';
import { HOST_ACTOR } from '../../src-shared/board/model.js';

/** A repair that finds git's lock held (the committing process is still finishing) tries again: git
 *  holds a ref lock for milliseconds; 40 tries 75 ms apart outlast a slow hook. */
const REPAIR_TRIES = 40;
const REPAIR_RETRY_MS = 75;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The board, not the branch, says what a task's work is. Every move the fence accepts is checked against
 * the repository and recorded (leaseEngine's recordBranch); a branch head that is not the record is moved
 * aside to refs/forkbench/stray/ and the branch put back with a compare-and-swap.
 */
export class BranchRecords {
  /** Repairs running, per task: one asked for meanwhile runs once more after it (`again`), since the running
   *  one may have read the branch before the move that asked. */
  private readonly repairing = new Map<string, { again: boolean; done: Promise<void> }>();

  constructor(private readonly r: TaskRepo) {}

  /**
   * A hook says the task's branch moved to `to`. The repository says whether it did: the branch's head now,
   * and the commit's tree (what the record keeps, so approval can check the content it merges).
   */
  async readMove(taskId: string, ref: string, to: string): Promise<{ tree: string }> {
    const wt = this.r.task(taskId).worktree;
    if (!wt || ref !== `refs/heads/${wt.branch}`) throw new WorktreeError('no-worktree', `${ref} is not the branch of ${taskId}`);
    // Both read from the repository's files where they can be (a commit just made is a loose object): this
    // runs for every commit, and a git process costs more than the rest of the record.
    const head = this.r.readRef(ref);
    const tree = await this.r.treeOf(to);
    if (!tree) throw new WorktreeError('git', `${shortSha(to)} is not a commit in ${this.r.repo.root}`);
    if (head !== to) throw new WorktreeError('git', `${wt.branch} is at ${shortSha(head ?? '')}, not at ${shortSha(to)}: nothing was recorded`);
    return { tree };
  }

  /**
   * Put a task's branch back at the board's record, keeping what was there as a stray ref. Called when the
   * board refused a move that landed (a late commit, one under an ended claim) or found the branch off its
   * record. A ref lock still held by the git that moved it is waited out.
   */
  repair(taskId: string): Promise<void> {
    const running = this.repairing.get(taskId);
    if (running) {
      running.again = true;
      return running.done;
    }
    const state = { again: false, done: Promise.resolve() };
    this.repairing.set(taskId, state);
    state.done = (async () => {
      try {
        do {
          state.again = false;
          await this.r.queue.run(() => this.putBack(taskId));
        } while (state.again);
      } finally {
        this.repairing.delete(taskId);
      }
    })();
    return state.done;
  }

  private async putBack(taskId: string): Promise<void> {
    for (let i = 0; i < REPAIR_TRIES; i++) {
      const t = this.r.board.state.tasks.get(taskId);
      const wt = t?.worktree;
      const rec = t?.record;
      if (!wt || !rec || t.state === 'done') return;
      const head = this.r.readRef(`refs/heads/${wt.branch}`);
      if (head === rec.sha) return;
      if (head) await this.r.keepAside(taskId, head);
      const moved = await this.r.git(this.r.repo.root, ['update-ref', '-m', `forkbench: ${taskId} back to its record`, `refs/heads/${wt.branch}`, rec.sha, head ?? ''], { allowFail: true });
      if (moved.code === 0) {
        await this.r.board.run((e) => e.recordRepair(taskId, head ?? '', HOST_ACTOR));
        return;
      }
      await sleep(REPAIR_RETRY_MS);
    }
  }

  /** A compare-and-swap of the task's branch, run inside the queue. A lock held by a git still finishing its
   *  own move (a late commit) is waited out for a while; if it outlasts that, the claim goes ahead and the
   *  repair that follows that git's report puts the branch right. */
  async moveBranch(taskId: string, branch: string, to: string, from: string): Promise<void> {
    for (let i = 0; i < REPAIR_TRIES; i++) {
      const moved = await this.r.git(this.r.repo.root, ['update-ref', '-m', `forkbench: ${taskId} to its record`, `refs/heads/${branch}`, to, from], { allowFail: true });
      if (moved.code === 0) return;
      if (!/lock|exists/i.test(moved.stderr)) throw new GitError(['update-ref'], moved.code, moved.stdout, moved.stderr);
      await sleep(REPAIR_RETRY_MS);
    }
    void this.repair(taskId);
  }
}
