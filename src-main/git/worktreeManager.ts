import * as fs from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Task, TaskWorktree } from '../../src-shared/board/model.js';
import { shortSha, taskBranch, Trailers } from '../../src-shared/git/taskBranch.js';
import type { ClaimWorktree } from '../../src-shared/protocol/agentMethods.js';
import type { GitIsolation, TaskDiff, WorktreeInfo, WorktreeProblem } from '../../src-shared/protocol/windowApi.js';
import { plural } from '../../src-shared/text/plural.js';
import type { BoardService } from '../board/boardService.js';
import { findOnPath } from '../host/pathLookup.js';
import { FenceHooks } from './fenceHooks.js';
import { git, GitError, gitLine, GitQueue } from './git.js';
import { currentBranch, probeRepo, worktreeGitDir } from './repoProbe.js';

export class WorktreeError extends Error {
  constructor(
    readonly problem: WorktreeProblem,
    message: string,
  ) {
    super(message);
    this.name = 'WorktreeError';
  }
}

/** A review diff is for reading: past 512 KiB a window shows the file list and says the rest is cut. */
const MAX_PATCH_CHARS = 512 * 1024;
const HOST = 'forkbench';

/** The worktree's folder is there (not deleted by hand). */
const present = (wt: TaskWorktree) => fs.existsSync(join(wt.path, '.git'));

/**
 * Git worktrees under claims. Each task gets one worktree on `forkbench/T-n`, made from the Thread's base
 * branch under the Thread's data folder, never inside the user's folder. A re-claim continues in it; the
 * hooks in it ask the board before any commit, ref move or push lands (see fenceScript.ts); approval merges
 * the branch only if its head was written under the claim that submitted it.
 *
 * Every git command that changes something runs through one queue: git's locks fail rather than wait.
 */
export class WorktreeManager {
  private readonly queue = new GitQueue();
  private readonly hooks: FenceHooks;
  private readonly worktreesDir: string;
  private worktreeConfigOn = false;

  private constructor(
    private readonly folder: string,
    private readonly repo: { root: string; prefix: string; gitDir: string; commonDir: string },
    private readonly board: BoardService,
    dataDir: string,
    perl: string,
    chainTo: string,
  ) {
    this.worktreesDir = join(dataDir, 'worktrees');
    this.hooks = new FenceHooks(join(dataDir, 'hooks'), perl, chainTo);
  }

  /** Folders outside the Thread's folder that agents edit while working on tasks: the worktrees. For CLIs
   *  that sandbox writes. (Not the git folder: Codex's sandbox keeps every .git read-only whatever the roots,
   *  so a commit from it runs outside the sandbox with its person's approval, and the fence asks the board.) */
  writableRoots(): string[] {
    return [this.worktreesDir];
  }

  /** A manager for the folder's repository, or the reason there is no isolation in this Thread. */
  static async open(folder: string, dataDir: string, board: BoardService): Promise<WorktreeManager | { reason: string }> {
    const probe = await probeRepo(folder);
    if (!probe.ok) return { reason: probe.reason };
    // git needs perl too, so it is nearly always there.
    const perl = findOnPath('perl');
    if (!perl) return { reason: 'perl is not installed (git normally brings it): the hooks that fence commits need it, so claims get no worktree.' };
    const hooksPath = (await git(probe.root, ['config', '--get', 'core.hooksPath'], { allowFail: true })).stdout.trim();
    // Relative hooksPath (husky's `.husky/_`) is relative to each worktree's top, which the wrapper resolves.
    const chainTo = hooksPath || join(probe.commonDir, 'hooks');
    return new WorktreeManager(folder, probe, board, dataDir, perl, chainTo);
  }

  /** The branch worktrees start from: the Thread's setting, else the branch the folder has checked out. */
  baseBranch(): string {
    const set = this.board.state.settings.baseBranch;
    if (set) return set;
    const b = currentBranch(this.repo.gitDir);
    if (!b)
      throw new WorktreeError(
        'detached-head',
        `${this.folder} has a detached HEAD, so there is no current branch to start task branches from: check out a branch there, or set a base branch in the Thread's settings.`,
      );
    return b;
  }

  isolation(): GitIsolation {
    try {
      return { isolated: true, repoRoot: this.repo.root, baseBranch: this.baseBranch() };
    } catch (err) {
      return { isolated: false, reason: (err as Error).message };
    }
  }

