import type { SubmittedQuiet } from './leaseEvidence.js';
import type { AgentDispatch, TaskBackoff } from './dispatch.js';
import type { TaskCost } from '../usage/usage.js';
import type { Budget } from '../usage/budgets.js';
import type { ModelPrice } from '../usage/prices.js';

/**
 * The board's data model: what a Thread, a Task and a Claim are. Plain data only, so the host, the
 * renderer, the CLI and the journal can all hold and send it.
 */

export const TASK_STATES = ['open', 'claimed', 'review', 'done', 'blocked', 'needs-attention'] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** A grant of one task to one agent. `token` is the fencing token: it never repeats within a Thread. */
export interface Claim {
  readonly agentId: string;
  readonly token: number;
  /** Monotonic host time (ms) of the grant. Meaningless outside the host process that granted it. */
  readonly grantedAt: number;
  /** Monotonic host time (ms) at which the lease lapses: a write at or after it is rejected. */
  readonly deadline: number;
  /** Wall-clock time of the grant, for display only; no decision reads it. */
  readonly grantedAtWall: number;
  /** The longest quiet gap (ms) the liveness check saw while the claim was worked on (leaseEvidence.ts);
   *  absent until a renewal carried one. */
  readonly quietMs?: number;
}

/** The last claim a task had, kept so a late write can be told `lapsed` rather than `not-holder`. */
export interface EndedClaim {
  readonly agentId: string;
  readonly token: number;
  readonly reason: ClaimEndReason;
}

export type ClaimEndReason =
  | 'released' // the holder let go
  | 'user-released' // a person returned the task to the backlog
  | 'lapsed' // the lease ran out
  | 'reassigned' // a person moved the task to another agent
  | 'completed' // the task was approved: the work is over, and so is the claim
  | 'no-worktree' // the board could not give the claim its git worktree, so no work could start fenced
  | 'waited-too-long' // the holder waited on a person for longer than the Thread's setting allows
  | HardReleaseReason;

/** Signals that end a claim at once, with no timer: the agent is certainly gone. `agent-exited`: its
 *  process was found gone without its exit being watched: it exited while the board host was down, or its
 *  pty host died (not a failed attempt: nothing says the agent failed). `host-lost`: on a board shared by
 *  several hosts, the holder's host stopped renewing its own lease (crashed, cut off, or paused past it), so
 *  another host ended the claims it could no longer vouch for. `board-moved`: the Thread was moved onto another
 *  board (issue 45): its agents here were ended with it, and a claim carried to the new board ends there too. */
export type HardReleaseReason = 'process-exited' | 'agent-exited' | 'pane-closed' | 'host-restarted' | 'host-stopped' | 'host-lost' | 'board-moved';

export interface Note {
  readonly by: string; // agent id or 'user'
  readonly text: string;
  readonly at: number; // wall clock, display only
}

/** Work sent back from review: by whom (a person, `verify`), why, and when (wall clock, display only). */
export interface SentBack {
  readonly by: string;
  readonly reason: string;
  readonly at: number;
  /** What the merge queue found, when it was the queue that sent it back; absent otherwise. */
  readonly cause?: SendBackCause;
}

/** Why the merge queue sent approved work back (issue 44): its merge onto the base conflicted, or the merge
 *  failed its verify. Each is its own outcome on the card, in the notices and in the log, never a lapse. */
export const SEND_BACK_CAUSES = ['conflict', 'verify-failed'] as const;
export type SendBackCause = (typeof SEND_BACK_CAUSES)[number];

