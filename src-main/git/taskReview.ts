import { rm } from 'node:fs/promises';
import type { GitRemote, Task, TaskWorktree } from '../../src-shared/board/model.js';
import { headWritten, mergeVerdict } from '../../src-shared/git/mergeVerdict.js';
import { shortSha, strayRef, Trailers } from '../../src-shared/git/taskBranch.js';
import { SerialQueue } from '../../src-shared/lifecycle/serialQueue.js';
import type { TaskDiff } from '../../src-shared/protocol/windowApi.js';
import { plural } from '../../src-shared/text/plural.js';
import type { ClaimFolders } from './claimFolders.js';
import { configSettings, GitError, gitLine, personScope } from './git.js';
import { TaskRemote, trackingRef } from './taskRemote.js';
import { TaskRepo, WorktreeError } from './taskRepo.js';
import { WorkReach, type Reached } from './workReach.js';
import { HOST_ACTOR } from '../../src-shared/board/model.js';

export const RemoteMergeConstants = {
  /** Pushes of one approval's merge before it gives up. Each lost compare-and-swap means the base moved on
   *  the remote between this host's fetch and push (another host's approval, a person's push); a fetch,
   *  merge and push take well under a second, so 4 tries outlast approvals from a few hosts landing at
   *  once, and a base that still keeps moving is left to a person (the task stays in review) rather than
   *  raced without end. */
  maxPushTries: 4,
} as const;

/** An approval's merge as it landed on the remote: the merge commit (null: the base had it all already),
 *  the base's head it was made on, and how many pushes it took. */
export interface RemoteMerge {
  merged: string | null;
  base: string;
  baseSha: string;
  tries: number;
}


/** The merge queue's candidate: `merge` (null: the base has the work already) made on `onto`, the head of
 *  `base` when it was made (the remote's, on a board with one). */
export interface MergeCandidate {
  readonly base: string;
  /** The remote whose base it was made on (pushed there); absent: this clone's own base. */
  readonly remote?: string;
  readonly onto: string;
  readonly merge: string | null;
}

/** What the person approved (a merge queue entry): the frozen sha and the token of the claim that said done
 *  (null: an entry from before tokens were kept, checked by its sha alone). */
export interface ApprovedWork {
  readonly sha: string | null;
  readonly token: number | null;
}

/** A review diff is for reading: past 512 KiB a window shows the file list and says the rest is cut. */
const MAX_PATCH_CHARS = 512 * 1024;

/**
 * A task's work in review: the diff a person reads, the merge of exactly the sha `done` froze (never the
 * branch's head, which may have moved since), and the clean-up after it.
 */
export class TaskReview {
  /** Approvals that fetch and push, one at a time (mergeToRemote). */
  private readonly remoteQueue = new SerialQueue();
  private readonly work: WorkReach;

  constructor(
    private readonly r: TaskRepo,
    private readonly folders: ClaimFolders,
  ) {
    this.work = new WorkReach(r);
  }

  /** The token of the claim whose work is in review: the one that said done. */
  static finalToken(t: Task): number | null {
    return t.claim?.token ?? t.lastClaim?.token ?? null;
  }

  /** What review and approval look at: the sha `done` froze; for a board from before records, the branch. */
  private async reviewed(t: Task, wt: TaskWorktree): Promise<{ sha: string; token: number | null; task: string | null; recorded: boolean } | null> {
    const rec = t.submitted ?? t.record;
    if (rec) return { sha: rec.sha, token: rec.token || null, task: t.id, recorded: true };
    const head = this.r.readRef(`refs/heads/${wt.branch}`);
    if (!head) return null;
    return { ...(await this.trailersOf(head)), recorded: false };
  }

  /** The task's work as this host can show it: its recorded commit here (fetched from the remote's task
   *  namespace when another host made it), or where it is instead (WorkReach). */
  reach(taskId: string): Promise<Reached> {
    return this.work.reach(this.r.task(taskId));
  }

