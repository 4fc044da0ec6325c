import * as fs from 'node:fs';
import { basename, join } from 'node:path';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { HOST_ACTOR, USER, type SavedWork, type Task, type TaskWorktree } from '../../src-shared/board/model.js';
import { PARKED_PREFIX, parkedRef, shortSha } from '../../src-shared/git/taskBranch.js';
import { parkedBudgetBytesOf, parkedGraceOf } from '../../src-shared/git/parkedWork.js';
import type { IDisposable } from '../../src-shared/lifecycle/disposableStore.js';
import { SerialQueue } from '../../src-shared/lifecycle/serialQueue.js';
import type { Clock } from '../base/clock.js';
import { realTimers, type Timers } from '../base/timers.js';
import type { ClaimFolders } from './claimFolders.js';
import type { CleanedFolders } from './cleanedFolders.js';
import type { DiskUseCache } from './diskUse.js';
import type { FenceHooks } from './fenceHooks.js';
import { worktreeGitDir } from './repoProbe.js';
import { keyOf, present, WorktreeError, type TaskRepo } from './taskRepo.js';

/** Where a folder's clean-up is, in the order it goes: a kill -9 between any two leaves the folder or the
 *  saved ref (and the board's record of it), never neither. */
export type ParkedStep =
  /** About to save the folder's uncommitted work (git add into a temporary index, write-tree, commit-tree). */
  | 'saving'
  /** The saved commit is under refs/forkbench/parked/…; the board has not recorded it yet. */
  | 'ref-written'
  /** The board recorded the saved work: from here the folder may go. */
  | 'on-board'
  /** The folder was moved into the trash (one rename); the board still names it. */
  | 'moved'
  /** The board no longer names the folder; the trash is emptied next. */
  | 'forgotten';

/** Seams for tests: a clock of their own for the grace, and a look at each step (a test stops the process
 *  there with a kill -9, to prove the order loses nothing). */
export interface ParkedSeams {
  readonly clock?: Clock;
  /** When the next sweep runs; its own, not the git remote's (a test of pushes counts that one's timers). */
  readonly timers?: Timers;
  readonly step?: (step: ParkedStep, f: { taskId: string; path: string }) => void | Promise<void>;
}

/** One sweep's outcome: folders saved (their refs), removed, and kept with the reason. */
export interface SweepOutcome {
  saved: string[];
  removed: string[];
  kept: Array<{ path: string; why: string }>;
}

/** A folder the clean-up may take: parked, or the latest of a task nobody holds and nobody reviews. */
interface Candidate {
  taskId: string;
  wt: TaskWorktree;
  /** The task's latest folder (not parked): the board keeps its record, only the folder goes. */
  latest: boolean;
  since: number;
}

export const ParkedConstants = {
  /** A sweep asked for by an event waits this long, so a burst of grants and claim ends makes one sweep. */
  coalesceMs: 200,
  /** A folder kept because a git holds its index.lock is looked at again this long after: a git at work there
   *  ends in well under a second, and one killed inside leaves its lock until the roster clears it once its
   *  agent is gone (a liveness pass, seconds). No board event need come meanwhile, so the sweep asks itself. */
  lockRetryMs: 5_000,
} as const;

/** Why a folder is kept while a git holds its index (the sweep retries these by itself). */
const INDEX_LOCKED = 'a git process holds its index.lock';

/** What a parked clean-up measures and marks with, shared with the Worktrees panel's list (WorktreeManager). */
export interface ParkedLook {
  /** Disk use, measured off the event loop and cached (the budget's figures and the panel's are one). */
  readonly disk: DiskUseCache;
  /** The folders this clean-up removed, so an absent one the board still names reads as cleaned, not missing. */
  readonly cleaned: CleanedFolders;
}

