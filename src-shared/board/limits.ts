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
  /** Shortest liveness period a Thread may set, and the floor of the one used: each check reads every
   *  agent's process tree, so it needs a floor. Below the shortest lease's quarter (500 ms), so the floor
   *  never stretches a rhythm the lease needs. */
  minRenewIntervalMs: 250,
  /** Tasks one agent may hold claimed at once by its own claims (issue 42: one agent claimed all 23 ready
   *  tasks in a loop). An agent works one task at a time; a second or third covers a task it split off or one
   *  it waits on, and three leaves the rest of the board to the other agents. A person can raise it. */
  defaultClaimLimit: 3,
  /** A Thread's claim limit: at least one task, or no agent could claim; 100 is past any agent's real need and
   *  only keeps the number sane. */
  minClaimLimit: 1,
  maxClaimLimit: 100,
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
  /** Tasks one task may wait on: a plan names a handful; 100 is far past that, and keeps an event line short
   *  and each readiness check (every one of them done?) cheap. */
  maxAfter: 100,
  /** Tasks waiting in the merge queue at once: each lands after a verify run of minutes, so 200 is days of
   *  landings; a `queue-moved` event names them all, and this keeps it one short journal line. */
  maxQueued: 200,
  /** A person's turn: half an hour covers a meeting or lunch; past it the task is better off in the backlog
   *  than held by an agent nobody answers. */
  defaultWaitHoldMs: 30 * 60_000,
  /** Longest wait hold: a day; longer, and a task waits on someone who has gone home for the weekend. Its
   *  floor is the board's shortest lease (short holds exist for tests and demos, as short leases do). */
  maxWaitHoldMs: 24 * 60 * 60_000,
} as const;

/**
 * What one board holds and how fast one agent may write to it. An agent is a program running what an LLM
 * chose: a loop that adds a 64 KiB task per call made 14,203 tasks in 25 s and a board no window could open.
 * The board itself enforces these (leaseEngine.ts), per agent, on its own clock; refusals say which limit
 * and when to try again, and nothing already on the board is touched.
 */
export const BoardLimits = {
  /** All text on a board (goal, titles, bodies, verify commands, notes), in UTF-16 units. 32 Mi chars keeps
   *  the board's snapshot file and its memory in tens of MB (a 10k-task board of 2 KiB tasks is ~20 Mi) and
   *  its JSON, even if every character needed a 6-character escape, under V8's ~512 Mi-char string limit. */
  maxTextChars: 32 * 1024 * 1024,
  /** Agents' writes stop here, 4 Mi chars short of the cap: the person can always still add, edit and note
   *  (to tell agents to stop, or to write down what to clean up), whatever the agents filled. */
  agentTextChars: 28 * 1024 * 1024,
  /** Writes (add, note, edit, a done note) an agent may make in a row: planning adds a few dozen tasks at
   *  once, and a busy agent notes a few times a minute. */
  agentWriteBurst: 60,
  /** Sustained: one write a second is far more than a model that thinks between calls makes, and about 1,500
   *  times slower than the flood. */
  agentWritesPerSecond: 1,
  /** Text an agent may write in a row: 16 full-size bodies. */
  agentTextBurstChars: 1024 * 1024,
  /** Sustained: 8 Ki chars a second (~28 Mi an hour) is a long plan or log per minute; at this rate one
   *  agent alone needs about an hour to reach agentTextChars. */
  agentTextCharsPerSecond: 8 * 1024,
  /** Refused writes of an agent that go into the journal (and the window's log): every refusal of an agent
   *  working normally (a few a minute at most), but a loop of refused claims or renewals is not a journal
   *  line each. Refusals past it are still answered, with their reason; only their record is skipped. */
  agentRefusalsLoggedBurst: 60,
  agentRefusalsLoggedPerSecond: 1,
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
  return Math.max(Limits.minRenewIntervalMs, Math.min(settings.renewIntervalMs, Math.floor(settings.leaseMs * LeaseFractions.renewAtMost)));
}