  /**
   * The work in review against its base: files changed and the patch. Work this host cannot show (made on
   * another host and not fetchable) is answered with where it is (`elsewhere`), never git's error.
   */
  async diff(taskId: string): Promise<TaskDiff> {
    const t = this.r.task(taskId);
    const wt = t.worktree;
    if (!wt) throw new WorktreeError('no-worktree', `${taskId} has no worktree: it was never claimed here, or its work was merged.`);
    const root = this.r.repo.root;
    const reached = await this.work.reach(t);
    if (!reached.ok) {
      const rec = t.submitted ?? t.record;
      return {
        taskId,
        branch: wt.branch,
        base: wt.base,
        head: reached.elsewhere.sha,
        headToken: rec?.token || null,
        headTask: taskId,
        finalToken: TaskReview.finalToken(t),
        commits: 0,
        files: [],
        patch: '',
        truncated: false,
        uncommitted: 0,
        elsewhere: reached.elsewhere,
      };
    }
    const head = await this.reviewed(t, wt);
    const rev = head?.sha ?? wt.branch;
    const base = await this.diffBase(wt);
    const range = `${base.rev}...${rev}`;
    const [count, names, nums, patch, uncommitted] = await Promise.all([
      this.r.aheadOf(base.rev, rev),
      this.r.git(root, ['diff', '--name-status', '-M', '-z', range]),
      this.r.git(root, ['diff', '--numstat', '-M', '-z', range]),
      this.r.git(root, ['diff', '--no-color', '--no-ext-diff', '--no-textconv', '-M', range]),
      // Another host's folder is that host's to read, even where its path happens to exist here.
      this.ours(wt) ? this.r.uncommittedOf(wt) : 0,
    ]);
    const stats = parseNumstat(nums.stdout);
    const files = parseNameStatus(names.stdout).map((f) => ({ ...f, ...(stats.get(f.path) ?? { added: null, deleted: null }) }));
    return {
      taskId,
      branch: wt.branch,
      base: base.name,
      head: head?.sha ?? '',
      headToken: head?.token ?? null,
      headTask: head?.task ?? null,
      finalToken: TaskReview.finalToken(t),
      commits: count,
      files,
      patch: patch.stdout.length > MAX_PATCH_CHARS ? patch.stdout.slice(0, MAX_PATCH_CHARS) : patch.stdout,
      truncated: patch.stdout.length > MAX_PATCH_CHARS,
      uncommitted,
    };
  }

  /**
   * What the work is read against: on a board with a remote, the remote's base as this clone last fetched it
   * (where approval merges it, and where each claim starts; the person's own branch is not moved by approvals
   * and may lag far behind); else the base branch. A base this clone lacks (a branch only the remote has)
   * falls back to the commit the worktree was made at.
   */
  private async diffBase(wt: TaskWorktree): Promise<{ rev: string; name: string }> {
    const remote = this.r.board.state.settings.remote;
    const tracking = remote ? trackingRef(remote.name, wt.base) : null;
    if (remote && tracking && this.r.readRef(tracking)) return { rev: tracking, name: `${remote.name}/${wt.base}` };
    if (this.r.readRef(`refs/heads/${wt.base}`) || !wt.baseCommit || !(await this.r.treeOf(wt.baseCommit))) return { rev: `refs/heads/${wt.base}`, name: wt.base };
    return { rev: wt.baseCommit, name: `${wt.base} at ${shortSha(wt.baseCommit)}` };
  }

  private async trailersOf(rev: string): Promise<{ sha: string; token: number | null; task: string | null }> {
    const out = await gitLine(this.r.repo.root, [
      'log', '-1', `--format=%H%x00%(trailers:key=${Trailers.token},valueonly,separator=%x2C)%x00%(trailers:key=${Trailers.task},valueonly,separator=%x2C)`, rev, '--',
    ]);
    const [sha = '', token = '', task = ''] = out.split('\0');
    const n = Number(token.split(',').at(-1)?.trim());
    return { sha, token: Number.isInteger(n) && n > 0 ? n : null, task: task.split(',').at(-1)?.trim() || null };
  }

  /**
   * Merge an approved task's work into its base: exactly the commit `done` froze (never the branch's head,
   * which may have moved since), only if the board recorded it under the claim that said done, its tree is
   * the one recorded, and the merge is clean. Otherwise nothing changes and the reason is thrown. Returns the
   * merge commit, or null when the work has nothing the base lacks.
   */
  merge(taskId: string, title: string): Promise<string | null> {
    return this.r.queue.run(async () => {
      const t = this.r.task(taskId);
      const wt = t.worktree;
      if (!wt) return null;
      const refs = await this.r.refs([wt.base]);
      const baseSha = refs.get(wt.base)?.sha;
      if (!baseSha) throw new WorktreeError('no-base', `the base branch '${wt.base}' no longer exists: nothing was merged.`);
      const commit = await this.mergeOnto(t, wt, baseSha, wt.base, title);
      if (commit) await this.moveBase(wt.base, baseSha, commit);
      return commit;
    });
  }