/**
 * Parked folders bounded, nothing lost (issue 47 item 5). Every lapse and reassign parks the previous claim's
 * folder; once its grace (a Thread setting) is out, or sooner while the parked folders exceed the disk budget
 * (oldest first), the folder goes:
 *   - uncommitted or untracked work (not ignored) is first saved as a commit, files and index, made with a
 *     temporary index (the folder's own is never written), under refs/forkbench/parked/<board>/T-n/<token>,
 *     and recorded on the board with its author;
 *   - a head no ref has (commits the board never recorded) is kept aside under refs/forkbench/stray/ first;
 *   - the folder is then moved into a trash folder in one rename, the board forgets it, and the trash is
 *     emptied. The task's branch is never touched here: only a merge (taskReview) or a person removes it.
 * A kill -9 anywhere leaves the folder whole, or its work saved and recorded; the next start empties the
 * trash and finishes or redoes the rest (`start`). The latest folder of a task nobody holds goes the same
 * way, the board keeping its record (the next claim makes a fresh folder at the board's record, as it would).
 */
export class ParkedWork implements IDisposable {
  /** When each folder was first seen parked (board time): restarts count the grace again, never less. */
  private readonly since = new Map<string, number>();
  private timer: unknown = null;
  private readonly sweeps = new SerialQueue();
  private due = Infinity;
  private disposed = false;
  /** A folder moved to the trash by a clean-up killed before `git worktree prune` leaves git's note of it. */
  private pruned = false;
  private readonly clock: Clock;
  /** Where folders go in one rename before they are deleted: under the Thread's data folder, beside the
   *  worktrees (same filesystem, so the rename is atomic), outside the folder every board's claims are in. */
  readonly trash: string;

  constructor(
    private readonly r: TaskRepo,
    private readonly folders: ClaimFolders,
    private readonly hooks: FenceHooks,
    private readonly look: ParkedLook,
    clock: Clock,
    private readonly timers: Timers = realTimers,
    private readonly seams: ParkedSeams = {},
    private readonly warn: (message: string) => void = () => undefined,
  ) {
    this.clock = seams.clock ?? clock;
    this.trash = join(r.names.threadDir, 'parked-trash', r.names.key);
  }

  /**
   * At the Thread's open: the trash a killed clean-up left is emptied (everything in it was saved or clean
   * before it was moved there), then a sweep finishes what was begun and schedules the rest. Returns what
   * was emptied.
   */
  start(): string[] {
    const emptied: string[] = [];
    for (const name of safeReaddir(this.trash)) {
      fs.rmSync(join(this.trash, name), { recursive: true, force: true });
      emptied.push(join(this.trash, name));
    }
    this.soon(0);
    return emptied;
  }

  /** The board's events that park a folder, end a claim or change the settings bring the next sweep forward. */
  follow(e: BoardEvent): void {
    if (e.kind === 'worktree-set' || e.kind === 'claim-ended' || e.kind === 'reassign' || e.kind === 'settings-set' || e.kind === 'returned' || e.kind === 'unqueued') this.soon(ParkedConstants.coalesceMs);
  }

  /**
   * No sweep starts from here on, and the one under way stops after the folder it is cleaning: the promise
   * settles once it has, so whoever closes the Thread (ClaimWorktrees.close) awaits it before the board
   * closes, and a disposed host is never still renaming or deleting.
   */
  dispose(): Promise<void> {
    this.disposed = true;
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
    return this.sweeps.idle();
  }

  private soon(ms: number): void {
    if (this.disposed) return;
    const at = this.clock.now() + ms;
    if (this.timer !== null && this.due <= at) return;
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.due = at;
    this.timer = this.timers.setTimeout(() => {
      this.timer = null;
      this.due = Infinity;
      void this.sweep().catch((err: Error) => this.warn(`forkbench: parked folders could not be cleaned up: ${err.message}`));
    }, ms);
  }

