import * as fs from 'node:fs';
import { inflateSync } from 'node:zlib';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { BranchRecord, Task, TaskWorktree } from '../../src-shared/board/model.js';
import type { RejectionCode } from '../../src-shared/board/result.js';
import { shortSha, taskBranch, Trailers } from '../../src-shared/git/taskBranch.js';
import type { ClaimWorktree } from '../../src-shared/protocol/agentMethods.js';
import type { GitIsolation, TaskDiff, WorktreeInfo, WorktreeProblem } from '../../src-shared/protocol/windowApi.js';
import { plural } from '../../src-shared/text/plural.js';
import type { BoardService } from '../board/boardService.js';
import { findOnPath } from '../base/pathLookup.js';
import { FenceHooks, type FolderClaim } from './fenceHooks.js';
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

/** The folder is there (not deleted by hand). */
const present = (wt: TaskWorktree) => fs.existsSync(join(wt.path, '.git'));
/** A grant's folder's key: its hooks folder is named for it, as the folder itself is (T-3-7). */
const keyOf = (wt: TaskWorktree) => basename(wt.path);
/** Where an unrecorded head is kept: visible to `git log --all`, out of every branch list, never deleted. */
export const strayRef = (taskId: string, sha: string) => `refs/forkbench/stray/${taskId}/${sha}`;

/** A repair that finds git's lock held (the committing process is still finishing) tries again: git
 *  holds a ref lock for milliseconds; 40 tries 75 ms apart outlast a slow hook. */
const REPAIR_TRIES = 40;
const REPAIR_RETRY_MS = 75;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The tree of a commit stored as a loose object (zlib: `commit <size>\0tree <sha>\n…`), or null. */
function looseCommitTree(commonDir: string, sha: string): string | null {
  try {
    const raw = inflateSync(fs.readFileSync(join(commonDir, 'objects', sha.slice(0, 2), sha.slice(2)))).subarray(0, 128).toString('latin1');
    const m = /^commit \d+\0tree ([0-9a-f]{40,64})\n/.exec(raw);
    return m ? (m[1] as string) : null;
  } catch {
    return null; // packed, or not there: git is asked
  }
}

/**
 * Git worktrees under claims. Each grant gets a fresh folder of its own (the token in its name) on the
 * task's branch `forkbench/T-n`, at the commit the board recorded last, under the Thread's data folder,
 * never inside the user's folder. The previous grant's folder is detached from the branch and fenced: its
 * hooks refuse everything, and nothing a stale process does there reaches the new holder.
 *
 * The board, not the branch, says what the task's work is: every move the fence accepts is recorded (see
 * `readMove`, leaseEngine's recordBranch), a branch head that is not the record is moved aside to
 * refs/forkbench/stray/ and the branch put back, and approval merges exactly the sha `done` froze.
 *
 * Every git command that changes something runs through one queue: git's locks fail rather than wait.
 */
export class WorktreeManager {
  private readonly queue = new GitQueue();
  private readonly hooks: FenceHooks;
  private readonly worktreesDir: string;
  private worktreeConfigOn = false;
  private readonly repairing = new Set<string>();
  private threadFenced = false;
  private threadHooksBefore: string | null = null;

  private constructor(
    private readonly folder: string,
    private readonly repo: { root: string; prefix: string; gitDir: string; commonDir: string },
    private readonly board: BoardService,
    dataDir: string,
    perl: string,
    private readonly chainTo: string,
    socket: string,
  ) {
    this.worktreesDir = join(dataDir, 'worktrees');
    this.hooks = new FenceHooks(join(dataDir, 'hooks'), perl, chainTo, socket);
  }

  /** Folders outside the Thread's folder that agents edit while working on tasks: the worktrees. For CLIs
   *  that sandbox writes. (Not the git folder: Codex's sandbox keeps every .git read-only whatever the roots,
   *  so a commit from it runs outside the sandbox with its person's approval, and the fence asks the board.) */
  writableRoots(): string[] {
    return [this.worktreesDir];
  }

