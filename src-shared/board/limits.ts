/** Numbers the board enforces, each with the reason it has the value it has. */
export const Limits = {
  /** Default lease: long enough for an agent to think through one step, short enough that a crashed
   *  agent's task is back in the backlog within two minutes. */
  defaultLeaseMs: 120_000,
  /** Shortest lease a Thread may set: below ~2 s a CLI start (~50 ms) plus a busy machine cannot renew
   *  reliably. Short leases exist for tests and demos. */
  minLeaseMs: 2_000,
  /** Longest lease: 12 h, a working day; longer means a crashed agent holds a task overnight. */
  maxLeaseMs: 12 * 60 * 60_000,
  /** Liveness check period: a quarter of the default lease, like kubelet's 10 s renew of a 40 s lease. */
  defaultRenewIntervalMs: 30_000,
  /** Claims that lapse this many times park the task in needs-attention (SQS maxReceiveCount). */
  defaultPoisonLimit: 3,
  minPoisonLimit: 1,
  maxPoisonLimit: 100,
  /** A task title is one line a person scans on a card. */
  maxTitleChars: 500,
  /** Bodies and notes carry logs and plans; 64 KiB keeps one event line well under the 1 MiB frame limit. */
  maxBodyChars: 64 * 1024,
  maxNoteChars: 64 * 1024,
  maxGoalChars: 64 * 1024,
  maxVerifyChars: 4 * 1024,
  maxAgentIdChars: 128,
  /** A person's turn: half an hour covers a meeting or lunch; past it the task is better off in the backlog
   *  than held by an agent nobody answers. */
  defaultWaitHoldMs: 30 * 60_000,
  /** Longest wait hold: a day; longer, and a task waits on someone who has gone home for the weekend. Its
   *  floor is the board's shortest lease (short holds exist for tests and demos, as short leases do). */
  maxWaitHoldMs: 24 * 60 * 60_000,
} as const;

/** The parts of a lease that mean something, each once. */
export const LeaseFractions = {
  /** The renewal rhythm's ceiling: a quarter of the lease, so a live agent is renewed at least three times
   *  before its lease could lapse (kubelet: 10 s renew of a 40 s lease). */
  renewAtMost: 1 / 4,
  /** A countdown turns amber with less than this part left: the holder has missed a renewal of the rhythm. */
  warnBelow: 1 / 4,
} as const;

/** The renewal interval actually used, by the board's liveness check and as the rhythm agents are told. */
export function effectiveRenewIntervalMs(settings: { leaseMs: number; renewIntervalMs: number }): number {
  return Math.max(250, Math.min(settings.renewIntervalMs, Math.floor(settings.leaseMs * LeaseFractions.renewAtMost)));
}