  /**
   * Give the claim (agent, token) of a task its worktree: make it on first claim, continue in it on a
   * re-claim, make it again if its folder was deleted by hand. The claim file the hooks read is written last,
   * so the holder's first commit already runs under its token.
   */
  issue(taskId: string, agentId: string, token: number): Promise<ClaimWorktree> {
    return this.queue.run(async () => {
      const t = this.task(taskId);
      const notes: string[] = [];
      let wt = t.worktree;
      if (!wt) wt = await this.create(taskId, notes);
      else if (!present(wt)) wt = await this.remake(taskId, wt, notes);
      const hookDir = this.hooks.install(taskId, { branch: wt.branch, base: wt.base });
      this.pointHooks(wt.path, hookDir);
      this.hooks.issue(taskId, { branch: wt.branch, base: wt.base, agentId, token });
      return { path: wt.path, branch: wt.branch, base: wt.base, workdir: this.workdirOf(wt.path), notes };
    });
  }

  workdirOf(path: string): string {
    return this.repo.prefix ? join(path, this.repo.prefix) : path;
  }

  /** A claim ended: the worktree stays (parked) for the next holder, but answers to nobody now. */
  revoke(taskId: string): void {
    const t = this.board.state.tasks.get(taskId);
    if (t?.worktree && fs.existsSync(this.hooks.dirOf(taskId))) this.hooks.issue(taskId, { branch: t.worktree.branch, base: t.worktree.base, agentId: '', token: 0 });
  }

  private task(taskId: string): Task {
    const t = this.board.state.tasks.get(taskId);
    if (!t) throw new WorktreeError('no-worktree', `no task ${taskId}`);
    return t;
  }

  private async create(taskId: string, notes: string[]): Promise<TaskWorktree> {
    const base = this.baseBranch();
    const branch = taskBranch(taskId);
    const path = join(this.worktreesDir, taskId);
    const refs = await this.refs([branch, base]);
    if (refs.has(branch))
      throw new WorktreeError(
        'branch-taken',
        `the branch ${branch} already exists in ${this.repo.root}, and Forkbench did not make it for this Thread: rename it (git branch -m ${branch} OTHER) or delete it, then unblock ${taskId}. Nothing was changed.`,
      );
    const baseCommit = refs.get(base);
    if (!baseCommit) throw new WorktreeError('no-base', `the base branch '${base}' does not exist in ${this.repo.root}: set an existing branch in the Thread's settings.`);
    if (fs.existsSync(path) && fs.readdirSync(path).length > 0)
      throw new WorktreeError('path-taken', `${path} already exists and is not empty (left from an earlier board?): move it away, then unblock ${taskId}. Nothing was changed.`);
    fs.mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    await this.enableWorktreeConfig();
    const [, dirty] = await Promise.all([
      git(this.repo.root, ['worktree', 'add', '--quiet', '-b', branch, path, baseCommit]),
      base === currentBranch(this.repo.gitDir) ? this.uncommittedIn(this.folder, false) : Promise.resolve(0),
    ]);
    const wt: TaskWorktree = { path, branch, base, baseCommit };
    await this.board.run((e) => e.recordWorktree(taskId, wt, HOST));
    this.copyFiles(path, notes);
    if (dirty > 0)
      notes.push(`${this.folder} has ${plural(dirty, 'uncommitted change')} on ${base}: the worktree starts from ${base}'s last commit ${shortSha(baseCommit)} without them.`);
    return wt;
  }

  /** The folder was deleted by hand: make it again from the branch, which holds every commit. */
  private async remake(taskId: string, wt: TaskWorktree, notes: string[]): Promise<TaskWorktree> {
    await git(this.repo.root, ['worktree', 'prune']);
    const refs = await this.refs([wt.branch, wt.base]);
    const head = refs.get(wt.branch);
    if (fs.existsSync(wt.path) && fs.readdirSync(wt.path).length > 0)
      throw new WorktreeError('path-taken', `${wt.path} is no longer a git worktree but has files in it: move it away, then unblock ${taskId}. Nothing was changed.`);
    await this.enableWorktreeConfig();
    if (head) {
      await git(this.repo.root, ['worktree', 'add', '--quiet', wt.path, wt.branch]);
      notes.push(`The worktree ${wt.path} had been deleted by hand; it was made again from ${wt.branch} at ${shortSha(head)}: every commit is there, changes never committed are not.`);
      this.copyFiles(wt.path, notes);
      return wt;
    }
    const baseCommit = refs.get(wt.base);
    if (!baseCommit) throw new WorktreeError('no-base', `the base branch '${wt.base}' does not exist any more in ${this.repo.root}: set an existing branch in the Thread's settings.`);
    await git(this.repo.root, ['worktree', 'add', '--quiet', '-b', wt.branch, wt.path, baseCommit]);
    const again: TaskWorktree = { ...wt, baseCommit };
    await this.board.run((e) => e.recordWorktree(taskId, again, HOST));
    notes.push(`Both the worktree and the branch ${wt.branch} had been deleted by hand; they were made again from ${wt.base} at ${shortSha(baseCommit)}.`);
    this.copyFiles(wt.path, notes);
    return again;
  }

