/**
 * Names git sees for a task's work. The host, the hooks it writes and the window all read them from here,
 * so a branch made by one is found by the others.
 */

/** Every task branch lives under one prefix, so a person can list or clean them with one pattern, and the fence
 *  refuses an agent's move of any branch under it but its own task's. */
export const BRANCH_PREFIX = 'forkbench/';

/** A board's key as names carry it: 8 hex digits (src-main/git/boardNames.ts derives it from the board). */
export const BOARD_KEY = /^[0-9a-f]{8}$/;

/**
 * The branch of a task on the board `board` (its key): `forkbench/<board>/T-n`. Task ids restart at T-1 on every
 * board, so the board is in the name: two boards of one Thread folder (its local journal, then a shared one)
 * never make or move each other's branches. Boards made before keys were named their branches `forkbench/T-n`;
 * those records keep them (every host reads a task's branch from the board's record, never from here).
 */
export function taskBranch(board: string, taskId: string): string {
  return `${BRANCH_PREFIX}${board}/${taskId}`;
}

/** A task branch's name under the prefix (`<board>/T-n`, or `T-n` for a branch from before keys): what the
 *  refs below follow, so a record made under either scheme keeps one set of names on every host. */
const branchTail = (branch: string): string => (branch.startsWith(BRANCH_PREFIX) ? branch.slice(BRANCH_PREFIX.length) : branch);

/** Where a task branch's recorded commits are pushed on the Thread's remote: a namespace of Forkbench's own,
 *  which a person's usual `git fetch` (refs/heads/*) leaves alone. What it holds is never trusted over the
 *  board's record: it is a copy for other hosts to fetch. */
export const REMOTE_TASK_PREFIX = 'refs/forkbench/tasks/';

/** The remote's copy of a task branch: `refs/forkbench/tasks/<board>/T-n` (several boards may share a remote). */
export function remoteTaskRef(branch: string): string {
  return `${REMOTE_TASK_PREFIX}${branchTail(branch)}`;
}

/** Where a head the board never recorded is kept: visible to `git log --all`, out of every branch list, never
 *  deleted. One per commit, under its branch's name: `refs/forkbench/stray/<board>/T-n/<sha>`. */
export const STRAY_PREFIX = 'refs/forkbench/stray/';

export function strayRef(branch: string, sha: string): string {
  return `${STRAY_PREFIX}${branchTail(branch)}/${sha}`;
}

/** Commit trailers the hooks add, so any commit says which task and which claim wrote it. */
export const Trailers = {
  task: 'Forkbench-Task',
  token: 'Forkbench-Token',
} as const;

/** Set by a person who commits in a task's worktree by hand: the hooks then let the commit through unfenced. */
export const PERSON_OVERRIDE_ENV = 'FORKBENCH_PERSON';

/** A commit as a person reads it in notes and the review: 10 hex digits stay unique in any real repository. */
export const shortSha = (sha: string): string => sha.slice(0, 10);

/** Where work a parked folder held uncommitted is saved before the folder is removed (issue 47 item 5): one
 *  commit per folder (its files, with its index as second parent, as `git stash` makes them), under the task
 *  branch's name and the token of the claim the folder was made for: `refs/forkbench/parked/<board>/T-n/<token>`. */
export const PARKED_PREFIX = 'refs/forkbench/parked/';

export function parkedRef(branch: string, token: number): string {
  return `${PARKED_PREFIX}${branchTail(branch)}/${token}`;
}
