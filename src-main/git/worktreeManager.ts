import { join } from 'node:path';
import type { GitIsolation } from '../../src-shared/protocol/windowApi.js';
import type { BoardService } from '../board/boardService.js';
import { findOnPath } from '../base/pathLookup.js';
import { BoardNames, boardKeyOf } from './boardNames.js';
import { BranchRecords } from './branchRecords.js';
import { ClaimFolders } from './claimFolders.js';
import { CommitNotes } from './commitNotes.js';
import { FenceHooks } from './fenceHooks.js';
import { configSettings } from './git.js';
import { probeRepo } from './repoProbe.js';
import { RecordArrival, type ArrivalTiming } from './recordArrival.js';
import { joinRemote } from './remoteJoin.js';
import { TaskPushes } from './taskPushes.js';
import { TaskRemote } from './taskRemote.js';
import { TaskRepo } from './taskRepo.js';
import { TaskReview } from './taskReview.js';
import { ThreadFolderFence } from './threadFolderFence.js';
import { ParkedWork, type ParkedSeams } from './parkedWork.js';
import { CleanedFolders } from './cleanedFolders.js';
import { DiskUseCache } from './diskUse.js';

export { WorktreeError } from './taskRepo.js';

/**
 * Git under claims, for one Thread: the folders claims work in, the board's record of each task branch, the
 * review and merge of submitted work, and the fence on the Thread's own folder. Each is a room of its own;
 * this puts them together over one repository and one git queue.
 */
export class WorktreeManager {
  private constructor(
    private readonly repo: TaskRepo,
    readonly folders: ClaimFolders,
    readonly records: BranchRecords,
    readonly review: TaskReview,
    readonly threadFolder: ThreadFolderFence,
    /** This host's recorded commits, copied to the Thread's remote. */
    readonly pushes: TaskPushes,
    /** What the board recorded of each commit, as git notes for people (`git log --notes=forkbench`). */
    readonly notes: CommitNotes,
    /** Parked folders saved and removed after their grace (issue 47 item 5). */
    readonly parked: ParkedWork,
  ) {}

  /** A manager for the folder's repository, or the reason there is no isolation in this Thread. */
  static async open(folder: string, dataDir: string, board: BoardService, socket = '', timing: ArrivalTiming = {}, parkedSeams: ParkedSeams = {}): Promise<WorktreeManager | { reason: string }> {
    const probe = await probeRepo(folder);
    if (!probe.ok) return { reason: probe.reason };
    // git needs perl too, so it is nearly always there.
    const perl = findOnPath('perl');
    if (!perl) return { reason: 'perl is not installed (git normally brings it): the hooks that fence commits need it, so claims get no worktree.' };
    // The repository's own hooks folder, whatever the scope it was set in, but never ours: the Thread's folder
    // points at the fence's while it is open, and a host that was killed -9 left that setting behind.
    const ours = join(dataDir, 'hooks');
    const set = (await configSettings(probe.root, '^core\\.hookspath$')).map((s) => s.value.trim()).filter((v) => v && !v.startsWith(ours));
    // Relative hooksPath (husky's `.husky/_`) is relative to each worktree's top, which the wrapper resolves.
    const chainTo = set.at(-1) ?? join(probe.commonDir, 'hooks');
    const { ok: _ok, ...facts } = probe;
    // Named per board: the Thread's data folder and repository outlive any one board of the folder.
    const repo = new TaskRepo(folder, facts, board, new BoardNames(boardKeyOf(board), dataDir));
    const hooks = new FenceHooks(ours, perl, chainTo, socket);
    const records = new BranchRecords(repo);
    // The remote as the board names it at each use: a person may change the setting while the Thread is open.
    const remote = () => {
      const set = board.state.settings.remote;
      return set ? new TaskRemote(repo, set) : null;
    };
    // One measure of each folder's disk and one record of what the clean-up removed, for the clean-up's budget
    // and the Worktrees panel's list alike.
    const look = { disk: new DiskUseCache(parkedSeams.clock ?? board.clock), cleaned: new CleanedFolders(join(repo.names.threadDir, 'parked-cleaned', repo.names.key)) };
    const folders = new ClaimFolders(repo, hooks, records, undefined, new RecordArrival(repo, remote, timing), look);
    const notes = new CommitNotes(repo, board.clock, (m) => process.stderr.write(`${m}\n`));
    const parked = new ParkedWork(repo, folders, hooks, look, board.clock, parkedSeams.timers, parkedSeams, (m) => process.stderr.write(`${m}\n`));
    return new WorktreeManager(repo, folders, records, new TaskReview(repo, folders), new ThreadFolderFence(repo, hooks), new TaskPushes(repo, remote, timing.timers), notes, parked);
  }

  /**
   * The Thread's remote, as this clone joins the board: on a shared board (or one that names a remote) the
   * board's remote is set from this clone's if it had none, and a clone whose remote has another URL is
   * refused (RemoteMismatchError), before any folder is made here.
   */
  join(): Promise<void> {
    return joinRemote(this.repo);
  }

  isolation(): GitIsolation {
    return this.repo.isolation();
  }

  /** Folders outside the Thread's folder that agents edit while working on tasks: the worktrees. For CLIs
   *  that sandbox writes. (Not the git folder: Codex's sandbox keeps every .git read-only whatever the roots,
   *  so a commit from it runs outside the sandbox with its person's approval, and the fence asks the board.) */
  writableRoots(): string[] {
    return [this.folders.dir];
  }

  /** This board's names: its key, its branches, its folders (boardNames.ts). */
  get names(): BoardNames {
    return this.repo.names;
  }

  /** The repository's common git folder (objects, refs, the worktrees' admin folders). */
  gitCommonDir(): string {
    return this.repo.repo.commonDir;
  }

  /** Where an agent works inside a worktree: the same subfolder the Thread's folder is of its repository. */
  workdirOf(path: string): string {
    return this.repo.workdirOf(path);
  }

  /** Every queued git change has finished, the notes of every record so far written (pushes run beside the
   *  queue: `pushes.idle()`). */
  async idle(): Promise<void> {
    await Promise.all([this.repo.queue.idle(), this.notes.flush()]);
  }
}
