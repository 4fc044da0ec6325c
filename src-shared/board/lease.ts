import type { Claim, Task } from './model.js';

/**
 * Lease arithmetic shared by the host (which decides) and the renderer (which only draws). A lease is
 * expired at its deadline, not after it: a renewal that arrives exactly at the deadline is too late.
 */
export function isExpired(claim: Pick<Claim, 'deadline'>, now: number): boolean {
  return now >= claim.deadline;
}

/**
 * Whether a task's claim counts down at all. In review the work waits on the person, not on its agent: the
 * board holds the claim for the person (issue 44), as the liveness check holds one whose agent waits on a
 * question, so an idle agent never loses work the person has not looked at yet. The claim still ends at once
 * on a hard signal (its pane closed, its process gone), and a send-back gives it a full lease from then.
 */
export function leaseRuns(task: Pick<Task, 'state'>): boolean {
  return task.state !== 'review';
}

/** The task's claim has run out: it counts down and its deadline has come. */
export function claimLapsed(task: Pick<Task, 'state'> & { claim: Pick<Claim, 'deadline'> }, now: number): boolean {
  return leaseRuns(task) && isExpired(task.claim, now);
}

export function remainingMs(claim: Pick<Claim, 'deadline'>, now: number): number {
  return Math.max(0, claim.deadline - now);
}

/** Fraction of the lease left, 0..1, for a countdown ring. */
export function remainingFraction(claim: Pick<Claim, 'deadline'>, leaseMs: number, now: number): number {
  if (leaseMs <= 0) return 0;
  return Math.min(1, remainingMs(claim, now) / leaseMs);
}
