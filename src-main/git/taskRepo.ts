import * as fs from 'node:fs';
import { inflateSync } from 'node:zlib';
import { join } from 'node:path';
import type { Task, TaskWorktree } from '../../src-shared/board/model.js';
import { remoteTaskRef, strayRef } from '../../src-shared/git/taskBranch.js';
import type { GitIsolation, WorktreeProblem } from '../../src-shared/protocol/windowApi.js';
import type { BoardService } from '../board/boardService.js';
import { SerialQueue } from '../../src-shared/lifecycle/serialQueue.js';
import { git, withoutAgentPrograms, type GitResult } from './git.js';
import { currentBranch, type RepoProbe } from './repoProbe.js';
import { hooksKeyOf, type BoardNames } from './boardNames.js';

export class WorktreeError extends Error {
  constructor(
    readonly problem: WorktreeProblem,
    message: string,
  ) {
    super(message);
    this.name = 'WorktreeError';
  }

  /** The code a window's refusal carries (the edge's one error mapping reads `code`). */
  get code(): WorktreeProblem {
    return this.problem;
  }
}

/** The folder is there (not deleted by hand). */
export const present = (wt: TaskWorktree) => fs.existsSync(join(wt.path, '.git'));
/** A grant's folder's key: its hooks folder is named for it, as the folder itself is (`<board>/T-3-7`). */
export const keyOf = (wt: TaskWorktree) => hooksKeyOf(wt.path);

export type RepoFacts = Omit<Extract<RepoProbe, { ok: true }>, 'ok'>;

/**
 * The repository as the host touches it for the Thread's tasks: one queue for every git command that changes
 * something (git's locks fail rather than wait), and the reads that must not start a process (ref files, loose objects) because they run
 * inside a grant or for every commit.
 */
export class TaskRepo {
  /** One git mutation at a time: git takes locks (index, refs, worktree admin files) and a second command
   *  that finds one held fails instead of waiting. */
  readonly queue = new SerialQueue();
  /** One fetch into a remote-tracking ref at a time (TaskRemote.fetchBranch): two would fight over its lock,
   *  and the loser fail. Not `queue`: a slow remote must not hold up grants for its time bound. */
  readonly fetches = new SerialQueue();
  /** `git worktree add`s running now: until one has checked out, its HEAD is git's null id, and a fetch that
   *  runs meanwhile fails on it (`bad object worktrees/T-2-6/HEAD`; seen in the two-host chaos run). */
  private readonly adding = new Set<Promise<unknown>>();
  private addsStarted = 0;
  private worktreeConfigOn = false;

  constructor(
    /** The Thread's folder (the person's checkout, maybe a subfolder of the repository). */
    readonly folder: string,
    readonly repo: RepoFacts,
    readonly board: BoardService,
    /** This board's names: its key in every branch and folder it makes. */
    readonly names: BoardNames,
  ) {}

  /** git as the host runs it: no hook of anyone's, and no program an agent could have named in the
   *  repository's or a worktree's config (git.ts's HOST_ONLY, withoutAgentPrograms). */
  async git(cwd: string, args: readonly string[], o: { allowFail?: boolean; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number; closeFds?: boolean } = {}) {
    return git(cwd, await withoutAgentPrograms(cwd, args), o);
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
   * The task's branch: the one the board recorded for its folders (a board from before keys keeps its
   * `forkbench/T-n`), else this board's name for it. Every host of a shared board reads the same record.
   */
  branchOf(taskId: string): string {
    const t = this.board.state.tasks.get(taskId);
    return t?.worktree?.branch ?? t?.parked.at(-1)?.branch ?? this.names.branch(taskId);
  }

  /** Where an unrecorded head of the task's branch is kept (taskBranch.ts's strayRef). */
  strayOf(taskId: string, sha: string): string {
    return strayRef(this.branchOf(taskId), sha);
  }

  /** The remote's copy of the task's branch (taskBranch.ts's remoteTaskRef). */
  remoteRefOf(taskId: string): string {
    return remoteTaskRef(this.branchOf(taskId));
  }

  task(taskId: string): Task {
    const t = this.board.state.tasks.get(taskId);
    if (!t) throw new WorktreeError('no-worktree', `no task ${taskId}`);
    return t;
  }

  workdirOf(path: string): string {
    return this.repo.prefix ? join(path, this.repo.prefix) : path;
  }

