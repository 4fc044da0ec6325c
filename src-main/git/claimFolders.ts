import * as fs from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { BranchRecord, TaskWorktree } from '../../src-shared/board/model.js';
import type { RejectionCode } from '../../src-shared/board/result.js';
import { shortSha, strayRef } from '../../src-shared/git/taskBranch.js';
import type { ClaimWorktree } from '../../src-shared/protocol/agentMethods.js';
import type { OtherBoardFolder, WorktreeInfo } from '../../src-shared/protocol/windowApi.js';
import { plural } from '../../src-shared/text/plural.js';
import type { BranchRecords } from './branchRecords.js';
import type { FenceHooks, FolderClaim } from './fenceHooks.js';
import { currentBranch, worktreeGitDir } from './repoProbe.js';
import { keyOf, present, TaskRepo, WorktreeError } from './taskRepo.js';
import { HOST_ACTOR } from '../../src-shared/board/model.js';
import { toDisposable, type IDisposable } from '../../src-shared/lifecycle/disposableStore.js';
import { realTimers, type Timers } from '../base/timers.js';
import type { RecordArrival } from './recordArrival.js';
import { claimFoldersUnder, hooksKeyOf, type FoundFolder } from './boardNames.js';
import type { ParkedLook } from './parkedWork.js';

export const FolderRemovalConstants = {
  /** How long a folder's removal waits for whoever stands in it to be told where to go. Showing a notice in
   *  a shell's pane is one /proc scan and a pty host round trip (a few ms; tens under load); an agent CLI is
   *  typed to only once its pane is quiet, which can take seconds: the removal (a person's approval) does
   *  not wait for that, only long enough for the shells. */
  tellMaxMs: 1_000,
} as const;

/** A task's folder about to be removed, while it is still there: `why` as the board's worktree-removed says. */
export interface FolderLeaving {
  taskId: string;
  path: string;
  why: 'merged' | 'removed';
  /** A folder another board of this Thread folder made (cleared from the Worktrees panel): `taskId` is that
   *  board's id, not this board's task of the same id. */
  otherBoard?: boolean;
}

/**
 * The folders claims work in. Each grant gets a fresh folder of its own (the token in its name) on the
 * task's branch `forkbench/<board>/T-n`, at the commit the board recorded last, under the Thread's data folder
 * (`worktrees/<board>/<agent>/T-n-k`, boardNames.ts), never inside the user's folder. The previous grant's
 * folder is detached from the branch and fenced: its hooks refuse everything, and nothing a stale process does
 * there reaches the new holder.
 */
export class ClaimFolders {
  constructor(
    private readonly r: TaskRepo,
    private readonly hooks: FenceHooks,
    private readonly records: BranchRecords,
    private readonly timers: Timers = realTimers,
    /** Brings a record made on another host into this clone (from the Thread's remote) before a grant. */
    private readonly arrival: RecordArrival | null,
    /** The folders' disk use and what the parked clean-up removed (ParkedWork writes it; read here). */
    private readonly look: ParkedLook,
  ) {}

  /** Where this board's folders go, in the Thread's data folder (never the person's): one folder per agent. */
  get dir(): string {
    return this.r.names.folders;
  }

  /** Who is told before a folder goes (the host, which tells the panes standing in it). */
  private leaving: ((f: FolderLeaving) => Promise<void>) | null = null;

  /** `tell` is awaited before each folder is removed, for FolderRemovalConstants.tellMaxMs at most. */
  beforeRemoval(tell: (f: FolderLeaving) => Promise<void>): IDisposable {
    this.leaving = tell;
    return toDisposable(() => {
      if (this.leaving === tell) this.leaving = null;
    });
  }