  /** The folders the clean-up may take now, as the board has them, with when each was first seen. */
  private candidates(): Candidate[] {
    const now = this.clock.now();
    const out: Candidate[] = [];
    for (const t of this.r.board.state.tasks.values()) {
      for (const wt of t.parked) if (this.folders.ours(wt)) out.push({ taskId: t.id, wt, latest: false, since: 0 });
      if (t.worktree && idleLatest(t) && this.folders.ours(t.worktree) && present(t.worktree)) out.push({ taskId: t.id, wt: t.worktree, latest: true, since: 0 });
    }
    const seen = new Set(out.map((c) => c.wt.path));
    for (const path of this.since.keys()) if (!seen.has(path)) this.since.delete(path);
    for (const c of out) {
      if (!this.since.has(c.wt.path)) this.since.set(c.wt.path, now);
      c.since = this.since.get(c.wt.path) as number;
    }
    return out;
  }

  /**
   * One pass: every folder whose clean-up was begun (its save is on the board, or it is
   * gone but still named) is finished; every one past its grace, and the oldest while over the budget, is
   * saved if needed and removed. The next pass is scheduled for the next grace to run out.
   */
  sweep(): Promise<SweepOutcome> {
    // One sweep at a time; inside one, each folder takes the git queue for its own clean-up only, so a grant
    // (which an agent waits on) waits for one folder at most, never for a whole sweep.
    return this.sweeps.run(async () => {
      const out: SweepOutcome = { saved: [], removed: [], kept: [] };
      if (this.disposed) return out;
      if (!this.pruned) await this.r.queue.run(() => this.r.git(this.r.repo.root, ['worktree', 'prune']));
      this.pruned = true;
      const settings = this.r.board.state.settings;
      const grace = parkedGraceOf(settings);
      const budget = parkedBudgetBytesOf(settings);
      const now = this.clock.now();
      const all = this.candidates();
      const due = new Set<Candidate>();
      for (const c of all) {
        const begun = savedFor(this.r.board.state.tasks.get(c.taskId), c.wt.path) || !present(c.wt);
        if (begun || now - c.since >= grace) due.add(c);
      }
      if (budget !== null) {
        // Oldest first (first seen parked, then the older grant), until what stays fits the budget.
        const staying = all.filter((c) => !due.has(c) && present(c.wt)).sort((a, b) => a.since - b.since || (a.wt.token ?? 0) - (b.wt.token ?? 0));
        const sizes = new Map<Candidate, number>();
        for (const c of staying) sizes.set(c, await this.look.disk.of(c.wt.path));
        let total = [...sizes.values()].reduce((n, b) => n + b, 0);
        for (const c of staying) {
          if (total <= budget) break;
          total -= sizes.get(c) as number;
          due.add(c);
        }
      }
      let locked = false;
      for (const c of due) {
        if (this.disposed) break;
        try {
          const done = await this.r.queue.run(() => this.clean(c));
          if (done.saved) out.saved.push(done.saved);
          if (done.removed) out.removed.push(c.wt.path);
          if (done.kept) out.kept.push({ path: c.wt.path, why: done.kept });
          if (done.kept === INDEX_LOCKED) locked = true;
        } catch (err) {
          out.kept.push({ path: c.wt.path, why: (err as Error).message });
          this.warn(`forkbench: the parked folder ${c.wt.path} of ${c.taskId} is kept: ${(err as Error).message}`);
        }
      }
      const next = all.filter((c) => !due.has(c)).reduce((m, c) => Math.min(m, c.since + grace), Infinity);
      if (next !== Infinity) this.soon(Math.max(0, next - this.clock.now()));
      // A folder kept for a lock is due already: nothing else would bring its clean-up back.
      if (locked) this.soon(ParkedConstants.lockRetryMs);
      this.look.cleaned.keepOnly(namedFolders(this.r.board.state.tasks.values()));
      return out;
    });
  }

