/**
 * Names git sees for a task's work. The host, the hooks it writes and the window all read them from here,
 * so a branch made by one is found by the others.
 */

/** Every task branch lives under one prefix, so a person can list or clean them with one pattern. */
export const BRANCH_PREFIX = 'forkbench/';

export function taskBranch(taskId: string): string {
  return `${BRANCH_PREFIX}${taskId}`;
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