  /**
   * Give the claim (agent, token) of a task its own folder: a fresh worktree on the task's branch at the
   * board's record (the base's head on a first claim). The previous grant's folder, if any, is detached
   * from the branch and fenced first; a branch head that is not the record is moved aside, never deleted,
   * and never blocks the claim. The claim file the hooks read is written before the agent is told, so its
   * first commit already runs under its token.
   */
  async grant(taskId: string, agentId: string, token: number): Promise<ClaimWorktree> {
    // Outside the git queue: a fetch, or the wait for another host's push, must not hold up other tasks' git.
    const was = this.r.board.state.tasks.get(taskId);
    if (!(was?.worktree?.token === token && present(was.worktree))) await this.arrival?.arrive(taskId, token);
    // A first claim on a board with a remote starts from the remote's base (work approved on any host is
    // there, not in this clone's own branch), fetched now, outside the queue for the same reason.
    const first = was && !was.record && !was.worktree ? await (async () => this.arrival?.baseStart(this.r.baseBranch()))().catch(() => null) : null;
    return this.r.queue.run(async () => {
      const { r } = this;
      const t = r.task(taskId);
      const notes: string[] = [];
      if (t.worktree && t.worktree.token === token && present(t.worktree)) return this.handOut(t.worktree, notes);
      const base = t.worktree?.base ?? r.baseBranch();
      const branch = r.branchOf(taskId);
      // Under this board's folder of the agent's own: its sandbox binds that one folder writable, for its present
      // and future claims (sandbox/agentReach.ts). Another board's folders (task ids restart at T-1 on each) are
      // under that board's key, and never in the way.
      const path = r.names.folderOf(agentId, taskId, token);
      if (fs.existsSync(path) && fs.readdirSync(path).length > 0)
        throw new WorktreeError('path-taken', `${path} already exists and is not empty: move it away, then unblock ${taskId}. Nothing was changed.`);
      // Only this host's folders: on a board several hosts share, the others' are theirs (a grant here must
      // never write this clone's branch head into another host's live worktree).
      for (const old of [t.worktree, ...t.parked]) if (old && this.ours(old)) this.detach(taskId, old);
      await r.git(r.repo.root, ['worktree', 'prune']);
      const refs = await r.refs([branch, base]);
      const baseRef = refs.get(base);
      let start: { sha: string; tree: string };
      let record: BranchRecord | undefined;
      if (t.record) start = { sha: t.record.sha, tree: t.record.tree };
      else if (t.worktree && refs.get(branch)) {
        // A board written before records were kept: the branch as it stands is taken as the record once.
        start = refs.get(branch) as { sha: string; tree: string };
        record = { ...start, token: 0, by: HOST_ACTOR };
        notes.push(`The board had no record of ${branch} yet; it records the branch as it is, at ${shortSha(start.sha)}.`);
      } else if (first?.head) {
        start = first.head;
        record = { ...start, token: 0, by: HOST_ACTOR };
        if (first.why)
          notes.push(`The remote's ${base} could not be fetched (${first.why}): ${taskId} starts from ${base} as this clone last fetched it, at ${shortSha(start.sha)}; work approved since on other hosts is not in it.`);
      } else {
        if (!baseRef) throw new WorktreeError('no-base', `the base branch '${base}' does not exist in ${r.repo.root}: set an existing branch in the Thread's settings.`);
        start = baseRef;
        record = { ...start, token: 0, by: HOST_ACTOR };
        if (first?.why)
          notes.push(`The remote's ${base} could not be fetched (${first.why}): ${taskId} starts from this clone's ${base} at ${shortSha(start.sha)}, which may lack work approved on other hosts.`);
      }
      const head = refs.get(branch);
      if (head && head.sha !== start.sha) {
        const why = t.worktree || t.record ? 'which the board never recorded' : 'and Forkbench did not make it for this Thread';
        await r.keepAside(taskId, head.sha);
        notes.push(`${branch} was at ${shortSha(head.sha)}, ${why}: it is kept as ${strayRef(branch, head.sha)} (nothing deleted), and the branch starts at ${shortSha(start.sha)}.`);
      }
      if (head?.sha !== start.sha) await this.records.moveBranch(taskId, branch, start.sha, head?.sha ?? '');
      fs.mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      await r.enableWorktreeConfig();
      const [, dirty] = await Promise.all([
        // Detached, then pointed at the branch by its HEAD file: \`worktree add PATH BRANCH\` takes the branch's
        // lock, which a stalled git of the previous holder may still hold; the folder must not wait on it.
        r.addWorktree(path, start.sha),
        !t.worktree && base === currentBranch(r.repo.gitDir) ? r.uncommittedIn(r.folder, false) : Promise.resolve(0),
      ]);
      const admin = worktreeGitDir(path);
      if (!admin) throw new WorktreeError('git', `${path} is not a git worktree`);
      fs.writeFileSync(join(admin, 'HEAD'), `ref: refs/heads/${branch}\n`);
      const wt: TaskWorktree = { path, branch, base, baseCommit: t.worktree?.baseCommit ?? first?.head?.sha ?? baseRef?.sha ?? start.sha, token };
      const prev = t.worktree;
      const cleaned = prev && !present(prev) ? t.saved?.find((w) => w.path === prev.path) : undefined;
      if (prev && cleaned)
        notes.push(`The previous claim's folder ${prev.path} was saved as ${cleaned.ref} and removed after its grace (parked work, listed under Worktrees); this claim works in a fresh folder at the board's record ${shortSha(start.sha)}.`);
      else if (prev && !present(prev) && this.look.cleaned.has(prev.path))
        notes.push(`The previous claim's folder ${prev.path} held nothing uncommitted and was removed after its grace; this claim works in a fresh folder at the board's record ${shortSha(start.sha)}.`);
      else if (prev && !present(prev))
        notes.push(`The worktree ${prev.path} had been deleted by hand; it was made again from ${branch} at ${shortSha(start.sha)}: every recorded commit is there, changes never committed are not.`);
      else if (prev) notes.push(`This claim works in a fresh folder at the board's record ${shortSha(start.sha)}; the previous claim's folder ${prev.path} is parked and fenced, with anything left uncommitted there.`);
      if (dirty > 0)
        notes.push(`${r.folder} has ${plural(dirty, 'uncommitted change')} on ${base}: the worktree starts from ${base}'s last commit ${shortSha(start.sha)} without them.`);
      this.copyFiles(path, notes);
      const hookDir = this.hooks.install(keyOf(wt), { task: taskId, branch, base });
      const theirs = this.hooks.repoHooksOf(keyOf(wt));
      if (theirs.length > 0)
        notes.push(`This folder runs the repository's own hooks as they were at this grant, copied for it: ${theirs.join(', ')}. A hook written into the repository's hooks folder later runs in no claim's folder before that claim's next grant.`);
      this.pointHooks(path, hookDir);
      this.hooks.bind(keyOf(wt), { task: taskId, branch, base, agentId, token }, start.sha);
      await r.board.run((e) => e.recordWorktree(taskId, wt, HOST_ACTOR, record));
      // The claim may have ended while its folder was being made (a kill, a reassign): the folder then
      // answers to nobody from the start, as `fence` would have made it.
      const now = r.board.state.tasks.get(taskId);
      if (now?.claim?.token !== token) {
        const ended = now?.lastClaim?.token === token ? now.lastClaim.reason : 'ended';
        this.hooks.fence(keyOf(wt), { task: taskId, branch, base, agentId, token }, ended === 'lapsed' ? 'lapsed' : 'stale-token', `your claim on ${taskId} ended (${ended})`);
      }
      return this.handOut(wt, notes);
    });
  }