  /**
   * Approval on a board several machines share: the same merge of exactly the frozen sha (fetched from the
   * remote's task namespace when this clone lacks it), made on the remote's base head as fetched now, and
   * pushed there as a compare-and-swap against that head (`--force-with-lease=<base>:<sha>`). A base moved
   * meanwhile (another host's approval, a person's push) is fetched again and merged anew, a bounded number
   * of times. The person's own branches are never moved: only this clone's remote-tracking ref of the base
   * follows the push, as a fetch would. Throws the reason (nothing pushed) otherwise.
   */
  mergeToRemote(taskId: string, title: string, remote: GitRemote): Promise<RemoteMerge | null> {
    // One approval's fetch, merge and push at a time on this host: a second would merge on the base the first
    // is about to move. Not the repository's queue: a slow remote must not hold up grants for a minute.
    return this.remoteQueue.run(async () => {
      const link = new TaskRemote(this.r, remote);
      const on = `${remote.name}/${this.r.task(taskId).worktree?.base ?? ''}`;
      for (let tries = 1; ; tries++) {
        const t = this.r.task(taskId);
        const wt = t.worktree;
        if (!wt) return null;
        const { onto: baseSha, merge: commit } = await this.mergeOnRemoteBase(link, t, wt, on, title);
        if (!commit) return { merged: null, base: wt.base, baseSha, tries };
        const [out] = await link.push([{ src: commit, dst: `refs/heads/${wt.base}`, expect: baseSha }]);
        if (out?.ok) {
          // What `git push` itself does: the clone's view of the remote's base follows the push.
          await this.r.git(this.r.repo.root, ['update-ref', '-m', `forkbench: ${taskId} merged`, trackingRef(remote.name, wt.base), commit, baseSha], { allowFail: true });
          await this.dropRemoteTask(link, t);
          return { merged: commit, base: wt.base, baseSha, tries };
        }
        const said = out?.message ?? 'no answer';
        if (out && !out.ok && out.why === 'stale') {
          if (tries < RemoteMergeConstants.maxPushTries) continue;
          throw new WorktreeError(
            'base-moved',
            `${wt.base} on ${remote.name} moved under each of ${tries} merges (other approvals, or someone pushing to it): nothing was pushed and ${taskId} stays in review. Approve again.`,
          );
        }
        if (out && !out.ok && out.why === 'rejected')
          throw new WorktreeError('git', `${remote.name} refused the push of the merge into ${wt.base}: ${said}. Nothing changed there; ${taskId} stays in review.`);
        throw new WorktreeError('git', `${remote.name} could not be reached to push the merge into ${wt.base}: ${said}. Nothing was pushed; ${taskId} stays in review.`);
      }
    });
  }

  /** The base's head on the remote now (fetchBase), between this host's approvals rather than amid one. */
  remoteBase(remote: GitRemote, base: string): Promise<string> {
    return this.remoteQueue.run(() => this.fetchBase(new TaskRemote(this.r, remote), base));
  }

  /** Whether the person's own branch `base` in this clone has the commit already. */
  async hasCommitOn(base: string, sha: string): Promise<boolean> {
    return this.r.isAncestor(sha, `refs/heads/${base}`);
  }

  /**
   * The base's head on the remote now, fetched into this clone's remote-tracking ref of it (where the
   * person's own `git fetch` puts it too: that is the one ref of theirs this touches).
   */
  private async fetchBase(link: TaskRemote, base: string, taskId?: string): Promise<string> {
    let head: { sha: string } | null;
    try {
      head = await link.fetchBranch(base);
    } catch (err) {
      const still = taskId ? ` Nothing was merged or pushed; ${taskId} stays in review.` : '';
      throw new WorktreeError('git', `could not fetch ${base} from ${link.remote.name}: ${(err as Error).message.trim()}.${still}`);
    }
    if (!head) throw new WorktreeError('no-base', `${base} on ${link.remote.name} could not be read after fetching it: nothing was merged.`);
    return head.sha;
  }

