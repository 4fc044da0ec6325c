import type { BoardEvent } from './events.js';
import { Limits } from './limits.js';
import type { Claim, ThreadSettings } from './model.js';

/**
 * The board's limits, checked again on what is read back from disk. A journal line's checksum says the line
 * is whole, not who wrote it: anyone who can write the file can append a line with a valid checksum (a
 * grant of a 10-year lease, appended while serve was down, was taken as it stood). The engine never decides
 * past these limits, so a value past one was not written by it. An event past them is set aside
 * (storedEvents.ts); a snapshot's claims and settings, which no event can replace, are put back inside them, and said.
 */

/**
 * How far past an event's `mono` a deadline the board decided can fall beyond the lease itself: the engine
 * reads its clock for the deadline a little after the event's time was taken (tens of ms measured under
 * load). A minute is far past any one decision and nothing beside a lease of up to 12 h.
 */
export const DECISION_SLACK_MS = 60_000;

/** A lease no longer than the board ever grants: a deadline at most this far past its decision. */
export const leaseEnd = (from: number, deadline: number): number => Math.min(deadline, from + Limits.maxLeaseMs + DECISION_SLACK_MS);

const clampLease = (ms: number): number => Math.min(Limits.maxLeaseMs, Math.max(Limits.minLeaseMs, ms));

/** Settings with every lease length inside the board's limits (the window and the CLI refuse any other). */
function boundSettings(s: ThreadSettings): { settings: ThreadSettings; fixed: string[] } {
  const fixed: string[] = [];
  let settings = s;
  if (clampLease(s.leaseMs) !== s.leaseMs) {
    fixed.push(`a lease of ${s.leaseMs} ms`);
    settings = { ...settings, leaseMs: clampLease(s.leaseMs) };
  }
  const byProfile = Object.entries(s.leaseByProfile ?? {});
  if (byProfile.some(([, ms]) => clampLease(ms) !== ms)) {
    for (const [p, ms] of byProfile) if (clampLease(ms) !== ms) fixed.push(`a lease of ${ms} ms for ${p}`);
    settings = { ...settings, leaseByProfile: Object.fromEntries(byProfile.map(([p, ms]) => [p, clampLease(ms)])) };
  }
  return { settings, fixed };
}

/** A snapshot's claim as the board could hold it at board time `mono`: no lease runs longer than the limit. */
export function boundClaim(c: Claim, mono: number): { claim: Claim; fixed: string | null } {
  const deadline = leaseEnd(mono, c.deadline);
  return deadline === c.deadline ? { claim: c, fixed: null } : { claim: { ...c, deadline }, fixed: `a lease ending ${c.deadline - mono} ms after the snapshot` };
}

export { boundSettings };