  /**
   * At the Thread's start, before any grant: folders under this board's worktrees folder that no task on the
   * board names are what a grant left when its host was killed inside it (a `git worktree add` cut short
   * leaves HEAD.lock or index.lock in the folder's admin folder, and every later git there fails on it). The
   * board never handed them to an agent, so no git of an agent's runs there: their locks are removed, and one
   * killed before its checkout is forgotten by git. The folders themselves stay (they may hold something a
   * person wants); returns the locks and admin folders removed.
   */
  clearInterrupted(): string[] {
    const named = new Set<string>();
    for (const t of this.r.board.state.tasks.values()) for (const f of [t.worktree, ...t.parked]) if (f) named.add(resolve(f.path));
    const cleared: string[] = [];
    // Read from git's side (the admin folders), not the folders': a kill before the folder's .git file was
    // written leaves an admin folder that no folder points to.
    const adminRoot = join(this.r.repo.commonDir, 'worktrees');
    let admins: string[];
    try {
      admins = fs.readdirSync(adminRoot).map((n) => join(adminRoot, n));
    } catch {
      return [];
    }
    for (const admin of admins) {
      const path = folderOfAdmin(admin);
      // Forkbench's own folders only: every board's grants in the Thread's data folder, and the merge queue's
      // checkouts beside them.
      if (!path || named.has(path) || relative(this.r.names.threadDir, path).startsWith('..')) continue;
      if (/^0{40}$/.test(readOr(join(admin, 'HEAD')).trim())) {
        // Killed before the checkout: HEAD points at nothing, and git treats that as a broken ref in every
        // fetch (`fatal: bad object worktrees/T-6-17/HEAD`), which stopped this host's pushes for good in
        // the two-host chaos run. Nothing was checked out for anyone: git forgets the folder.
        fs.rmSync(admin, { recursive: true, force: true });
        cleared.push(admin);
        continue;
      }
      // Locks only in this board's folders: another board's are that board's to judge when it is open.
      if (relative(this.dir, path).startsWith('..')) continue;
      for (const lock of [join(admin, 'HEAD.lock'), join(admin, 'index.lock')]) {
        if (!fs.existsSync(lock)) continue;
        fs.rmSync(lock, { force: true });
        cleared.push(lock);
      }
    }
    return cleared;
  }

