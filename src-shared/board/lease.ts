import type { Claim } from './model.js';

/**
 * Lease arithmetic shared by the host (which decides) and the renderer (which only draws). A lease is
 * expired at its deadline, not after it: a renewal that arrives exactly at the deadline is too late.
 */
export function isExpired(claim: Pick<Claim, 'deadline'>, now: number): boolean {
  return now >= claim.deadline;
}

export function remainingMs(claim: Pick<Claim, 'deadline'>, now: number): number {
  return Math.max(0, claim.deadline - now);
}

/** Fraction of the lease left, 0..1, for a countdown ring. */
export function remainingFraction(claim: Pick<Claim, 'deadline'>, leaseMs: number, now: number): number {
  if (leaseMs <= 0) return 0;
  return Math.min(1, remainingMs(claim, now) / leaseMs);
}