  private copyFiles(path: string, notes: string[]): void {
    const missing: string[] = [];
    for (const rel of this.board.state.settings.copyFiles) {
      const from = resolve(this.repo.root, rel);
      const to = resolve(path, rel);
      if (!fs.existsSync(from)) {
        missing.push(rel);
        continue;
      }
      if (fs.existsSync(to)) continue; // tracked by git, or already there: never overwrite the worktree's own
      fs.mkdirSync(dirname(to), { recursive: true });
      fs.cpSync(from, to, { recursive: true });
    }
    if (missing.length) notes.push(`Not copied into the worktree (not found in ${this.repo.root}): ${missing.join(', ')}.`);
  }

  /** Worktree-specific config lets each task's worktree have its own hooks without touching the repo's. */
  private async enableWorktreeConfig(): Promise<void> {
    if (this.worktreeConfigOn) return;
    const r = await git(this.repo.root, ['config', '--get', 'extensions.worktreeConfig'], { allowFail: true });
    if (r.stdout.trim() !== 'true') await git(this.repo.root, ['config', 'extensions.worktreeConfig', 'true']);
    this.worktreeConfigOn = true;
  }

  /** `core.hooksPath` for this worktree alone, written straight into its config.worktree (no process). */
  private pointHooks(path: string, hookDir: string): void {
    const admin = worktreeGitDir(path);
    if (!admin) throw new WorktreeError('git', `${path} is not a git worktree`);
    const quoted = `"${hookDir.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
    fs.writeFileSync(join(admin, 'config.worktree'), `[core]\n\thooksPath = ${quoted}\n`);
  }

  private async refs(branches: string[]): Promise<Map<string, string>> {
    const r = await git(this.repo.root, ['for-each-ref', '--format=%(refname)%00%(objectname)', ...branches.map((b) => `refs/heads/${b}`)]);
    const out = new Map<string, string>();
    for (const line of r.stdout.split('\n')) {
      const [ref, sha] = line.split('\0');
      if (ref && sha) out.set(ref.slice('refs/heads/'.length), sha);
    }
    return out;
  }

  /** Files changed and not committed in a folder (untracked ones too, unless `untracked` is false). */
  private async uncommittedIn(path: string, untracked = true): Promise<number> {
    const r = await git(path, ['--no-optional-locks', 'status', '--porcelain', `--untracked-files=${untracked ? 'normal' : 'no'}`]);
    return r.stdout.split('\n').filter(Boolean).length;
  }

  /** Uncommitted changes in a task's worktree; none when its folder is gone. */
  private uncommittedOf(wt: TaskWorktree): Promise<number> {
    return present(wt) ? this.uncommittedIn(wt.path) : Promise.resolve(0);
  }

  /** Commits on the task branch that its base does not have (0 if either is gone). */
  private async aheadOf(wt: TaskWorktree): Promise<number> {
    const r = await git(this.repo.root, ['rev-list', '--count', `${wt.base}..${wt.branch}`], { allowFail: true });
    return Number(r.stdout.trim()) || 0;
  }

  // ---------------------------------------------------------------- the window's list

  async list(): Promise<WorktreeInfo[]> {
    const out: WorktreeInfo[] = [];
    for (const t of this.board.state.tasks.values()) {
      const wt = t.worktree;
      if (!wt) continue;
      const [uncommitted, ahead] = await Promise.all([this.uncommittedOf(wt).catch(() => 0), this.aheadOf(wt)]);
      out.push({ taskId: t.id, title: t.title, path: wt.path, branch: wt.branch, base: wt.base, held: t.claim !== null, missing: !present(wt), uncommitted, ahead });
    }
    return out;
  }

  /**
   * Remove a parked worktree and its branch. Refused while a claim works in it, and, unless the person said
   * so (`force`), while it has uncommitted changes or commits its base does not have.
   */
  remove(taskId: string, force: boolean): Promise<void> {
    return this.queue.run(async () => {
      const t = this.task(taskId);
      const wt = t.worktree;
      if (!wt) throw new WorktreeError('no-worktree', `${taskId} has no worktree`);
      if (t.claim) throw new WorktreeError('held', `${t.claim.agentId} is working in ${taskId}'s worktree: release the task first.`);
      if (!force) {
        const [uncommitted, ahead] = await Promise.all([this.uncommittedOf(wt), this.aheadOf(wt)]);
        const losing = [
          uncommitted ? plural(uncommitted, 'uncommitted change') : '',
          ahead ? `${plural(ahead, 'commit')} that ${wt.base} does not have` : '',
        ].filter(Boolean);
        if (losing.length) throw new WorktreeError('uncommitted', `${taskId}'s worktree has ${losing.join(' and ')}: removing it loses them. Remove it anyway only if you mean to.`);
      }
      await this.removeNow(taskId, wt);
      await this.board.run((e) => e.forgetWorktree(taskId, 'removed', 'user'));
    });
  }

  /** Callers have checked there is nothing to lose, or the person said so: git is not asked to check again. */
  private async removeNow(taskId: string, wt: TaskWorktree): Promise<void> {
    if (present(wt)) await git(this.repo.root, ['worktree', 'remove', '--force', wt.path]);
    else await git(this.repo.root, ['worktree', 'prune']);
    fs.rmSync(wt.path, { recursive: true, force: true });
    await git(this.repo.root, ['branch', '-D', wt.branch], { allowFail: true });
    this.hooks.forget(taskId);
  }

  // ---------------------------------------------------------------- review

  /** The token of the claim whose work is in review: the one that said done. */
  static finalToken(t: Task): number | null {
    return t.claim?.token ?? t.lastClaim?.token ?? null;
  }

  async diff(taskId: string): Promise<TaskDiff> {
    const t = this.task(taskId);
    const wt = t.worktree;
    if (!wt) throw new WorktreeError('no-worktree', `${taskId} has no worktree: it was never claimed here, or its work was merged.`);
    const root = this.repo.root;
    const range = `${wt.base}...${wt.branch}`;
    const [head, count, names, nums, patch, uncommitted] = await Promise.all([
      this.headOf(wt.branch),
      this.aheadOf(wt),
      git(root, ['diff', '--name-status', '-M', '-z', range]),
      git(root, ['diff', '--numstat', '-M', '-z', range]),
      git(root, ['diff', '--no-color', '--no-ext-diff', '-M', range]),
      this.uncommittedOf(wt),
    ]);
    const stats = parseNumstat(nums.stdout);
    const files = parseNameStatus(names.stdout).map((f) => ({ ...f, ...(stats.get(f.path) ?? { added: null, deleted: null }) }));
    return {
      taskId,
      branch: wt.branch,
      base: wt.base,
      head: head.sha,
      headToken: head.token,
      finalToken: WorktreeManager.finalToken(t),
      commits: count,
      files,
      patch: patch.stdout.length > MAX_PATCH_CHARS ? patch.stdout.slice(0, MAX_PATCH_CHARS) : patch.stdout,
      truncated: patch.stdout.length > MAX_PATCH_CHARS,
      uncommitted,
    };
  }

  private async headOf(branch: string): Promise<{ sha: string; token: number | null; task: string | null }> {
    const out = await gitLine(this.repo.root, [
      'log', '-1', `--format=%H%x00%(trailers:key=${Trailers.token},valueonly,separator=%x2C)%x00%(trailers:key=${Trailers.task},valueonly,separator=%x2C)`, branch, '--',
    ]);
    const [sha = '', token = '', task = ''] = out.split('\0');
    const n = Number(token.split(',').at(-1)?.trim());
    return { sha, token: Number.isInteger(n) && n > 0 ? n : null, task: task.split(',').at(-1)?.trim() || null };
  }

  /**
   * Merge an approved task's branch into its base. The base moves only if the branch head was written under
   * the claim that submitted the work and the merge is clean; otherwise nothing changes and the reason is
   * thrown. Returns the merge commit, or null when the branch has nothing the base lacks.
   */
  merge(taskId: string, title: string): Promise<string | null> {
    return this.queue.run(async () => {
      const t = this.task(taskId);
      const wt = t.worktree;
      if (!wt) return null;
      const root = this.repo.root;
      const refs = await this.refs([wt.branch, wt.base]);
      const baseSha = refs.get(wt.base);
      const headSha = refs.get(wt.branch);
      if (!baseSha) throw new WorktreeError('no-base', `the base branch '${wt.base}' no longer exists: nothing was merged.`);
      if (!headSha) throw new WorktreeError('no-worktree', `the branch ${wt.branch} no longer exists: nothing was merged.`);
      const isIn = await git(root, ['merge-base', '--is-ancestor', headSha, baseSha], { allowFail: true });
      if (isIn.code === 0) return null;
      const head = await this.headOf(headSha);
      const final = WorktreeManager.finalToken(t);
      if (head.token === null || head.token !== final || head.task !== taskId)
        throw new WorktreeError(
          'wrong-token',
          `${wt.branch}'s last commit ${shortSha(headSha)} was ${head.token === null ? 'not written under any claim (no Forkbench-Token trailer)' : `written under token ${head.token}${head.task && head.task !== taskId ? ` of ${head.task}` : ''}`}, but the work under review was submitted under token ${final ?? 'none'}: nothing was merged. Reject it so the holder commits its work, or reassign it.`,
        );
      const tree = await git(root, ['merge-tree', '--write-tree', '--name-only', '--no-messages', baseSha, headSha], { allowFail: true });
      if (tree.code === 1) {
        const conflicted = tree.stdout.split('\n').slice(1).filter(Boolean);
        throw new WorktreeError(
          'merge-conflict',
          `${wt.branch} does not merge cleanly into ${wt.base}: conflicts in ${conflicted.join(', ') || 'some files'}. ${wt.base} is untouched. Reject with a note asking the holder to merge ${wt.base} into its branch (git merge ${wt.base}), then approve again.`,
        );
      }
      if (tree.code !== 0) throw new GitError(['merge-tree'], tree.code, tree.stdout, tree.stderr);
      const treeSha = tree.stdout.split('\n')[0] as string;
      const message = `Merge ${wt.branch}: ${title}\n\n${Trailers.task}: ${taskId}\n${Trailers.token}: ${final}\n`;
      const merged = await this.commitTree(treeSha, baseSha, headSha, message);
      await this.moveBase(wt.base, baseSha, merged);
      return merged;
    });
  }

  private async commitTree(tree: string, parent1: string, parent2: string, message: string): Promise<string> {
    // A person without user.name/user.email configured still gets a merge: the host signs it as Forkbench.
    const ident = await git(this.repo.root, ['var', 'GIT_COMMITTER_IDENT'], { allowFail: true });
    const env = ident.code === 0 ? undefined : { GIT_AUTHOR_NAME: 'Forkbench', GIT_AUTHOR_EMAIL: 'forkbench@localhost', GIT_COMMITTER_NAME: 'Forkbench', GIT_COMMITTER_EMAIL: 'forkbench@localhost' };
    return (await git(this.repo.root, ['commit-tree', tree, '-p', parent1, '-p', parent2, '-F', '-'], { input: message, env })).stdout.trim();
  }

  /** Move the base to the merge: through `git merge --ff-only` where it is checked out (its files follow,
   *  and git refuses rather than overwrite uncommitted changes), else as a compare-and-swap of the ref. */
  private async moveBase(base: string, from: string, to: string): Promise<void> {
    const list = await git(this.repo.root, ['worktree', 'list', '--porcelain']);
    let checkedOutAt: string | null = null;
    let path: string | null = null;
    for (const line of list.stdout.split('\n')) {
      if (line.startsWith('worktree ')) path = line.slice('worktree '.length);
      else if (line === `branch refs/heads/${base}`) checkedOutAt = path;
    }
    if (!checkedOutAt) {
      const r = await git(this.repo.root, ['update-ref', '-m', `forkbench: merge into ${base}`, `refs/heads/${base}`, to, from], { allowFail: true });
      if (r.code !== 0) throw new WorktreeError('base-moved', `${base} moved while merging: nothing was merged. Approve again.`);
      return;
    }
    const r = await git(checkedOutAt, ['merge', '--ff-only', '--quiet', to], { allowFail: true });
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

  /** After a merge: the worktree and branch go, unless the worktree still has changes nobody committed. */
  cleanupMerged(taskId: string): Promise<string | null> {
    return this.queue.run(async () => {
      const wt = this.board.state.tasks.get(taskId)?.worktree;
      if (!wt) return null;
      const uncommitted = await this.uncommittedOf(wt);
      if (uncommitted > 0)
        return `${taskId}'s worktree ${wt.path} still has ${plural(uncommitted, 'uncommitted change that was', 'uncommitted changes that were')} not part of the merge: it is kept (parked) until you remove it.`;
      await this.removeNow(taskId, wt);
      await this.board.run((e) => e.forgetWorktree(taskId, 'merged', HOST));
      return null;
    });
  }

  idle(): Promise<void> {
    return this.queue.idle();
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