  /** The frozen commit in this clone: there already (made here, or fetched before), or fetched from the
   *  remote's task namespace, where its host pushes each recorded commit. */
  private async haveCommit(link: TaskRemote, taskId: string, sha: string): Promise<void> {
    const has = async () => (await this.r.git(this.r.repo.root, ['cat-file', '-e', `${sha}^{commit}`], { allowFail: true })).code === 0;
    if (await has()) return;
    const fetched = await link.fetchTask(taskId);
    if (await has()) return;
    throw new WorktreeError(
      'git',
      `${shortSha(sha)}, the commit ${taskId}'s work was submitted at, is not in this clone, and ${link.remote.name} does not have it under ${this.r.remoteRefOf(taskId)}${fetched ? ` (${fetched})` : ''}: its host has not pushed it yet, or it was lost with that host. Nothing was merged or pushed; ${taskId} stays in review.`,
    );
  }

  /** After the merge landed, the task's copy in the remote's namespace has served: removed if it still holds
   *  the merged sha (a compare-and-swap; anything else there is left alone). A failure costs nothing. */
  private async dropRemoteTask(link: TaskRemote, t: Task): Promise<void> {
    const sha = (t.submitted ?? t.record)?.sha;
    if (sha) await link.push([{ src: '', dst: this.r.remoteRefOf(t.id), expect: sha }], { verify: false }).catch(() => undefined);
  }

  /**
   * The merge commit of the task's frozen work onto `baseSha` (named `baseName` in what a person reads),
   * after the checks approval makes: recorded under the final token, its tree as recorded, merging cleanly.
   * Null when the base already has it all. Writes objects only: no ref moves here.
   */
  private async mergeOnto(t: Task, wt: TaskWorktree, baseSha: string, baseName: string, title: string): Promise<string | null> {
    const taskId = t.id;
    const root = this.r.repo.root;
    const head = await this.reviewed(t, wt);
    if (!head) throw new WorktreeError('no-worktree', `the branch ${wt.branch} no longer exists: nothing was merged.`);
    const headSha = head.sha;
    const final = TaskReview.finalToken(t);
    // Whether the base has it all is asked of git directly: a failed count must never read as "nothing to merge".
    const isIn = await this.r.isAncestor(headSha, baseSha);
    const facts = { taskId, commits: isIn ? 0 : 1, headToken: head.token, headTask: head.task, finalToken: final };
    const verdict = mergeVerdict(facts);
    if (verdict.ok && !verdict.merges) return null;
    if (!verdict.ok)
      throw new WorktreeError(
        'wrong-token',
        `${wt.branch}'s last commit ${shortSha(headSha)} was ${headWritten(facts)}, but the work under review was submitted under token ${final ?? 'none'}: nothing was merged. Reject it so the holder commits its work, or reassign it.`,
      );
    const rec = t.submitted ?? t.record;
    if (rec) {
      const tree = await this.r.treeOf(headSha);
      if (tree !== rec.tree) throw new WorktreeError('wrong-token', `${shortSha(headSha)}'s content is not what the board recorded (tree ${shortSha(tree)}, recorded ${shortSha(rec.tree)}): nothing was merged.`);
    }
    const merged = await this.r.git(root, ['merge-tree', '--write-tree', '--name-only', '--no-messages', baseSha, headSha], { allowFail: true });
    if (merged.code === 1) {
      const conflicted = merged.stdout.split('\n').slice(1).filter(Boolean);
      throw new WorktreeError(
        'merge-conflict',
        `${wt.branch} does not merge cleanly into ${baseName}: conflicts in ${conflicted.join(', ') || 'some files'}. ${baseName} is untouched. To land it, its holder merges ${wt.base} into its branch (git merge ${baseName}), resolves the conflicts, commits and says done again.`,
      );
    }
    if (merged.code !== 0) throw new GitError(['merge-tree'], merged.code, merged.stdout, merged.stderr);
    const treeSha = merged.stdout.split('\n')[0] as string;
    const message = `Merge ${wt.branch}: ${title}\n\n${Trailers.task}: ${taskId}\n${Trailers.token}: ${final}\n`;
    return this.commitTree(treeSha, baseSha, headSha, message);
  }

  private async commitTree(tree: string, parent1: string, parent2: string, message: string): Promise<string> {
    return (await this.r.git(this.r.repo.root, ['commit-tree', tree, '-p', parent1, '-p', parent2, '-F', '-'], { input: message, env: await personIdentity(this.r.repo.root) })).stdout.trim();
  }