  private handOut(wt: TaskWorktree, notes: string[]): ClaimWorktree {
    return { path: wt.path, branch: wt.branch, base: wt.base, workdir: this.r.workdirOf(wt.path), notes };
  }

  /** The board recorded a move of the task's branch: the current folder's next move starts there. */
  recorded(taskId: string, sha: string): void {
    const wt = this.r.board.state.tasks.get(taskId)?.worktree;
    if (wt) this.hooks.setRecord(keyOf(wt), sha);
  }

  /** Done froze the task's work, or a rejection gave it back. */
  frozen(taskId: string, frozen: boolean): void {
    const wt = this.r.board.state.tasks.get(taskId)?.worktree;
    if (wt) this.hooks.freeze(keyOf(wt), frozen);
  }

  /** A claim ended: its folder answers to nobody now, and says why in the board's words. */
  fence(taskId: string, token: number, code: RejectionCode, message: string): void {
    const wt = this.r.board.state.tasks.get(taskId)?.worktree;
    if (!wt || (wt.token !== undefined && wt.token !== token)) return;
    this.hooks.fence(keyOf(wt), this.claimOf(taskId, wt), code, message);
  }

  private claimOf(taskId: string, wt: TaskWorktree): FolderClaim {
    const was = this.hooks.read(keyOf(wt));
    return { task: taskId, branch: wt.branch, base: wt.base, agentId: was.agent ?? '', token: Number(was.token) || 0 };
  }

  /** Whether the folder is this clone's: always on a board of one machine (no remote); on a shared one, a
   *  folder in this host's folder for worktrees (any board's), or a worktree of this clone's repository. */
  ours(f: TaskWorktree): boolean {
    if (!this.r.board.state.settings.remote) return true;
    if (inside(this.r.names.worktreesRoot, f.path)) return true;
    const admin = worktreeGitDir(f.path);
    return admin !== null && inside(this.r.repo.commonDir, admin);
  }

  /** Take an earlier grant's folder off the branch (its HEAD now names the commit, not the branch), so the
   *  next folder can check the branch out, and fence it. Written into its HEAD file: no git process runs in a
   *  folder a stale agent may still be using. */
  detach(taskId: string, wt: TaskWorktree): void {
    // Fenced first: between the two, a commit there would otherwise land on a detached HEAD unasked.
    const c = this.claimOf(taskId, wt);
    if (!this.hooks.read(keyOf(wt)).fenced)
      this.hooks.fence(keyOf(wt), c, 'stale-token', `this folder was the worktree of ${taskId}'s claim ${c.token || '(earlier)'}, which has ended`);
    const admin = present(wt) ? worktreeGitDir(wt.path) : null;
    if (!admin) return;
    const headFile = join(admin, 'HEAD');
    const m = /^ref: (refs\/heads\/.+)$/.exec(fs.readFileSync(headFile, 'utf8').trim());
    const sha = m ? this.r.readRef(m[1] as string) : null;
    if (sha) fs.writeFileSync(headFile, `${sha}\n`);
  }

