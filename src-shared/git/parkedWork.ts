/**
 * Parked folders (issue 47 item 5): what a Thread's settings say about them, and the bounds a person may set.
 * Every lapse and reassign parks the previous claim's folder; left alone, a 150 s chaos run left 174 of them
 * (~87 GB on a 500 MB checkout). Each is saved (its uncommitted work as a commit under
 * refs/forkbench/parked/) and removed once its grace is out, or sooner while the disk budget is exceeded.
 */
export const ParkedWorkDefaults = {
  /** A parked folder's stale agent may still be running (stopped past its lease, or slow to see its claim
   *  end): it is fenced, but may still write files. Five minutes is well past a lease (120 s by default) and
   *  the liveness check's notice, so the last of its writes are in the folder before it is saved; and short
   *  enough that a run of hundreds of lapses keeps only the last few minutes' folders on disk. */
  graceMs: 300_000,
  /** The shortest grace: a second, so a folder is never saved while the grant that parked it is still
   *  telling the previous holder where to go (FolderRemovalConstants.tellMaxMs). */
  minGraceMs: 1_000,
  /** The longest: a week, past which a setting that keeps folders is better said by no clean-up at all. */
  maxGraceMs: 7 * 24 * 3_600_000,
  /** A budget under 1 MB would remove every folder at once; over 10 TB is no budget at all. */
  minBudgetMb: 1,
  maxBudgetMb: 10_000_000,
} as const;

/** The grace a board's settings give a parked folder. */
export function parkedGraceOf(settings: { readonly parkedGraceMs?: number }): number {
  return settings.parkedGraceMs ?? ParkedWorkDefaults.graceMs;
}

/** The disk budget in bytes, or null for none. */
export function parkedBudgetBytesOf(settings: { readonly parkedBudgetMb?: number | null }): number | null {
  const mb = settings.parkedBudgetMb ?? null;
  return mb === null ? null : mb * 1024 * 1024;
}