  /** Move the base to the merge: through `git merge --ff-only` where it is checked out (its files follow,
   *  and git refuses rather than overwrite uncommitted changes), else as a compare-and-swap of the ref. */
  private async moveBase(base: string, from: string, to: string): Promise<void> {
    const list = await this.r.git(this.r.repo.root, ['worktree', 'list', '--porcelain']);
    let checkedOutAt: string | null = null;
    let path: string | null = null;
    for (const line of list.stdout.split('\n')) {
      if (line.startsWith('worktree ')) path = line.slice('worktree '.length);
      else if (line === `branch refs/heads/${base}`) checkedOutAt = path;
    }
    if (!checkedOutAt) {
      const r = await this.r.git(this.r.repo.root, ['update-ref', '-m', `forkbench: merge into ${base}`, `refs/heads/${base}`, to, from], { allowFail: true });
      if (r.code !== 0) throw new WorktreeError('base-moved', `${base} moved while merging: nothing was merged. Approve again.`);
      return;
    }
    const r = await this.r.git(checkedOutAt, ['merge', '--ff-only', '--quiet', to], { allowFail: true });
    if (r.code === 0) return;
    const said = `${r.stderr}\n${r.stdout}`;
    if (/would be overwritten|local changes/i.test(said)) {
      const files = said.split('\n').filter((l) => /^\s+\S/.test(l)).map((l) => l.trim());
      throw new WorktreeError(
        'base-dirty',
        `${checkedOutAt} has uncommitted changes on ${base}${files.length ? ` in ${files.join(', ')}` : ''} that the merge would overwrite: nothing was merged and nothing of yours changed. Commit or stash them, then approve again.`,
      );
    }
    if (/not possible to fast-forward|diverg/i.test(said)) throw new WorktreeError('base-moved', `${base} moved while merging: nothing was merged. Approve again.`);
    throw new WorktreeError('git', `could not move ${base} in ${checkedOutAt}: ${said.trim()}`);
  }

  /**
   * After a merge: each folder goes unless it still has changes nobody committed; the branch goes only if
   * its head is the merged sha or already in the base (a compare-and-swap, so a commit landing meanwhile
   * keeps it); anything else is kept aside as a stray ref and named. Returns what a person should be told.
   * Only this host's own folders and branch are touched: on a board several machines share, a folder the
   * board lists under another host's data folder is that host's to remove (it follows the approval), and
   * stays on the board until it does. `baseRev` is where the merge landed (the remote-tracking ref of the
   * base, when it was pushed to a remote), for the ancestry check of a branch that moved on.
   */
  cleanupMerged(taskId: string, baseRev?: string): Promise<string[]> {
    return this.r.queue.run(async () => {
      const t = this.r.board.state.tasks.get(taskId);
      const wt = t?.worktree;
      const said: string[] = [];
      if (!t || (!wt && !t.parked.length)) return said;
      const all = [...(wt ? [wt] : []), ...t.parked];
      const folders = all.filter((f) => this.ours(f));
      const kept: TaskWorktree[] = [];
      for (const f of folders) {
        const uncommitted = await this.r.uncommittedOf(f);
        if (uncommitted > 0) {
          kept.push(f);
          said.push(`${taskId}'s worktree ${f.path} still has ${plural(uncommitted, 'uncommitted change that was', 'uncommitted changes that were')} not part of the merge: it is kept (parked) until you remove it.`);
          this.folders.detach(taskId, f);
        } else await this.folders.removeFolder(f, taskId, 'merged');
      }
      if (wt) {
        const merged = t.submitted?.sha ?? t.record?.sha ?? null;
        const head = this.r.readRef(`refs/heads/${wt.branch}`);
        if (head) {
          const inBase = head === merged || (await this.r.isAncestor(head, baseRev ?? wt.base));
          if (!inBase) {
            await this.r.keepAside(taskId, head);
            said.push(`${wt.branch} had moved to ${shortSha(head)} after the work was submitted; that commit was not merged and is kept as ${strayRef(wt.branch, head)}.`);
          }
          const del = await this.r.git(this.r.repo.root, ['update-ref', '-d', `refs/heads/${wt.branch}`, head], { allowFail: true });
          if (del.code !== 0) {
            const now = this.r.readRef(`refs/heads/${wt.branch}`);
            if (now) await this.r.keepAside(taskId, now);
            said.push(`${wt.branch} moved while it was being removed; its head ${shortSha(now ?? '')} is kept as ${strayRef(wt.branch, now ?? '')}.`);
            await this.r.git(this.r.repo.root, ['update-ref', '-d', `refs/heads/${wt.branch}`], { allowFail: true });
          }
        }
      }
      const gone = folders.filter((f) => !kept.includes(f));
      if (!kept.length && folders.length === all.length) await this.r.board.run((e) => e.forgetWorktree(taskId, 'merged', HOST_ACTOR));
      else for (const f of gone) await this.r.board.run((e) => e.forgetWorktree(taskId, 'merged', HOST_ACTOR, f.path));
      return said;
    });
  }