  /** One folder's clean-up, in the order that loses nothing: save and record, then move, forget, delete. */
  private async clean(c: Candidate): Promise<{ saved?: string; removed?: boolean; kept?: string }> {
    const t = this.r.board.state.tasks.get(c.taskId);
    // The board moved on since the candidates were read: a grant took the task, or a person removed the folder.
    if (!t) return {};
    if (c.latest ? t.worktree?.path !== c.wt.path || !idleLatest(t) || !present(c.wt) : !t.parked.some((p) => p.path === c.wt.path)) return {};
    const f = { taskId: c.taskId, path: c.wt.path };
    let saved: string | undefined;
    if (present(c.wt)) {
      const admin = worktreeGitDir(c.wt.path);
      // A git still at work there (or one killed inside it, whose lock the roster clears once its agent is
      // gone): its index is half written. The next sweep looks again.
      if (admin && fs.existsSync(join(admin, 'index.lock'))) return { kept: INDEX_LOCKED };
      if (!savedFor(t, c.wt.path)) {
        const head = await this.headOf(c.wt.path);
        const changed = await this.changedFiles(c.wt.path);
        if (changed > 0) {
          await this.seams.step?.('saving', f);
          const author = this.hooks.read(keyOf(c.wt)).agent || USER;
          const ref = parkedRef(c.wt.branch, c.wt.token ?? 0);
          const sha = await this.save(c, head, author, ref);
          await this.r.git(this.r.repo.root, ['update-ref', '-m', `forkbench: ${c.taskId}'s parked folder saved`, ref, sha]);
          await this.seams.step?.('ref-written', f);
          const work: SavedWork = { ref, sha, path: c.wt.path, token: c.wt.token ?? 0, author, files: changed, at: this.clock.wall() };
          const r = await this.r.board.run((e) => e.recordSaved(c.taskId, work, HOST_ACTOR));
          if (!r.ok) return { kept: `the board did not record its saved work: ${r.error.message}` };
          await this.seams.step?.('on-board', f);
          saved = ref;
        } else if (head && !(await this.onSomeRef(head))) {
          // Commits the board never recorded, on no ref: kept aside as a grant keeps a stray head.
          await this.r.keepAside(c.taskId, head);
        }
      }
      await this.folders.tellLeaving({ taskId: c.taskId, path: c.wt.path, why: 'removed' });
      fs.mkdirSync(this.trash, { recursive: true, mode: 0o700 });
      const to = join(this.trash, basename(c.wt.path));
      fs.rmSync(to, { recursive: true, force: true });
      // Marked first: once the folder is gone, the panel and the next grant say it was cleaned, not lost.
      this.look.cleaned.mark(c.wt.path);
      fs.renameSync(c.wt.path, to);
      // A stale agent still alive may have written between the check above and the move (telling it to leave
      // takes a moment): what the moved folder holds is compared with what was saved (or, saved nothing, with
      // its HEAD) before anything is deleted, and a folder that differs goes back where it was, kept.
      const expected = await this.treeOfSaved(this.r.board.state.tasks.get(c.taskId), c.wt.path, await this.headOf(to));
      if ((await this.filesTree(to)) !== expected) {
        fs.renameSync(to, c.wt.path);
        this.look.cleaned.unmark(c.wt.path);
        return { saved, kept: 'it was written to while it was being cleaned up; it is kept as it is' };
      }
      await this.seams.step?.('moved', f);
      await this.r.git(this.r.repo.root, ['worktree', 'prune']);
    }
    if (!c.latest) {
      const r = await this.r.board.run((e) => e.forgetWorktree(c.taskId, 'removed', HOST_ACTOR, c.wt.path));
      if (!r.ok) this.warn(`forkbench: ${c.taskId}'s parked folder ${c.wt.path} is gone, but the board still names it: ${r.error.message}`);
      this.hooks.forget(keyOf(c.wt));
    }
    await this.seams.step?.('forgotten', f);
    fs.rmSync(join(this.trash, basename(c.wt.path)), { recursive: true, force: true });
    this.since.delete(c.wt.path);
    this.look.disk.forget(c.wt.path);
    return { saved, removed: true };
  }

