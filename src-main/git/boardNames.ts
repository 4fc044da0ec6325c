import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { BOARD_KEY, taskBranch } from '../../src-shared/git/taskBranch.js';
import { agentWorktreesOf } from '../sandbox/agentReach.js';

/**
 * The names of one board's git things on this host, in one place: its key, its task branches, the folders its
 * claims work in, their hooks folders and the merge queue's checkouts. Task ids restart at T-1 on every board,
 * and a Thread folder can be on several boards in turn (its local journal, then a shared one), all under one
 * data folder and one repository: every name carries the board's key, so no board makes, moves, fences or
 * lists another's. The branch and remote ref names are src-shared/git/taskBranch.ts's (the board's engine and
 * the window read them too); the key they take is made here.
 */

export const BoardNameConstants = {
  /** Hex digits of a board key: 32 bits. Keys need to differ only among the boards one Thread folder has been on
   *  (and the boards that share one remote): among ten boards a collision is about 1 in 10^8. Short, because
   *  a person reads it in every branch name and path. */
  keyHexDigits: 8,
} as const;

/** The Thread data folder's folder of claims' folders, every board's (one folder per board key inside). */
export const WORKTREES = 'worktrees';
/** The Thread data folder's folder of the merge queue's checkouts (one folder per board key inside). */
export const QUEUE_CHECKOUTS = 'merge-queue';

/** What a board's key is made of: its Thread id (from its thread-created event) and, shared, its name. */
export interface BoardIdentity {
  readonly state: { readonly threadId: string };
  readonly sharedName: string | null;
}

/**
 * A board's key: the same on every host of a shared board (its name and Thread id are the board's), different
 * for the local board of the same folder. The Thread id alone does not tell them apart: a host gives a board it
 * creates the folder's own key as Thread id, so a shared board first opened from this folder has the id of the
 * folder's local board. The store is part of what is hashed, and a shared board's name.
 */
export function boardKeyOf(b: BoardIdentity): string {
  const what = JSON.stringify([b.sharedName === null ? 'journal' : 'shared', b.sharedName ?? '', b.state.threadId]);
  return createHash('sha256').update(what).digest('hex').slice(0, BoardNameConstants.keyHexDigits);
}

/** A claim folder's name: its task and the token of the grant it was made for (T-3-7). */
const CLAIM_FOLDER = /^(T-\d+)-(\d+)$/;

/** One board's names on this host, under the Thread's data folder `threadDir`. */
export class BoardNames {
  /** Every board's claims' folders (`<threadDir>/worktrees`): this host's, whatever board made them. */
  readonly worktreesRoot: string;
  /** This board's (`worktrees/<key>`): one folder per agent inside, which that agent's sandbox binds. */
  readonly folders: string;

  constructor(
    readonly key: string,
    readonly threadDir: string,
  ) {
    if (!BOARD_KEY.test(key)) throw new Error(`'${key}' is not a board key`);
    this.worktreesRoot = join(threadDir, WORKTREES);
    this.folders = join(this.worktreesRoot, key);
  }

  static of(board: BoardIdentity & { readonly dir: string }): BoardNames {
    return new BoardNames(boardKeyOf(board), board.dir);
  }

  /** A task's branch on this board, for a task whose record names none yet. */
  branch(taskId: string): string {
    return taskBranch(this.key, taskId);
  }

  /** The folder of the grant (task, token) to `agentId`: `worktrees/<key>/<agent>/T-n-<token>`. */
  folderOf(agentId: string, taskId: string, token: number): string {
    return join(agentWorktreesOf(this.folders, agentId), `${taskId}-${token}`);
  }

  /** Where the merge queue checks out a task's merge to verify it: `merge-queue/<key>/T-n`. */
  queueCheckoutOf(taskId: string): string {
    return join(this.threadDir, QUEUE_CHECKOUTS, this.key, taskId);
  }
}

/**
 * The name of a claim folder's hooks folder (FenceHooks): `<key>/T-n-k` for a folder named by its board
 * (`worktrees/<key>/<agent>/T-n-k`), and `T-n-k` for one from before boards were named, whose hooks were made
 * under that name and are found there still (its worktree's config points at them).
 */
export function hooksKeyOf(path: string): string {
  const name = basename(path);
  const boardDir = dirname(dirname(path));
  const board = basename(boardDir);
  return BOARD_KEY.test(board) && basename(dirname(boardDir)) === WORKTREES ? `${board}/${name}` : name;
}

/** A claim folder found on disk under a Thread's worktrees folder. */
export interface FoundFolder {
  path: string;
  /** The board key it was named under; null for a folder from before boards were named. */
  board: string | null;
  /** The agent folder it is in; null for the oldest layout (`worktrees/T-n-k`). */
  agent: string | null;
  taskId: string;
  token: number;
}

/**
 * Every claim folder under a Thread's worktrees folder, of any board and of each layout there has been:
 * `<key>/<agent>/T-n-k` (named by board), `<agent>/T-n-k` (one folder per agent, before boards were named) and
 * `T-n-k` (before agents had folders). Read from the disk, not from git: a folder git has forgotten is still
 * somebody's files.
 */
export function claimFoldersUnder(worktreesRoot: string): FoundFolder[] {
  const out: FoundFolder[] = [];
  const claim = (path: string, board: string | null, agent: string | null) => {
    const m = CLAIM_FOLDER.exec(basename(path));
    if (m) out.push({ path, board, agent, taskId: m[1] as string, token: Number(m[2]) });
  };
  for (const top of subfolders(worktreesRoot)) {
    const at = join(worktreesRoot, top);
    if (CLAIM_FOLDER.test(top)) {
      claim(at, null, null);
      continue;
    }
    for (const inner of subfolders(at)) {
      const path = join(at, inner);
      if (CLAIM_FOLDER.test(inner)) claim(path, null, top);
      else if (BOARD_KEY.test(top)) for (const name of subfolders(path)) claim(join(path, name), top, inner);
    }
  }
  return out;
}

function subfolders(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
}