  /** A manager for the folder's repository, or the reason there is no isolation in this Thread. */
  static async open(folder: string, dataDir: string, board: BoardService, socket = ''): Promise<WorktreeManager | { reason: string }> {
    const probe = await probeRepo(folder);
    if (!probe.ok) return { reason: probe.reason };
    // git needs perl too, so it is nearly always there.
    const perl = findOnPath('perl');
    if (!perl) return { reason: 'perl is not installed (git normally brings it): the hooks that fence commits need it, so claims get no worktree.' };
    // The repository's own hooks folder, whatever the scope it was set in, but never ours: the Thread's folder
    // points at the fence's while it is open, and a host that was killed -9 left that setting behind.
    const ours = join(dataDir, 'hooks');
    const set = (await git(probe.root, ['config', '--get-all', '--show-scope', 'core.hooksPath'], { allowFail: true })).stdout
      .split('\n')
      .map((l) => l.slice(l.indexOf('\t') + 1).trim())
      .filter((v) => v && !v.startsWith(ours));
    // Relative hooksPath (husky's `.husky/_`) is relative to each worktree's top, which the wrapper resolves.
    const chainTo = set.at(-1) ?? join(probe.commonDir, 'hooks');
    return new WorktreeManager(folder, probe, board, dataDir, perl, chainTo, socket);
  }

  /** git as the host runs it: the repository's own hooks, never the fence's (the host is not an agent). */
  private git(cwd: string, args: readonly string[], o: { allowFail?: boolean; env?: NodeJS.ProcessEnv; input?: string } = {}) {
    return git(cwd, ['-c', `core.hooksPath=${this.chainTo}`, ...args], { ...o, closeFds: this.repoHasHooks() });
  }