  /** The remote's base as fetched now, and the merge of the task's reviewed work onto it (its frozen commit
   *  fetched first if this clone lacks it): approval's and the merge queue's one way to merge with a remote. */
  private async mergeOnRemoteBase(link: TaskRemote, t: Task, wt: TaskWorktree, on: string, title: string): Promise<{ onto: string; merge: string | null }> {
    const onto = await this.fetchBase(link, wt.base, t.id);
    const head = await this.reviewed(t, wt);
    if (head) await this.haveCommit(link, t.id, head.sha);
    return { onto, merge: await this.mergeOnto(t, wt, onto, on, title) };
  }

  /**
   * The merge queue's first step (issue 34): the merge of exactly the frozen sha onto the base as it is now
   * (on a board with a remote, the remote's base as fetched now), with approval's checks, and nothing moved.
   * Null: the task has no worktree left to merge. Throws a WorktreeError (`merge-conflict` naming the files).
   */
  candidate(taskId: string, title: string, remote: GitRemote | null, approved: ApprovedWork): Promise<MergeCandidate | null> {
    if (remote)
      return this.remoteQueue.run(async () => {
        const link = new TaskRemote(this.r, remote);
        const t = this.approvedTask(taskId, approved);
        const wt = t.worktree;
        if (!wt) return null;
        const { onto, merge } = await this.mergeOnRemoteBase(link, t, wt, `${remote.name}/${wt.base}`, title);
        return { base: wt.base, onto, merge, remote: remote.name };
      });
    return this.r.queue.run(async () => {
      const t = this.approvedTask(taskId, approved);
      const wt = t.worktree;
      if (!wt) return null;
      const onto = (await this.r.refs([wt.base])).get(wt.base)?.sha;
      if (!onto) throw new WorktreeError('no-base', `the base branch '${wt.base}' no longer exists: nothing was merged.`);
      return { base: wt.base, onto, merge: await this.mergeOnto(t, wt, onto, wt.base, title) };
    });
  }

  /** The task as the board has it, if its work in review is still the work the person approved (issue 49):
   *  the queue merges exactly that or nothing. Throws `stale-approval` otherwise. */
  private approvedTask(taskId: string, approved: ApprovedWork): Task {
    const t = this.r.task(taskId);
    const now = (t.submitted ?? t.record)?.sha ?? null;
    const token = TaskReview.finalToken(t);
    if (t.state !== 'review' || now !== approved.sha || (approved.token !== null && token !== approved.token))
      throw new WorktreeError(
        'stale-approval',
        `${taskId} was approved at ${shortSha(approved.sha ?? '')} under token ${approved.token ?? 'none'}, but its work is now ${t.state === 'review' ? `${shortSha(now ?? '')} under token ${token ?? 'none'}` : `not in review (${t.state})`}: nothing was merged`,
      );
    return t;
  }

  /** Whether `base` (on a board with a remote, the remote's base as fetched now) has `sha`: a landing its host
   *  stopped in after the board agreed to it moved the base, or did not. */
  async baseHas(base: string, sha: string, remote: GitRemote | null): Promise<boolean> {
    if (!remote) return this.r.isAncestor(sha, `refs/heads/${base}`);
    const head = await this.remoteBase(remote, base);
    return this.r.isAncestor(sha, head);
  }