export interface Task {
  readonly id: string; // short and human: T-12
  readonly title: string;
  readonly body: string;
  readonly state: TaskState;
  readonly claim: Claim | null;
  readonly lastClaim: EndedClaim | null;
  /** How many times the task has been granted. */
  readonly attempts: number;
  /** How many claims ended involuntarily (lapse, process exit); at the Thread's poison limit → needs-attention. */
  readonly failures: number;
  readonly notes: readonly Note[];
  /** The reason given when the task was blocked. */
  readonly blockedReason: string | null;
  /** Why its work last came back from review (a person's reject, a failed verify), until it is submitted
   *  again or approved: what the card shows the next one to work on it. Absent in snapshots from before. */
  readonly sentBack?: SentBack | null;
  /** A shell command that checks a task said to be done (issue: verify runner). */
  readonly verify: string | null;
  /** The tasks this one waits on (issue 34): it is ready only once every one of them is done. Never a cycle
   *  (the engine refuses one). Absent in boards written before dependencies, which read as none. */
  readonly after?: readonly string[];
  /** Who may take it when the board dispatches (issue 34): profiles (`claude`) and labels (`label:frontend`);
   *  none: any agent. Absent in boards written before dispatch. */
  readonly for?: readonly string[];
  /** Per agent that gave it up (released, lapsed, taken away): how often, and until when (board time) the
   *  board does not dispatch it to that agent again (dispatch.ts). Absent in boards written before dispatch. */
  readonly backoff?: Readonly<Record<string, TaskBackoff>>;
  readonly createdAt: number; // wall clock
  /** The git worktree and branch of the task's latest grant, once a claim has had one; gone once merged. */
  readonly worktree: TaskWorktree | null;
  /** Folders of earlier grants: fenced (their hooks refuse everything) and parked until merged or removed. */
  readonly parked: readonly TaskWorktree[];
  /** Work parked folders held uncommitted, saved as commits under refs/forkbench/parked/ before the folders were
   *  removed (issue 47 item 5), oldest first, until a person deletes one. Absent in boards from before. */
  readonly saved?: readonly SavedWork[];
  /** The board's record of the task's work: the last commit a live claim moved its branch to. A branch head
   *  that is not this sha is not the task's work, whatever its trailers say. */
  readonly record: BranchRecord | null;
  /** What `done` froze for review: the record at that moment. Approval merges exactly this sha. */
  readonly submitted: BranchRecord | null;
  /** The last record its host pushed to the Thread's remote: where a claim on another host can start if the
   *  record itself never got there. null: nothing pushed (no remote, or a board from before remotes). */
  readonly pushed: BranchRecord | null;
  /** While its work waits in review: the longest quiet gap of the claim that said done, and its agent's
   *  profile, added to the lease evidence if the work is approved (leaseEvidence.ts). Absent in boards from
   *  before. */
  readonly submittedQuiet?: SubmittedQuiet | null;
  /** Only in a window's copy of the board (windowBoard.ts): what its snapshot left out, loaded on demand
   *  (`task.details`). `bodyChars`: the body's full length when `body` is only its start (0 once an edit
   *  sent the whole body); `notes`: how many notes came before those in `notes`. */
  readonly omitted?: { readonly bodyChars: number; readonly notes: number };
  /** Its place in the merge queue once approved (issue 34, mergeQueue.ts), until it lands (done) or is sent
   *  back. Absent in boards written before the queue, which read as not queued. */
  readonly queued?: QueueEntry | null;
  /** The task it was carried from, when a Thread moved onto this board (issue 45, boardCarry.ts): the old
   *  board and the task's id there. null (absent in boards from before): made on this board. */
  readonly copiedFrom?: CopiedFrom | null;
  /** What agents spent on it (issue 47), folded from the usage events attributed to it (costFold.ts); null
   *  (absent in boards from before) until the first. */
  readonly cost?: TaskCost | null;
  /** Its own budget (issue 47, budgets.ts), a person's: null (absent in boards from before) for none. */
  readonly budget?: Budget | null;
}

/** Where a carried task came from: the board (`host id:thread id` of a local journal, boardCarry.ts) and its
 *  id there, which the new board may have given to another task. */
export interface CopiedFrom {
  readonly board: string;
  readonly taskId: string;
}

/**
 * One accepted move of a task's branch, as the board recorded it (the fence's answer is what git writes;
 * this is what the board holds to): which claim, which commit and its tree.
 */
export interface BranchRecord {
  readonly sha: string;
  readonly tree: string;
  /** The claim it was recorded under; 0 for the host's own (the base commit a first worktree starts at). */
  readonly token: number;
  /** The agent, `user` for a person's commit by hand, or `forkbench` for the host's. */
  readonly by: string;
}