  /** A ref's sha read from its file or packed-refs, without a process (this runs inside a grant). */
  readRef(ref: string): string | null {
    try {
      const loose = fs.readFileSync(join(this.repo.commonDir, ref), 'utf8').trim();
      if (/^[0-9a-f]{40,64}$/.test(loose)) return loose;
    } catch {
      // packed
    }
    try {
      for (const line of fs.readFileSync(join(this.repo.commonDir, 'packed-refs'), 'utf8').split('\n')) {
        const [sha, name] = line.split(' ');
        if (name === ref && sha) return sha;
      }
    } catch {
      // none
    }
    return null;
  }

  /** The tree of a commit stored as a loose object (zlib: `commit <size>\0tree <sha>\n…`), or null. */
  looseCommitTree(sha: string): string | null {
    try {
      const raw = inflateSync(fs.readFileSync(join(this.repo.commonDir, 'objects', sha.slice(0, 2), sha.slice(2)))).subarray(0, 128).toString('latin1');
      const m = /^commit \d+\0tree ([0-9a-f]{40,64})\n/.exec(raw);
      return m ? (m[1] as string) : null;
    } catch {
      return null; // packed, or not there: git is asked
    }
  }

  /** The tree of a commit in this repository, '' when the commit is not here: read from its loose object
   *  where it is one (a commit just made, on every commit's path), else asked of git. */
  async treeOf(sha: string): Promise<string> {
    return this.looseCommitTree(sha) ?? (await this.git(this.repo.root, ['rev-parse', '--verify', '--quiet', `${sha}^{tree}`], { allowFail: true })).stdout.trim();
  }

  /** A folder for a grant, detached at `sha`: known as one being made while git makes it. */
  addWorktree(path: string, sha: string): Promise<GitResult> {
    const add = this.git(this.repo.root, ['worktree', 'add', '--quiet', '--detach', path, sha]);
    const settled = add.catch(() => undefined);
    this.addsStarted++;
    this.adding.add(settled);
    void settled.then(() => this.adding.delete(settled));
    return add;
  }

  /** How many folders were begun so far, whether one is being made now, and when those now are made. */
  worktreesMade(): { started: number; any: boolean; done: Promise<unknown> } {
    return { started: this.addsStarted, any: this.adding.size > 0, done: Promise.all([...this.adding]) };
  }

  /** Whether `ancestor` is `sha` or in its history: false too when either commit is not in this clone. */
  async isAncestor(ancestor: string, sha: string): Promise<boolean> {
    return (await this.git(this.repo.root, ['merge-base', '--is-ancestor', ancestor, sha], { allowFail: true })).code === 0;
  }

  /** Branch heads with their trees, in one process. */
  async refs(branches: string[]): Promise<Map<string, { sha: string; tree: string }>> {
    const r = await this.git(this.repo.root, ['for-each-ref', '--format=%(refname)%00%(objectname)%00%(tree)', ...branches.map((b) => `refs/heads/${b}`)]);
    const out = new Map<string, { sha: string; tree: string }>();
    for (const line of r.stdout.split('\n')) {
      const [ref, sha, tree] = line.split('\0');
      if (ref && sha) out.set(ref.slice('refs/heads/'.length), { sha, tree: tree ?? '' });
    }
    return out;
  }

  async keepAside(taskId: string, sha: string): Promise<void> {
    await this.git(this.repo.root, ['update-ref', '-m', `forkbench: ${taskId} kept aside`, this.strayOf(taskId, sha), sha]);
  }

  /** Worktree-specific config lets each folder have its own hooks without touching the repo's. */
  async enableWorktreeConfig(): Promise<void> {
    if (this.worktreeConfigOn) return;
    const r = await git(this.repo.root, ['config', '--get', 'extensions.worktreeConfig'], { allowFail: true });
    if (r.stdout.trim() !== 'true') await git(this.repo.root, ['config', 'extensions.worktreeConfig', 'true']);
    this.worktreeConfigOn = true;
  }

  /** Files changed and not committed in a folder (untracked ones too, unless `untracked` is false). */
  async uncommittedIn(path: string, untracked = true): Promise<number> {
    const r = await this.git(path, ['--no-optional-locks', 'status', '--porcelain', `--untracked-files=${untracked ? 'normal' : 'no'}`]);
    return r.stdout.split('\n').filter(Boolean).length;
  }

  /** Uncommitted changes in a folder; none when it is gone. */
  uncommittedOf(wt: TaskWorktree): Promise<number> {
    return present(wt) ? this.uncommittedIn(wt.path).catch(() => 0) : Promise.resolve(0);
  }

  /** Commits the base does not have, on a commit (0 if either is gone). */
  async aheadOf(base: string, rev: string): Promise<number> {
    const r = await this.git(this.repo.root, ['rev-list', '--count', `${base}..${rev}`], { allowFail: true });
    return Number(r.stdout.trim()) || 0;
  }
}