  /**
   * The merge queue's last step: move the base from `c.onto` to `c.merge`, a compare-and-swap (the person's
   * checked-out branch through `merge --ff-only`; a remote's base through a push with a lease). False: the base
   * moved since the candidate was made, so it was verified against an older base and lands nowhere.
   */
  landCandidate(taskId: string, c: MergeCandidate, remote: GitRemote | null): Promise<boolean> {
    const merge = c.merge;
    if (!merge) return Promise.resolve(true);
    if (remote)
      return this.remoteQueue.run(async () => {
        const link = new TaskRemote(this.r, remote);
        const [out] = await link.push([{ src: merge, dst: `refs/heads/${c.base}`, expect: c.onto }]);
        if (out?.ok) {
          await this.r.git(this.r.repo.root, ['update-ref', '-m', `forkbench: ${taskId} merged`, trackingRef(remote.name, c.base), merge, c.onto], { allowFail: true });
          await this.dropRemoteTask(link, this.r.task(taskId));
          return true;
        }
        if (out && !out.ok && out.why === 'stale') return false;
        const said = out?.message ?? 'no answer';
        if (out && !out.ok && out.why === 'rejected')
          throw new WorktreeError('git', `${remote.name} refused the push of the merge into ${c.base}: ${said}. Nothing changed there; ${taskId} stays in review.`);
        throw new WorktreeError('git', `${remote.name} could not be reached to push the merge into ${c.base}: ${said}. Nothing was pushed; ${taskId} stays in review.`);
      });
    return this.r.queue.run(async () => {
      try {
        await this.moveBase(c.base, c.onto, merge);
        return true;
      } catch (err) {
        if (err instanceof WorktreeError && err.problem === 'base-moved') return false;
        throw err;
      }
    });
  }

  /** A checkout of `commit` of its own at `dir` (detached, no branch), where the queue runs a verify command:
   *  neither the agent's folder nor the person's. Whatever an earlier run left there is removed first. */
  async checkoutAt(dir: string, commit: string): Promise<void> {
    await this.removeCheckout(dir);
    await this.r.queue.run(() => this.r.addWorktree(dir, commit));
  }

  /** Remove a checkout checkoutAt made (and git's note of it), whatever the verify command left in it. */
  async removeCheckout(dir: string): Promise<void> {
    await this.r.queue.run(async () => {
      await this.r.git(this.r.repo.root, ['worktree', 'remove', '--force', '--force', dir], { allowFail: true });
      await rm(dir, { recursive: true, force: true });
      await this.r.git(this.r.repo.root, ['worktree', 'prune'], { allowFail: true });
    });
  }

  /** Whether the folder is this clone's (ClaimFolders.ours). */
  ours(f: TaskWorktree): boolean {
    return this.folders.ours(f);
  }
}

function parseNameStatus(z: string): Array<{ path: string; status: string }> {
  const parts = z.split('\0');
  const out: Array<{ path: string; status: string }> = [];
  for (let i = 0; i < parts.length; ) {
    const status = parts[i++];
    if (!status) continue;
    // A rename or copy names the old path, then the new one.
    if (status.startsWith('R') || status.startsWith('C')) {
      const from = parts[i++] ?? '';
      out.push({ path: parts[i++] ?? '', status: `${status[0]} ${from}` });
    } else out.push({ path: parts[i++] ?? '', status });
  }
  return out;
}

function parseNumstat(z: string): Map<string, { added: number | null; deleted: number | null }> {
  const out = new Map<string, { added: number | null; deleted: number | null }>();
  const parts = z.split('\0');
  for (let i = 0; i < parts.length; ) {
    const head = parts[i++];
    if (!head) continue;
    const [a, d, path] = head.split('\t');
    const num = (s: string | undefined) => (s === '-' || s === undefined ? null : Number(s));
    // For renames numstat -z leaves the path empty and gives old and new paths next.
    let p = path ?? '';
    if (p === '') {
      i++;
      p = parts[i++] ?? '';
    }
    out.set(p, { added: num(a), deleted: num(d) });
  }
  return out;
}

/**
 * Who the person's merge is by, named to git outside its config: their own user.name and user.email (system
 * or global config; the repository's is every agent's to write), else the identity the host was started
 * with, else Forkbench (a person with no identity set up still gets a merge).
 */
async function personIdentity(root: string): Promise<NodeJS.ProcessEnv> {
  const said = new Map((await configSettings(root, '^user\\.(name|email)$')).filter(personScope).map((s) => [s.key, s.value]));
  const name = said.get('user.name') || process.env.GIT_AUTHOR_NAME || 'Forkbench';
  const email = said.get('user.email') || process.env.GIT_AUTHOR_EMAIL || 'forkbench@localhost';
  return { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email };
}