  private copyFiles(path: string, notes: string[]): void {
    const missing: string[] = [];
    for (const rel of this.r.board.state.settings.copyFiles) {
      const from = resolve(this.r.repo.root, rel);
      const to = resolve(path, rel);
      if (!fs.existsSync(from)) {
        missing.push(rel);
        continue;
      }
      if (fs.existsSync(to)) continue; // tracked by git, or already there: never overwrite the worktree's own
      fs.mkdirSync(dirname(to), { recursive: true });
      fs.cpSync(from, to, { recursive: true });
    }
    if (missing.length) notes.push(`Not copied into the worktree (not found in ${this.r.repo.root}): ${missing.join(', ')}.`);
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

  /**
   * The git locks in an agent's folders as its death is learned, before its claims end: a kill -9 inside
   * `git commit` leaves `index.lock`, `HEAD.lock` or the branch's lock. Taken then, every one is its own (or
   * older): no other agent can work in the folder yet. Each is kept with its file's identity, so that
   * `clearLocks` later removes that file and never a lock the next holder's git made at the same path.
   */
  locksOf(agentId: string): HeldLock[] {
    const held: HeldLock[] = [];
    for (const t of this.r.board.state.tasks.values()) {
      for (const wt of [t.worktree, ...t.parked]) {
        if (!wt || this.hooks.read(keyOf(wt)).agent !== agentId) continue;
        const admin = present(wt) ? worktreeGitDir(wt.path) : null;
        const paths = admin ? [join(admin, 'index.lock'), join(admin, 'HEAD.lock')] : [];
        // The branch is another's only through a live claim that is not the dead agent's.
        if (!t.claim || t.claim.agentId === agentId) paths.push(join(this.r.repo.commonDir, 'refs', 'heads', `${wt.branch}.lock`));
        for (const path of paths) {
          const id = lockIdentity(path);
          if (id) held.push({ path, id, taskId: t.id });
        }
      }
    }
    return held;
  }

  /** Removes the locks `locksOf` found that are still the same files (once nothing of the agent is left to
   *  finish them); returns the paths removed. */
  clearLocks(locks: readonly HeldLock[]): string[] {
    const cleared: string[] = [];
    for (const lock of locks) {
      if (lockIdentity(lock.path) !== lock.id) continue;
      fs.rmSync(lock.path, { force: true });
      cleared.push(lock.path);
    }
    return cleared;
  }

  /** The agents that worked in any task's folder (the fence's record names each folder's last claimant). */
  agentsWithFolders(): Set<string> {
    const agents = new Set<string>();
    for (const t of this.r.board.state.tasks.values()) {
      for (const wt of [t.worktree, ...t.parked]) {
        const agent = wt ? this.hooks.read(keyOf(wt)).agent : undefined;
        if (agent) agents.add(agent);
      }
    }
    return agents;
  }

  /** This host's folders of this board's tasks, for the window's list: on a shared board another host's
   *  folders are that host's to show and remove. */
  async list(): Promise<WorktreeInfo[]> {
    const out: WorktreeInfo[] = [];
    for (const t of this.r.board.state.tasks.values()) {
      for (const wt of [...(t.worktree ? [t.worktree] : []), ...t.parked]) {
        if (!this.ours(wt)) continue;
        const latest = wt === t.worktree;
        const [uncommitted, ahead] = await Promise.all([this.r.uncommittedOf(wt), latest ? this.r.aheadOf(wt.base, wt.branch) : Promise.resolve(0)]);
        const here = present(wt);
        // A folder the parked clean-up removed is not missing: its work is saved (or it had none), and the board
        // keeps naming the latest one while the task's record is its start.
        const saved = here ? undefined : t.saved?.find((w) => w.path === wt.path);
        const cleaned = !here && (!!saved || this.look.cleaned.has(wt.path));
        const bytes = here ? await this.look.disk.of(wt.path) : 0;
        out.push({
          taskId: t.id,
          title: t.title,
          path: wt.path,
          branch: wt.branch,
          base: wt.base,
          held: latest && t.claim !== null,
          missing: !here && !cleaned,
          uncommitted,
          ahead,
          bytes,
          ...(cleaned ? { cleaned: saved ? { savedAs: saved.ref } : { savedAs: null } } : {}),
        });
      }
    }
    return out;
  }

  /**
   * Remove a task's folders on this host and its branch. Refused while a claim works in it, and, unless the
   * person said so (`force`), while a folder has uncommitted changes or the branch has commits its base does
   * not have. Another host's folders of the task are left to that host, and stay on the board.
   */
  remove(taskId: string, force: boolean): Promise<void> {
    return this.r.queue.run(async () => {
      const t = this.r.task(taskId);
      const all = [...(t.worktree ? [t.worktree] : []), ...t.parked];
      if (!all.length) throw new WorktreeError('no-worktree', `${taskId} has no worktree`);
      const folders = all.filter((f) => this.ours(f));
      if (!folders.length) throw new WorktreeError('no-worktree', `${taskId}'s worktree ${all[0]?.path ?? ''} is another host's: that host removes it. Nothing was removed.`);
      if (t.claim) throw new WorktreeError('held', `${t.claim.agentId} is working in ${taskId}'s worktree: release the task first.`);
      const wt = t.worktree && folders.includes(t.worktree) ? t.worktree : null;
      if (!force) {
        const [uncommitted, ahead] = await Promise.all([
          Promise.all(folders.map((f) => this.r.uncommittedOf(f))).then((n) => n.reduce((a, b) => a + b, 0)),
          wt ? this.r.aheadOf(wt.base, wt.branch) : Promise.resolve(0),
        ]);
        const losing = [
          uncommitted ? plural(uncommitted, 'uncommitted change') : '',
          ahead && wt ? `${plural(ahead, 'commit')} that ${wt.base} does not have` : '',
        ].filter(Boolean);
        if (losing.length) throw new WorktreeError('uncommitted', `${taskId}'s worktree has ${losing.join(' and ')}: removing it loses them. Remove it anyway only if you mean to.`);
      }
      for (const f of folders) await this.removeFolder(f, taskId, 'removed');
      if (wt) await this.r.git(this.r.repo.root, ['branch', '-D', wt.branch], { allowFail: true });
      if (folders.length === all.length) await this.r.board.run((e) => e.forgetWorktree(taskId, 'removed', 'user'));
      else for (const f of folders) await this.r.board.run((e) => e.forgetWorktree(taskId, 'removed', 'user', f.path));
    });
  }

  /**
   * Claim folders in this Thread's data folder that this board does not record: another board's of the same
   * Thread folder (its local board, after it moved onto a shared one), folders from before boards were named
   * that no task here names, or a grant of this board cut short before the board recorded it. Listed apart
   * from this board's, for a person to clear; nothing here ever uses or removes them by itself.
   */
  async others(): Promise<OtherBoardFolder[]> {
    const out: OtherBoardFolder[] = [];
    for (const f of this.unrecorded()) out.push(await this.describe(f));
    return out;
  }

  /**
   * Remove one of `others()`'s folders (its git worktree, its files and its hooks), never its branch: the board
   * it came from may be opened again, and its records name that branch's commits. Unless the person said so
   * (`force`), refused while removing it would lose anything: changes never committed, a commit on no branch
   * or ref (a detached folder's), or a folder git no longer knows (whose files cannot be judged).
   */
  clear(path: string, force: boolean): Promise<void> {
    return this.r.queue.run(async () => {
      const f = this.unrecorded().find((o) => o.path === resolve(path));
      if (!f) throw new WorktreeError('no-worktree', `${path} is not a claim folder of another board in this Thread's data folder: nothing was removed.`);
      const d = await this.describe(f);
      if (!force) {
        const losing = [
          d.uncommitted === null ? 'files git no longer knows as a worktree' : d.uncommitted ? plural(d.uncommitted, 'uncommitted change') : '',
          d.unreachable ? 'a commit on no branch' : '',
        ].filter(Boolean);
        if (losing.length) throw new WorktreeError('uncommitted', `${f.path} has ${losing.join(' and ')}: removing it loses them. Remove it anyway only if you mean to.`);
      }
      await this.tellLeaving({ taskId: f.taskId, path: f.path, why: 'removed', otherBoard: true });
      await this.r.git(this.r.repo.root, ['worktree', 'remove', '--force', '--force', f.path], { allowFail: true });
      await this.r.git(this.r.repo.root, ['worktree', 'prune']);
      fs.rmSync(f.path, { recursive: true, force: true });
      // Its hooks folder, unless a folder this board records answers to the same one (boards from before keys).
      const key = hooksKeyOf(f.path);
      const used = [...this.r.board.state.tasks.values()].some((t) => [t.worktree, ...t.parked].some((w) => w && keyOf(w) === key));
      if (!used) this.hooks.forget(key);
    });
  }

  /** The claim folders on disk here that no task on this board names. */
  private unrecorded(): FoundFolder[] {
    const named = new Set<string>();
    for (const t of this.r.board.state.tasks.values()) for (const f of [t.worktree, ...t.parked]) if (f) named.add(resolve(f.path));
    return claimFoldersUnder(this.r.names.worktreesRoot).filter((f) => !named.has(resolve(f.path)));
  }

  /** What a person weighs before clearing a folder: its branch, what is uncommitted, whether its commit is kept. */
  private async describe(f: FoundFolder): Promise<OtherBoardFolder> {
    const admin = worktreeGitDir(f.path);
    const known = admin !== null && inside(this.r.repo.commonDir, admin) && fs.existsSync(join(admin, 'HEAD'));
    const head = known ? readOr(join(admin as string, 'HEAD')).trim() : '';
    const branch = /^ref: refs\/heads\/(.+)$/.exec(head)?.[1] ?? null;
    const sha = branch ? this.r.readRef(`refs/heads/${branch}`) : /^[0-9a-f]{40,64}$/.test(head) ? head : null;
    const uncommitted = known ? await this.r.uncommittedIn(f.path).catch(() => null) : null;
    // A folder on a branch keeps its commits there (clearing never deletes a branch); a detached one's commit
    // is kept only if some ref has it.
    const kept = !sha || (branch !== null && sha !== null) || (await this.onSomeRef(sha));
    return { path: f.path, board: f.board, thisBoard: f.board === this.r.names.key, taskId: f.taskId, token: f.token, branch, uncommitted, unreachable: !kept };
  }

  private async onSomeRef(sha: string): Promise<boolean> {
    const r = await this.r.git(this.r.repo.root, ['for-each-ref', '--count=1', '--contains', sha, '--format=%(refname)', 'refs/'], { allowFail: true });
    return r.code === 0 && r.stdout.trim() !== '';
  }

  /** Run inside the queue. Callers have checked there is nothing to lose, or the person said so: git is not
   *  asked to check again. Whoever stands in the folder is told first, while it is still there. */
  async removeFolder(wt: TaskWorktree, taskId: string, why: FolderLeaving['why']): Promise<void> {
    if (present(wt)) await this.tellLeaving({ taskId, path: wt.path, why });
    if (present(wt)) await this.r.git(this.r.repo.root, ['worktree', 'remove', '--force', '--force', wt.path], { allowFail: true });
    await this.r.git(this.r.repo.root, ['worktree', 'prune']);
    fs.rmSync(wt.path, { recursive: true, force: true });
    this.hooks.forget(keyOf(wt));
  }

  /** The telling before a removal, bounded: a failure or a slow pane never keeps the folder. */
  async tellLeaving(f: FolderLeaving): Promise<void> {
    const tell = this.leaving;
    if (!tell) return;
    let timer: unknown;
    await Promise.race([
      tell(f).catch(() => undefined),
      new Promise<void>((resolve) => (timer = this.timers.setTimeout(resolve, FolderRemovalConstants.tellMaxMs))),
    ]);
    this.timers.clearTimeout(timer);
  }
}

const inside = (dir: string, path: string) => {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
};

/** A lock file found at a gone agent's death, and which file it was. */
export interface HeldLock {
  path: string;
  /** The task whose folder or branch it locks. */
  taskId: string;
  /** Device, inode and change time: a lock the next git makes at the same path is another file. */
  id: string;
}

function lockIdentity(path: string): string | null {
  try {
    const st = fs.statSync(path, { bigint: true });
    return `${st.dev}:${st.ino}:${st.ctimeNs}`;
  } catch {
    return null;
  }
}

/** The folder a worktree's admin folder belongs to (its `gitdir` file names the folder's .git), or null. */
function folderOfAdmin(admin: string): string | null {
  const dotGit = readOr(join(admin, 'gitdir')).trim();
  return dotGit ? resolve(dirname(dotGit)) : null;
}

function readOr(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