  /** Whether git may run code of the repository's (a hook that is not git's .sample): that code then starts
   *  with nothing of the host's but its stdio, never a pane's terminal. Plain repositories skip the launcher. */
  private repoHasHooks(): boolean {
    if (!isAbsolute(this.chainTo)) return true;
    try {
      return fs.readdirSync(this.chainTo).some((f) => !f.endsWith('.sample'));
    } catch {
      return false;
    }
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

  // ---------------------------------------------------------------- the Thread's own folder

  /**
   * Fence the Thread's folder for agents: its main worktree's `core.hooksPath` (its own config.worktree,
   * which only git commands in that folder read) points at a hook folder that refuses commits and branch
   * moves from agent panes and passes a person's through to the repository's own hooks. Undone on close.
   */
  async fenceThreadFolder(): Promise<void> {
    await this.enableWorktreeConfig();
    const dir = this.hooks.installThread(this.folder);
    const before = (await git(this.repo.root, ['config', '--worktree', '--get', 'core.hooksPath'], { allowFail: true })).stdout.trim();
    // A setting of the person's own at this scope is given back on close (one left by a killed host is not theirs).
    this.threadHooksBefore = before && !before.startsWith(dirname(dir)) ? before : null;
    await git(this.repo.root, ['config', '--worktree', 'core.hooksPath', dir]);
    this.threadFenced = true;
  }

  async unfenceThreadFolder(): Promise<void> {
    if (!this.threadFenced) return;
    this.threadFenced = false;
    if (this.threadHooksBefore) await git(this.repo.root, ['config', '--worktree', 'core.hooksPath', this.threadHooksBefore], { allowFail: true });
    else await git(this.repo.root, ['config', '--worktree', '--unset', 'core.hooksPath'], { allowFail: true });
  }

  // ---------------------------------------------------------------- grants

  /**
   * Give the claim (agent, token) of a task its own folder: a fresh worktree on the task's branch at the
   * board's record (the base's head on a first claim). The previous grant's folder, if any, is detached
   * from the branch and fenced first; a branch head that is not the record is moved aside, never deleted,
   * and never blocks the claim. The claim file the hooks read is written before the agent is told, so its
   * first commit already runs under its token.
   */
  issue(taskId: string, agentId: string, token: number): Promise<ClaimWorktree> {
    return this.queue.run(async () => {
      const t = this.task(taskId);
      const notes: string[] = [];
      if (t.worktree && t.worktree.token === token && present(t.worktree)) return this.handOut(t.worktree, notes);
      const base = t.worktree?.base ?? this.baseBranch();
      const branch = t.worktree?.branch ?? taskBranch(taskId);
      const path = join(this.worktreesDir, `${taskId}-${token}`);
      if (fs.existsSync(path) && fs.readdirSync(path).length > 0)
        throw new WorktreeError('path-taken', `${path} already exists and is not empty (left from an earlier board?): move it away, then unblock ${taskId}. Nothing was changed.`);
      for (const old of [t.worktree, ...t.parked]) if (old) this.detach(taskId, old);
      await this.git(this.repo.root, ['worktree', 'prune']);
      const refs = await this.refs([branch, base]);
      const baseRef = refs.get(base);
      let start: { sha: string; tree: string };
      let record: BranchRecord | undefined;
      if (t.record) start = { sha: t.record.sha, tree: t.record.tree };
      else if (t.worktree && refs.get(branch)) {
        // A board written before records were kept: the branch as it stands is taken as the record once.
        start = refs.get(branch) as { sha: string; tree: string };
        record = { ...start, token: 0, by: HOST };
        notes.push(`The board had no record of ${branch} yet; it records the branch as it is, at ${shortSha(start.sha)}.`);
      } else {
        if (!baseRef) throw new WorktreeError('no-base', `the base branch '${base}' does not exist in ${this.repo.root}: set an existing branch in the Thread's settings.`);
        start = baseRef;
        record = { ...start, token: 0, by: HOST };
      }
      const head = refs.get(branch);
      if (head && head.sha !== start.sha) {
        const why = t.worktree || t.record ? 'which the board never recorded' : 'and Forkbench did not make it for this Thread';
        await this.keepAside(taskId, head.sha);
        notes.push(`${branch} was at ${shortSha(head.sha)}, ${why}: it is kept as ${strayRef(taskId, head.sha)} (nothing deleted), and the branch starts at ${shortSha(start.sha)}.`);
      }
      if (head?.sha !== start.sha) await this.moveBranch(taskId, branch, start.sha, head?.sha ?? '');
      fs.mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      await this.enableWorktreeConfig();
      const [, dirty] = await Promise.all([
        // Detached, then pointed at the branch by its HEAD file: \`worktree add PATH BRANCH\` takes the branch's
        // lock, which a stalled git of the previous holder may still hold; the folder must not wait on it.
        this.git(this.repo.root, ['worktree', 'add', '--quiet', '--detach', path, start.sha]),
        !t.worktree && base === currentBranch(this.repo.gitDir) ? this.uncommittedIn(this.folder, false) : Promise.resolve(0),
      ]);
      const admin = worktreeGitDir(path);
      if (!admin) throw new WorktreeError('git', `${path} is not a git worktree`);
      fs.writeFileSync(join(admin, 'HEAD'), `ref: refs/heads/${branch}\n`);
      const wt: TaskWorktree = { path, branch, base, baseCommit: t.worktree?.baseCommit ?? baseRef?.sha ?? start.sha, token };
      const prev = t.worktree;
      if (prev && !present(prev))
        notes.push(`The worktree ${prev.path} had been deleted by hand; it was made again from ${branch} at ${shortSha(start.sha)}: every recorded commit is there, changes never committed are not.`);
      else if (prev) notes.push(`This claim works in a fresh folder at the board's record ${shortSha(start.sha)}; the previous claim's folder ${prev.path} is parked and fenced, with anything left uncommitted there.`);
      if (dirty > 0)
        notes.push(`${this.folder} has ${plural(dirty, 'uncommitted change')} on ${base}: the worktree starts from ${base}'s last commit ${shortSha(start.sha)} without them.`);
      this.copyFiles(path, notes);
      const hookDir = this.hooks.install(keyOf(wt), { task: taskId, branch, base });
      this.pointHooks(path, hookDir);
      this.hooks.issue(keyOf(wt), { task: taskId, branch, base, agentId, token }, start.sha);
      await this.board.run((e) => e.recordWorktree(taskId, wt, HOST, record));
      // The claim may have ended while its folder was being made (a kill, a reassign): the folder then
      // answers to nobody from the start, as revoke would have made it.
      const now = this.board.state.tasks.get(taskId);
      if (now?.claim?.token !== token) {
        const ended = now?.lastClaim?.token === token ? now.lastClaim.reason : 'ended';
        this.hooks.fence(keyOf(wt), { task: taskId, branch, base, agentId, token }, ended === 'lapsed' ? 'lapsed' : 'stale-token', `your claim on ${taskId} ended (${ended})`);
      }
      return this.handOut(wt, notes);
    });
  }

  private handOut(wt: TaskWorktree, notes: string[]): ClaimWorktree {
    return { path: wt.path, branch: wt.branch, base: wt.base, workdir: this.workdirOf(wt.path), notes };
  }

  workdirOf(path: string): string {
    return this.repo.prefix ? join(path, this.repo.prefix) : path;
  }

  /** The board recorded a move of the task's branch: the current folder's next move starts there. */
  recorded(taskId: string, sha: string): void {
    const wt = this.board.state.tasks.get(taskId)?.worktree;
    if (wt) this.hooks.setRecord(keyOf(wt), sha);
  }

  /** Done froze the task's work, or a rejection gave it back. */
  frozen(taskId: string, frozen: boolean): void {
    const wt = this.board.state.tasks.get(taskId)?.worktree;
    if (wt) this.hooks.freeze(keyOf(wt), frozen);
  }

  /** A claim ended: its folder answers to nobody now, and says why in the board's words. */
  revoke(taskId: string, token: number, code: RejectionCode, message: string): void {
    const t = this.board.state.tasks.get(taskId);
    const wt = t?.worktree;
    if (!wt || (wt.token !== undefined && wt.token !== token)) return;
    const c = this.claimOf(taskId, wt);
    this.hooks.fence(keyOf(wt), c, code, message);
  }

  private claimOf(taskId: string, wt: TaskWorktree): FolderClaim {
    const was = this.hooks.read(keyOf(wt));
    return { task: taskId, branch: wt.branch, base: wt.base, agentId: was.agent ?? '', token: Number(was.token) || 0 };
  }

  /** Take an earlier grant's folder off the branch (its HEAD now names the commit, not the branch), so the
   *  next folder can check the branch out, and fence it. Written into its HEAD file: no git process runs in a
   *  folder a stale agent may still be using. */
  private detach(taskId: string, wt: TaskWorktree): void {
    // Fenced first: between the two, a commit there would otherwise land on a detached HEAD unasked.
    const c = this.claimOf(taskId, wt);
    if (!this.hooks.read(keyOf(wt)).fenced)
      this.hooks.fence(keyOf(wt), c, 'stale-token', `this folder was the worktree of ${taskId}'s claim ${c.token || '(earlier)'}, which has ended`);
    const admin = present(wt) ? worktreeGitDir(wt.path) : null;
    if (admin) {
      const headFile = join(admin, 'HEAD');
      const head = fs.readFileSync(headFile, 'utf8').trim();
      const m = /^ref: (refs\/heads\/.+)$/.exec(head);
      if (m) {
        const sha = this.readRef(m[1] as string);
        if (sha) fs.writeFileSync(headFile, `${sha}\n`);
      }
    }
  }

  /** A ref's sha read from its file or packed-refs, without a process (this runs inside a grant). */
  private readRef(ref: string): string | null {
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

  private task(taskId: string): Task {
    const t = this.board.state.tasks.get(taskId);
    if (!t) throw new WorktreeError('no-worktree', `no task ${taskId}`);
    return t;
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

  /** Worktree-specific config lets each folder have its own hooks without touching the repo's. */
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
    // No automatic gc or maintenance from agents' commits: a background \`git maintenance\` killed with its
    // agent leaves objects/maintenance.lock, a lock shared by every folder of the repository.
    fs.writeFileSync(join(admin, 'config.worktree'), `[core]\n\thooksPath = ${quoted}\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n`);
  }

  /** Branch heads with their trees, in one process. */
  private async refs(branches: string[]): Promise<Map<string, { sha: string; tree: string }>> {
    const r = await this.git(this.repo.root, ['for-each-ref', '--format=%(refname)%00%(objectname)%00%(tree)', ...branches.map((b) => `refs/heads/${b}`)]);
    const out = new Map<string, { sha: string; tree: string }>();
    for (const line of r.stdout.split('\n')) {
      const [ref, sha, tree] = line.split('\0');
      if (ref && sha) out.set(ref.slice('refs/heads/'.length), { sha, tree: tree ?? '' });
    }
    return out;
  }

  // ---------------------------------------------------------------- the record

  /**
   * A hook says the task's branch moved to `to`. The repository says whether it did: the branch's head now,
   * and the commit's tree (what the record keeps, so approval can check the content it merges).
   */
  async readMove(taskId: string, ref: string, to: string): Promise<{ tree: string }> {
    const wt = this.task(taskId).worktree;
    if (!wt || ref !== `refs/heads/${wt.branch}`) throw new WorktreeError('no-worktree', `${ref} is not the branch of ${taskId}`);
    // Both read from the repository's files where they can be (a commit just made is a loose object): this
    // runs for every commit, and a git process costs more than the rest of the record.
    const head = this.readRef(ref);
    const tree = looseCommitTree(this.repo.commonDir, to) ?? (await this.git(this.repo.root, ['rev-parse', '--verify', '--quiet', `${to}^{tree}`], { allowFail: true })).stdout.trim();
    if (!tree) throw new WorktreeError('git', `${shortSha(to)} is not a commit in ${this.repo.root}`);
    if (head !== to) throw new WorktreeError('git', `${wt.branch} is at ${shortSha(head ?? '')}, not at ${shortSha(to)}: nothing was recorded`);
    return { tree };
  }

  /**
   * Put a task's branch back at the board's record, keeping what was there as a stray ref. Called when the
   * board refused a move that landed (a late commit, one under an ended claim) or found the branch off its
   * record. A ref lock still held by the git that moved it is waited out.
   */
  repair(taskId: string): Promise<void> {
    if (this.repairing.has(taskId)) return Promise.resolve();
    this.repairing.add(taskId);
    return this.queue
      .run(async () => {
        for (let i = 0; i < REPAIR_TRIES; i++) {
          const t = this.board.state.tasks.get(taskId);
          const wt = t?.worktree;
          const rec = t?.record;
          if (!wt || !rec || t.state === 'done') return;
          const head = this.readRef(`refs/heads/${wt.branch}`);
          if (head === rec.sha) return;
          if (head) await this.keepAside(taskId, head);
          const r = await this.git(this.repo.root, ['update-ref', '-m', `forkbench: ${taskId} back to its record`, `refs/heads/${wt.branch}`, rec.sha, head ?? ''], { allowFail: true });
          if (r.code === 0) {
            await this.board.run((e) => e.recordRepair(taskId, head ?? '', HOST));
            return;
          }
          await sleep(REPAIR_RETRY_MS);
        }
      })
      .finally(() => this.repairing.delete(taskId));
  }

  /** A compare-and-swap of the task's branch. A lock held by a git still finishing its own move (a late
   *  commit) is waited out for a while; if it outlasts that, the claim goes ahead and the repair that follows
   *  that git's report puts the branch right. */
  private async moveBranch(taskId: string, branch: string, to: string, from: string): Promise<void> {
    for (let i = 0; i < REPAIR_TRIES; i++) {
      const r = await this.git(this.repo.root, ['update-ref', '-m', `forkbench: ${taskId} to its record`, `refs/heads/${branch}`, to, from], { allowFail: true });
      if (r.code === 0) return;
      if (!/lock|exists/i.test(r.stderr)) throw new GitError(['update-ref'], r.code, r.stdout, r.stderr);
      await sleep(REPAIR_RETRY_MS);
    }
    void this.repair(taskId);
  }

  private async keepAside(taskId: string, sha: string): Promise<void> {
    await this.git(this.repo.root, ['update-ref', '-m', `forkbench: ${taskId} kept aside`, strayRef(taskId, sha), sha]);
  }

  /**
   * An agent is gone and so is its process group: git locks it left in its folders (a kill -9 inside `git
   * commit` leaves `index.lock`, `HEAD.lock` or the branch's lock) can be cleared, since no process of it is
   * there to finish. The branch's lock is cleared only when no live claim works on the branch.
   */
  clearLocksOf(agentId: string): string[] {
    const cleared: string[] = [];
    for (const t of this.board.state.tasks.values()) {
      for (const wt of [t.worktree, ...t.parked]) {
        if (!wt || this.hooks.read(keyOf(wt)).agent !== agentId) continue;
        const admin = present(wt) ? worktreeGitDir(wt.path) : null;
        const locks = admin ? [join(admin, 'index.lock'), join(admin, 'HEAD.lock')] : [];
        if (!t.claim || t.claim.agentId === agentId) locks.push(join(this.repo.commonDir, 'refs', 'heads', `${wt.branch}.lock`));
        for (const lock of locks) {
          if (!fs.existsSync(lock)) continue;
          fs.rmSync(lock, { force: true });
          cleared.push(lock);
        }
      }
    }
    return cleared;
  }

  /** Files changed and not committed in a folder (untracked ones too, unless `untracked` is false). */
  private async uncommittedIn(path: string, untracked = true): Promise<number> {
    const r = await this.git(path, ['--no-optional-locks', 'status', '--porcelain', `--untracked-files=${untracked ? 'normal' : 'no'}`]);
    return r.stdout.split('\n').filter(Boolean).length;
  }

  /** Uncommitted changes in a folder; none when it is gone. */
  private uncommittedOf(wt: TaskWorktree): Promise<number> {
    return present(wt) ? this.uncommittedIn(wt.path).catch(() => 0) : Promise.resolve(0);
  }

  /** Commits the base does not have, on a commit (0 if either is gone). */
  private async aheadOf(base: string, rev: string): Promise<number> {
    const r = await this.git(this.repo.root, ['rev-list', '--count', `${base}..${rev}`], { allowFail: true });
    return Number(r.stdout.trim()) || 0;
  }

  // ---------------------------------------------------------------- the window's list

  async list(): Promise<WorktreeInfo[]> {
    const out: WorktreeInfo[] = [];
    for (const t of this.board.state.tasks.values()) {
      const folders = [...(t.worktree ? [t.worktree] : []), ...t.parked];
      for (const wt of folders) {
        const latest = wt === t.worktree;
        const [uncommitted, ahead] = await Promise.all([this.uncommittedOf(wt), latest ? this.aheadOf(wt.base, wt.branch) : Promise.resolve(0)]);
        out.push({ taskId: t.id, title: t.title, path: wt.path, branch: wt.branch, base: wt.base, held: latest && t.claim !== null, missing: !present(wt), uncommitted, ahead });
      }
    }
    return out;
  }

  /**
   * Remove a task's folders and its branch. Refused while a claim works in it, and, unless the person said
   * so (`force`), while a folder has uncommitted changes or the branch has commits its base does not have.
   */
  remove(taskId: string, force: boolean): Promise<void> {
    return this.queue.run(async () => {
      const t = this.task(taskId);
      const wt = t.worktree;
      if (!wt && !t.parked.length) throw new WorktreeError('no-worktree', `${taskId} has no worktree`);
      if (t.claim) throw new WorktreeError('held', `${t.claim.agentId} is working in ${taskId}'s worktree: release the task first.`);
      const folders = [...(wt ? [wt] : []), ...t.parked];
      if (!force) {
        const [uncommitted, ahead] = await Promise.all([
          Promise.all(folders.map((f) => this.uncommittedOf(f))).then((n) => n.reduce((a, b) => a + b, 0)),
          wt ? this.aheadOf(wt.base, wt.branch) : Promise.resolve(0),
        ]);
        const losing = [
          uncommitted ? plural(uncommitted, 'uncommitted change') : '',
          ahead && wt ? `${plural(ahead, 'commit')} that ${wt.base} does not have` : '',
        ].filter(Boolean);
        if (losing.length) throw new WorktreeError('uncommitted', `${taskId}'s worktree has ${losing.join(' and ')}: removing it loses them. Remove it anyway only if you mean to.`);
      }
      for (const f of folders) await this.removeFolder(f);
      if (wt) await this.git(this.repo.root, ['branch', '-D', wt.branch], { allowFail: true });
      await this.board.run((e) => e.forgetWorktree(taskId, 'removed', 'user'));
    });
  }

  /** Callers have checked there is nothing to lose, or the person said so: git is not asked to check again. */
  private async removeFolder(wt: TaskWorktree): Promise<void> {
    if (present(wt)) await this.git(this.repo.root, ['worktree', 'remove', '--force', '--force', wt.path], { allowFail: true });
    await this.git(this.repo.root, ['worktree', 'prune']);
    fs.rmSync(wt.path, { recursive: true, force: true });
    this.hooks.forget(keyOf(wt));
  }

  // ---------------------------------------------------------------- review

  /** The token of the claim whose work is in review: the one that said done. */
  static finalToken(t: Task): number | null {
    return t.claim?.token ?? t.lastClaim?.token ?? null;
  }

  /** What review and approval look at: the sha `done` froze; for a board from before records, the branch. */
  private async reviewed(t: Task, wt: TaskWorktree): Promise<{ sha: string; token: number | null; task: string | null; recorded: boolean } | null> {
    const rec = t.submitted ?? t.record;
    if (rec) return { sha: rec.sha, token: rec.token || null, task: t.id, recorded: true };
    const head = this.readRef(`refs/heads/${wt.branch}`);
    if (!head) return null;
    return { ...(await this.trailersOf(head)), recorded: false };
  }

  async diff(taskId: string): Promise<TaskDiff> {
    const t = this.task(taskId);
    const wt = t.worktree;
    if (!wt) throw new WorktreeError('no-worktree', `${taskId} has no worktree: it was never claimed here, or its work was merged.`);
    const root = this.repo.root;
    const head = await this.reviewed(t, wt);
    const rev = head?.sha ?? wt.branch;
    const range = `${wt.base}...${rev}`;
    const [count, names, nums, patch, uncommitted] = await Promise.all([
      this.aheadOf(wt.base, rev),
      this.git(root, ['diff', '--name-status', '-M', '-z', range]),
      this.git(root, ['diff', '--numstat', '-M', '-z', range]),
      this.git(root, ['diff', '--no-color', '--no-ext-diff', '-M', range]),
      this.uncommittedOf(wt),
    ]);
    const stats = parseNumstat(nums.stdout);
    const files = parseNameStatus(names.stdout).map((f) => ({ ...f, ...(stats.get(f.path) ?? { added: null, deleted: null }) }));
    return {
      taskId,
      branch: wt.branch,
      base: wt.base,
      head: head?.sha ?? '',
      headToken: head?.token ?? null,
      finalToken: WorktreeManager.finalToken(t),
      commits: count,
      files,
      patch: patch.stdout.length > MAX_PATCH_CHARS ? patch.stdout.slice(0, MAX_PATCH_CHARS) : patch.stdout,
      truncated: patch.stdout.length > MAX_PATCH_CHARS,
      uncommitted,
    };
  }

  private async trailersOf(rev: string): Promise<{ sha: string; token: number | null; task: string | null }> {
    const out = await gitLine(this.repo.root, [
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
    return this.queue.run(async () => {
      const t = this.task(taskId);
      const wt = t.worktree;
      if (!wt) return null;
      const root = this.repo.root;
      const refs = await this.refs([wt.base]);
      const baseSha = refs.get(wt.base)?.sha;
      if (!baseSha) throw new WorktreeError('no-base', `the base branch '${wt.base}' no longer exists: nothing was merged.`);
      const head = await this.reviewed(t, wt);
      if (!head) throw new WorktreeError('no-worktree', `the branch ${wt.branch} no longer exists: nothing was merged.`);
      const headSha = head.sha;
      const isIn = await this.git(root, ['merge-base', '--is-ancestor', headSha, baseSha], { allowFail: true });
      if (isIn.code === 0) return null;
      const final = WorktreeManager.finalToken(t);
      if (head.token === null || head.token !== final || head.task !== taskId)
        throw new WorktreeError(
          'wrong-token',
          `${wt.branch}'s last commit ${shortSha(headSha)} was ${head.token === null ? 'not written under any claim (no Forkbench-Token trailer)' : `written under token ${head.token}${head.task && head.task !== taskId ? ` of ${head.task}` : ''}`}, but the work under review was submitted under token ${final ?? 'none'}: nothing was merged. Reject it so the holder commits its work, or reassign it.`,
        );
      const rec = t.submitted ?? t.record;
      if (rec) {
        const tree = (await this.git(root, ['rev-parse', '--verify', '--quiet', `${headSha}^{tree}`], { allowFail: true })).stdout.trim();
        if (tree !== rec.tree) throw new WorktreeError('wrong-token', `${shortSha(headSha)}'s content is not what the board recorded (tree ${shortSha(tree)}, recorded ${shortSha(rec.tree)}): nothing was merged.`);
      }
      const merged = await this.git(root, ['merge-tree', '--write-tree', '--name-only', '--no-messages', baseSha, headSha], { allowFail: true });
      if (merged.code === 1) {
        const conflicted = merged.stdout.split('\n').slice(1).filter(Boolean);
        throw new WorktreeError(
          'merge-conflict',
          `${wt.branch} does not merge cleanly into ${wt.base}: conflicts in ${conflicted.join(', ') || 'some files'}. ${wt.base} is untouched. Reject with a note asking the holder to merge ${wt.base} into its branch (git merge ${wt.base}), then approve again.`,
        );
      }
      if (merged.code !== 0) throw new GitError(['merge-tree'], merged.code, merged.stdout, merged.stderr);
      const treeSha = merged.stdout.split('\n')[0] as string;
      const message = `Merge ${wt.branch}: ${title}\n\n${Trailers.task}: ${taskId}\n${Trailers.token}: ${final}\n`;
      const commit = await this.commitTree(treeSha, baseSha, headSha, message);
      await this.moveBase(wt.base, baseSha, commit);
      return commit;
    });
  }

  private async commitTree(tree: string, parent1: string, parent2: string, message: string): Promise<string> {
    // A person without user.name/user.email configured still gets a merge: the host signs it as Forkbench.
    const ident = await this.git(this.repo.root, ['var', 'GIT_COMMITTER_IDENT'], { allowFail: true });
    const env = ident.code === 0 ? undefined : { GIT_AUTHOR_NAME: 'Forkbench', GIT_AUTHOR_EMAIL: 'forkbench@localhost', GIT_COMMITTER_NAME: 'Forkbench', GIT_COMMITTER_EMAIL: 'forkbench@localhost' };
    return (await this.git(this.repo.root, ['commit-tree', tree, '-p', parent1, '-p', parent2, '-F', '-'], { input: message, env })).stdout.trim();
  }

  /** Move the base to the merge: through `git merge --ff-only` where it is checked out (its files follow,
   *  and git refuses rather than overwrite uncommitted changes), else as a compare-and-swap of the ref. */
  private async moveBase(base: string, from: string, to: string): Promise<void> {
    const list = await this.git(this.repo.root, ['worktree', 'list', '--porcelain']);
    let checkedOutAt: string | null = null;
    let path: string | null = null;
    for (const line of list.stdout.split('\n')) {
      if (line.startsWith('worktree ')) path = line.slice('worktree '.length);
      else if (line === `branch refs/heads/${base}`) checkedOutAt = path;
    }
    if (!checkedOutAt) {
      const r = await this.git(this.repo.root, ['update-ref', '-m', `forkbench: merge into ${base}`, `refs/heads/${base}`, to, from], { allowFail: true });
      if (r.code !== 0) throw new WorktreeError('base-moved', `${base} moved while merging: nothing was merged. Approve again.`);
      return;
    }
    const r = await this.git(checkedOutAt, ['merge', '--ff-only', '--quiet', to], { allowFail: true });
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
   */
  cleanupMerged(taskId: string): Promise<string[]> {
    return this.queue.run(async () => {
      const t = this.board.state.tasks.get(taskId);
      const wt = t?.worktree;
      const said: string[] = [];
      if (!t || (!wt && !t.parked.length)) return said;
      const folders = [...(wt ? [wt] : []), ...t.parked];
      const kept: TaskWorktree[] = [];
      for (const f of folders) {
        const uncommitted = await this.uncommittedOf(f);
        if (uncommitted > 0) {
          kept.push(f);
          said.push(`${taskId}'s worktree ${f.path} still has ${plural(uncommitted, 'uncommitted change that was', 'uncommitted changes that were')} not part of the merge: it is kept (parked) until you remove it.`);
          this.detach(taskId, f);
        } else await this.removeFolder(f);
      }
      if (wt) {
        const merged = t.submitted?.sha ?? t.record?.sha ?? null;
        const head = this.readRef(`refs/heads/${wt.branch}`);
        if (head) {
          const inBase = head === merged || (await this.git(this.repo.root, ['merge-base', '--is-ancestor', head, wt.base], { allowFail: true })).code === 0;
          if (!inBase) {
            await this.keepAside(taskId, head);
            said.push(`${wt.branch} had moved to ${shortSha(head)} after the work was submitted; that commit was not merged and is kept as ${strayRef(taskId, head)}.`);
          }
          const del = await this.git(this.repo.root, ['update-ref', '-d', `refs/heads/${wt.branch}`, head], { allowFail: true });
          if (del.code !== 0) {
            const now = this.readRef(`refs/heads/${wt.branch}`);
            if (now) await this.keepAside(taskId, now);
            said.push(`${wt.branch} moved while it was being removed; its head ${shortSha(now ?? '')} is kept as ${strayRef(taskId, now ?? '')}.`);
            await this.git(this.repo.root, ['update-ref', '-d', `refs/heads/${wt.branch}`], { allowFail: true });
          }
        }
      }
      const gone = folders.filter((f) => !kept.includes(f));
      if (!kept.length) await this.board.run((e) => e.forgetWorktree(taskId, 'merged', HOST));
      else for (const f of gone) await this.board.run((e) => e.forgetWorktree(taskId, 'merged', HOST, f.path));
      return said;
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