/** The host that recorded a commit, on a board several hosts share: its id (stable per data folder) and its
 *  machine's name, for people. */
export interface RecordHost {
  readonly id: string;
  readonly name: string;
}

/** How a host left a shared board: it closed its lease (`left`), or stopped renewing it (`lost`). */
export const HOST_GONE_HOW = ['left', 'lost'] as const;
export type HostGoneHow = (typeof HOST_GONE_HOW)[number];

/** A recorded commit that never reached the remote, named when a claim elsewhere starts without it. */
export interface LostRecord {
  readonly sha: string;
  /** Who recorded it (an agent, `user`, `forkbench`). */
  readonly by: string;
  /** The host it was recorded on; null on a board that did not say (one host, or an older host). */
  readonly host: RecordHost | null;
}

/**
 * Where a grant's work lives when the Thread's folder is a git repository: a worktree folder and branch of
 * its own (the token in both names), outside the user's folder. A re-claim gets a fresh one at the board's
 * record, so nothing a stale process does in the old folder reaches the new holder.
 */
export interface TaskWorktree {
  readonly path: string;
  readonly branch: string;
  /** The grant it was made for; absent in boards written before folders were per grant. */
  readonly token?: number;
  /** The branch it was made from and is merged back into on approval. */
  readonly base: string;
  /** The base branch's commit when the worktree was made. */
  readonly baseCommit: string;
}

/** A git remote as the board names it: the remote's name in each clone and its URL (never with a password). */
export interface GitRemote {
  readonly name: string;
  readonly url: string;
}

export interface ThreadSettings {
  /** Lease length for every new grant and renewal (ms). */
  readonly leaseMs: number;
  /** Involuntary claim ends after which a task goes to needs-attention. */
  readonly poisonLimit: number;
  /** How often the host's liveness check renews the claims of agents making progress (ms). */
  readonly renewIntervalMs: number;
  /** A Thread-wide verify command, used for tasks that carry none of their own. */
  readonly verify: string | null;
  /** Files (or folders) verify reads besides those its command names, like `package.json` or CI config,
   *  relative to the folder it runs in: taken from the base, never from the work it checks (issue 42). */
  readonly verifyFiles: readonly string[];
  /** The branch task worktrees start from and merge into; null means the folder's current branch. */
  readonly baseBranch: string | null;
  /** The git remote every host's clone of the Thread's repository shares, on a board several machines use:
   *  task branches are pushed to its `refs/forkbench/tasks/` and approval pushes the base there. Set by the
   *  first host that opens the Thread with a remote; a host whose clone's remote of that name has another URL
   *  does not join. null: no remote (a board on one machine). */
  readonly remote: GitRemote | null;
  /** Files (relative to the repository) copied into every new worktree, like `.env`: git does not track them. */
  readonly copyFiles: readonly string[];
  /** How long the liveness check keeps renewing the claims of an agent that waits on a person (ms); after
   *  that they lapse with reason `waited-too-long`. */
  readonly waitHoldMs: number;
  /** Desktop notifications when an agent starts waiting or finishes its turn: a person opts in per Thread. */
  readonly notifyAgents: boolean;
  /** A lease length per agent profile (ms), set by a person from the evidence (leaseEvidence.ts): a claim of
   *  a profile named here gets this lease instead of `leaseMs`. Empty in boards from before. */
  readonly leaseByProfile: Readonly<Record<string, number>>;
  /** The Thread's default for dispatch (issue 34): whether an idle agent that holds nothing is given the next
   *  ready task it may take. Off unless a person turns it on. */
  readonly dispatch: boolean;
  /** Agents' own dispatch settings over that default, and their labels, by agent id. */
  readonly agentDispatch: Readonly<Record<string, AgentDispatch>>;
  /** Tasks one agent may hold claimed at once by its own `claim` (issue 42): past it, `claim` is refused
   *  `claim-limit`. A person's assignment may go past it (the person decides); a task in review does not count. */
  readonly claimLimit: number;
  /** Profiles whose agents run outside the sandbox (issue 43), a person's choice: read at each launch, so a
   *  change applies to the agents launched after it. Empty (every agent contained) unless a person ticks one. */
  readonly uncontained: readonly string[];
  /** Prices per model over the bundled table (issue 47, prices.ts), a person's: the whole map, replacing the
   *  one before. Read when a usage event is folded, so a change prices the turns after it. Empty by default. */
  readonly prices?: Readonly<Record<string, ModelPrice>>;
  /** The Thread's budget (issue 47), set only by `budget-set` (as agentDispatch by `dispatch-set`); null: none. */
  readonly budget?: Budget | null;
  /** Issue 47 item 5: how long a parked folder stays before it is saved (if it holds uncommitted work) and
   *  removed (ms). Absent: ParkedWorkDefaults.graceMs (src-shared/git/parkedWork.ts). */
  readonly parkedGraceMs?: number;
  /** Issue 47 item 5: the disk this host's parked folders of the board may use (MB) before the oldest are saved
   *  and removed without waiting out the grace. Absent or null: no budget. */
  readonly parkedBudgetMb?: number | null;
}