  /**
   * A saved work put back into a new folder of its own, for a person (`restored/<board>/T-n-<token>` in the
   * Thread's data folder, never a claim's): checked out at the commit it was saved on, its files as saved and
   * its index as saved (files the index did not have show as untracked, as they were). Returns the folder.
   */
  restore(taskId: string, ref: string): Promise<string> {
    return this.r.queue.run(async () => {
      const w = this.savedWork(taskId, ref, 'restored');
      const base = join(this.r.names.threadDir, 'restored', this.r.names.key, `${taskId}-${w.token}`);
      let path = base;
      // A folder restored before is the person's now, whatever they did with it: a new one beside it.
      for (let n = 2; fs.existsSync(path); n++) path = `${base}-${n}`;
      const parents = (await this.r.git(this.r.repo.root, ['rev-list', '--parents', '-n', '1', w.sha])).stdout.trim().split(' ').slice(1);
      const [head, index] = parents.length === 2 ? parents : [null, parents[0] ?? null];
      await this.r.git(this.r.repo.root, ['worktree', 'add', '--quiet', '--detach', path, head ?? w.sha]);
      await this.r.git(path, ['read-tree', '-u', '--reset', w.sha]);
      if (index) await this.r.git(path, ['read-tree', index]);
      return path;
    });
  }

  /** A saved work deleted, as a person asked (the window asks first): the board forgets it, then its ref goes.
   *  A kill between the two leaves the ref, never a board that names a ref that is gone. */
  delete(taskId: string, ref: string, by: string): Promise<void> {
    return this.r.queue.run(async () => {
      const w = this.savedWork(taskId, ref, 'deleted');
      const r = await this.r.board.run((e) => e.deleteSaved(taskId, ref, by));
      if (!r.ok) throw new WorktreeError('no-worktree', r.error.message);
      await this.r.git(this.r.repo.root, ['update-ref', '-d', ref, w.sha]);
    });
  }

  /** The saved work the board records under `ref`, still at its commit; otherwise a refusal that did nothing. */
  private savedWork(taskId: string, ref: string, doing: string): SavedWork {
    // Only ever a parked ref: the board's record is input (another host wrote it on a shared board).
    const w = ref.startsWith(PARKED_PREFIX) ? this.r.board.state.tasks.get(taskId)?.saved?.find((x) => x.ref === ref) : undefined;
    if (!w) throw new WorktreeError('no-worktree', `${taskId} has no saved work ${ref}: nothing was ${doing}.`);
    const now = this.r.readRef(ref);
    if (now !== w.sha) throw new WorktreeError('no-worktree', `${ref} is ${now ? `at ${shortSha(now)}, not the saved ${shortSha(w.sha)}` : 'gone from the repository'}: nothing was ${doing}.`);
    return w;
  }

  /** The tree of what the board saved of the folder at `path`, or of `head` when it saved nothing (the
   *  folder was clean), or the empty tree. */
  private async treeOfSaved(t: Task | undefined, path: string, head: string | null): Promise<string> {
    const sha = t?.saved?.find((w) => w.path === path)?.sha ?? head;
    const args = sha ? ['rev-parse', `${sha}^{tree}`] : ['hash-object', '-t', 'tree', '/dev/null'];
    return (await this.r.git(this.r.repo.root, args)).stdout.trim();
  }

  /** The tree of the folder's files as they are (untracked included, ignored not), made in an index of its
   *  own so the folder's index is never written. */
  private async filesTree(path: string): Promise<string> {
    const index = join(this.trash, `.check-${basename(path)}`);
    const git = (args: string[]) => this.r.git(path, args, { env: { GIT_INDEX_FILE: index } });
    try {
      fs.rmSync(index, { force: true });
      const head = await this.headOf(path);
      await git(head ? ['read-tree', head] : ['read-tree', '--empty']);
      await git(['add', '--all', '--', '.']);
      return (await git(['write-tree'])).stdout.trim();
    } finally {
      fs.rmSync(index, { force: true });
    }
  }

  /** The folder's HEAD commit, or null (a branch HEAD whose branch is gone). */
  private async headOf(path: string): Promise<string | null> {
    const r = await this.r.git(path, ['rev-parse', '--verify', '--quiet', 'HEAD'], { allowFail: true });
    return r.code === 0 ? r.stdout.trim() || null : null;
  }

