/**
 * Names git sees for a task's work. The host, the hooks it writes and the window all read them from here,
 * so a branch made by one is found by the others.
 */

/** Every task branch lives under one prefix, so a person can list or clean them with one pattern. */
export const BRANCH_PREFIX = 'forkbench/';

export function taskBranch(taskId: string): string {
  return `${BRANCH_PREFIX}${taskId}`;
}

/** Where a task branch's recorded commits are pushed on the Thread's remote: a namespace of Forkbench's own,
 *  which a person's usual `git fetch` (refs/heads/*) leaves alone. What it holds is never trusted over the
 *  board's record: it is a copy for other hosts to fetch. */
export const REMOTE_TASK_PREFIX = 'refs/forkbench/tasks/';

export function remoteTaskRef(taskId: string): string {
  return `${REMOTE_TASK_PREFIX}${taskId}`;
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