/** Uncommitted work of a parked folder, saved before the folder was removed (issue 47 item 5). */
export interface SavedWork {
  /** `refs/forkbench/parked/<board>/T-n/<token>` (taskBranch.ts's parkedRef). */
  readonly ref: string;
  /** The saved commit: the folder's files; its parents are the folder's HEAD and a commit of its index. */
  readonly sha: string;
  /** The folder it was saved from, and the token of the claim that folder was made for. */
  readonly path: string;
  readonly token: number;
  /** Who made the work: the agent of the folder's last claim (or `user` when no claim was ever read there). */
  readonly author: string;
  /** Files changed, added or deleted against the folder's HEAD, as `git status` listed them. */
  readonly files: number;
  /** When it was saved (wall clock, for display). */
  readonly at: number;
}

/** The actor behind a user action (drag, button) as recorded in events and notes. */
export const USER = 'user';
/** The host's own writes (merge results, repairs, a task it blocked), as recorded in events and notes. */
export const HOST_ACTOR = 'forkbench';
/** The host's verify command (its notes, and the approval or rejection it leads to). */
export const VERIFY_ACTOR = 'verify';

/** What an approval's seal binds (src-main/thread/approvalSeal.ts): the work (`sha` under the claim `token`),
 *  who approved it, the host that lands it and the position the board recorded it at, so that the same row
 *  appended again at another position does not hold. */
export interface SealedApproval {
  readonly threadId: string;
  readonly taskId: string;
  readonly seq: number;
  readonly by: string;
  readonly sha: string | null;
  readonly token: number | null;
  readonly host: string | null;
}

/**
 * An approved task waiting in the merge queue (issue 34): the queue lands entries one at a time, each merged
 * onto the base as it then is and checked by the Thread's verify command before the base moves.
 */
export interface QueueEntry {
  /** The person's order: lower lands first, unless it waits on a task queued after it (mergeQueue.ts). */
  readonly rank: number;
  /** Who approved it: the approval the board records once it lands. */
  readonly by: string;
  /** The commit `done` froze, as approval saw it: the queue merges this sha and nothing else. */
  readonly sha: string | null;
  /** The token of the claim that said done, as approval saw it (issue 49): the approval is of the work that
   *  claim froze, and lands only while the task's submission is still that one. null in boards from before,
   *  where the sha alone is checked. */
  readonly token?: number | null;
  /** Wall clock of the approval, display only. */
  readonly at: number;
  /** On a board several hosts share, the host whose queue runner lands it (the one that approved it). */
  readonly host?: string;
  /** The board position the approval was recorded at, and the approving host's MAC over it and the fields
   *  above (SealedApproval): the person's act. Absent on boards from before seals: such an entry does not land. */
  readonly seq?: number;
  readonly seal?: string;
  /** Set while it is being landed: the base commit it was merged onto and the merge (null: nothing to merge). */
  readonly landing?: { readonly onto: string; readonly merge: string | null } | null;
  /** Set once the board agreed that the base moves to `landing`'s merge (issue 49, the landing's
   *  compare-and-set): from then until it lands or its runner gives it up, take-backs are refused, so none can
   *  be answered while the base is moving. */
  readonly committing?: boolean;
}