  /** Files changed, added, deleted or untracked (not ignored) against HEAD, each file counted; the index is
   *  not refreshed (`--no-optional-locks`): the folder's own index is never written here. */
  private async changedFiles(path: string): Promise<number> {
    const r = await this.r.git(path, ['--no-optional-locks', 'status', '--porcelain', '--untracked-files=all']);
    return r.stdout.split('\n').filter(Boolean).length;
  }

  private async onSomeRef(sha: string): Promise<boolean> {
    const r = await this.r.git(this.r.repo.root, ['for-each-ref', '--count=1', '--contains', sha, '--format=%(refname)', 'refs/'], { allowFail: true });
    return r.code === 0 && r.stdout.trim() !== '';
  }

  /**
   * The folder's work as one commit, `git stash`'s shape: its tree is the folder's files (untracked ones too,
   * ignored ones not), its first parent the folder's HEAD and its second a commit of the folder's index. Made
   * in a temporary index, a copy of the folder's: the folder, its index and its HEAD are not written.
   */
  private async save(c: Candidate, head: string | null, author: string, ref: string): Promise<string> {
    fs.mkdirSync(this.trash, { recursive: true, mode: 0o700 });
    const index = join(this.trash, `.index-${basename(c.wt.path)}`);
    const admin = worktreeGitDir(c.wt.path);
    const env = {
      GIT_INDEX_FILE: index,
      GIT_AUTHOR_NAME: author,
      GIT_AUTHOR_EMAIL: `${author}@forkbench.invalid`,
      GIT_COMMITTER_NAME: 'Forkbench',
      GIT_COMMITTER_EMAIL: 'forkbench@forkbench.invalid',
    };
    const git = (args: string[], allowFail = false) => this.r.git(c.wt.path, args, { env, allowFail });
    try {
      fs.rmSync(index, { force: true });
      if (admin && fs.existsSync(join(admin, 'index'))) fs.copyFileSync(join(admin, 'index'), index);
      else if (head) await git(['read-tree', head]);
      let indexTree = await git(['write-tree'], true);
      if (indexTree.code !== 0) {
        // An index mid-merge (unmerged entries) has no tree: the index commit is HEAD's tree then, and the
        // files (conflict markers and all) are what is saved.
        await git(head ? ['read-tree', head] : ['read-tree', '--empty']);
        indexTree = await git(['write-tree']);
      }
      await git(['add', '--all', '--', '.']);
      const filesTree = (await git(['write-tree'])).stdout.trim();
      const parents = head ? ['-p', head] : [];
      const what = `${c.taskId}'s parked folder ${c.wt.path} (claim ${c.wt.token ?? '(earlier)'})`;
      const i = (await git(['commit-tree', indexTree.stdout.trim(), ...parents, '-m', `index of ${what}`])).stdout.trim();
      const w = (await git(['commit-tree', filesTree, ...parents, '-p', i, '-m', `Work left uncommitted in ${what}, saved as ${ref}${head ? ` on ${shortSha(head)}` : ''}`])).stdout.trim();
      if (!/^[0-9a-f]{40,64}$/.test(w)) throw new WorktreeError('git', `git made no commit of ${c.wt.path}'s work`);
      return w;
    } finally {
      fs.rmSync(index, { force: true });
    }
  }
}

/** A task's latest folder is idle when no claim works in it and no review or merge queue may still need it. */
function idleLatest(t: Task): boolean {
  return !t.claim && t.state !== 'review' && !t.queued;
}

/** Every folder the board names, latest and parked: the ones a clean-up's mark may still speak for. */
function namedFolders(tasks: Iterable<Task>): Set<string> {
  const named = new Set<string>();
  for (const t of tasks) for (const f of [t.worktree, ...t.parked]) if (f) named.add(f.path);
  return named;
}

function savedFor(t: Task | undefined, path: string): boolean {
  return !!t?.saved?.some((w) => w.path === path);
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
