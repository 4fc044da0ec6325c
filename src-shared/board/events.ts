import type { SavedWork, SendBackCause, BranchRecord, ClaimEndReason, CopiedFrom, EndedClaim, HostGoneHow, LostRecord, RecordHost, SentBack, TaskState, TaskWorktree, ThreadSettings } from './model.js';
import type { RejectionCode } from './result.js';
import type { AgentState, StateSource } from '../agents/agentLife.js';
import type { DispatchMode } from './dispatch.js';
import type { RateLimitReading, UsageAttribution, UsagePosition, UsageSource, UsageTurn } from '../usage/usage.js';
import type { Budget } from '../usage/budgets.js';

/**
 * Every change to a board is one event. The same events are the journal on disk (replayed on load), the
 * append-only log a person reads back, and the change stream windows draw from. One event is one atomic
 * change, so a torn journal line can only lose the last change, never half of one.
 */
interface EventBase {
  /** Strictly increasing per Thread, never reused. */
  readonly seq: number;
  /** Wall-clock time, for display only. */
  readonly at: number;
  /** Board-clock time of the decision (monotonic, continued across restarts). Lets a restarted host resume
   *  the board clock where it stopped, so deadlines in the journal keep their meaning. */
  readonly mono: number;
}

export type BoardEventBody =
  | { kind: 'thread-created'; threadId: string; goal: string; settings: ThreadSettings }
  | { kind: 'goal-set'; goal: string; by: string }
  | { kind: 'settings-set'; settings: ThreadSettings; by: string }
  /** `after`: the tasks it waits on (issue 34); absent in journals from before, and when it waits on none. */
  | { kind: 'task-added'; taskId: string; title: string; body: string; verify: string | null; by: string; after?: string[]; for?: string[] }
  | { kind: 'task-edited'; taskId: string; title?: string; body?: string; verify?: string | null; by: string }
  /** The tasks `taskId` waits on are now `after` (empty: none), replacing what it waited on before. */
  | { kind: 'after-set'; taskId: string; after: string[]; by: string }
  /** A claim begins: the agent claimed it, or a person assigned it. */
  | { kind: 'grant'; taskId: string; agentId: string; token: number; deadline: number; by: string }
  /** A lease is extended: by a write of the holder, by the liveness check, or as grace after a restart. */
  /** `quietMs` (liveness renewals only): how long the agent had been quiet when the check renewed it, the
   *  evidence a lease length is chosen from (leaseEvidence.ts). Absent in journals from before. */
  | { kind: 'renew'; taskId: string; agentId: string; token: number; deadline: number; via: RenewVia; quietMs?: number }
  /** A claim ends; `to` is the state the task moves to (open, needs-attention, or review kept as is). */
  | { kind: 'claim-ended'; taskId: string; agentId: string; token: number; reason: ClaimEndReason; to: TaskState }
  /** A person moved a task from one agent to another: the old claim is revoked and a new token granted. */
  | {
      kind: 'reassign';
      taskId: string;
      from: { agentId: string; token: number };
      to: { agentId: string; token: number; deadline: number };
      by: string;
    }
  /** `wrote`: when the note was first written, for a note carried from another board (issue 45); absent: `at`. */
  | { kind: 'note'; taskId: string; by: string; text: string; wrote?: number }
  /** The holder says the task is done: a claim, not a fact. */
  | { kind: 'submitted'; taskId: string; agentId: string; token: number; record?: BranchRecord | null }
  | { kind: 'approved'; taskId: string; by: string }
  /** A review was turned down: back to its holder if it still holds it, else to the backlog. `deadline`: the
   *  holder's fresh lease (issue 44; absent in journals from before, where the claim kept its deadline).
   *  `cause`: what the merge queue found, when it sent the work back (absent: a person's or verify's reject). */
  | { kind: 'returned'; taskId: string; by: string; reason: string; to: 'claimed' | 'open'; deadline?: number; cause?: SendBackCause }
  | { kind: 'blocked'; taskId: string; by: string; reason: string }
  | { kind: 'unblocked'; taskId: string; by: string }
  /** A person took a task out of needs-attention; its failure count starts again. */
  | { kind: 'reset'; taskId: string; by: string }
  /** The task's worktree was made (or made again after it vanished); it outlives claims until merged or removed. */
  | { kind: 'worktree-set'; taskId: string; worktree: TaskWorktree; by: string }
  /** Without `path`, every folder of the task (the latest and the parked ones); with it, that one. */
  | { kind: 'worktree-removed'; taskId: string; by: string; why: 'merged' | 'removed'; path?: string }
  /** A move of the task's branch that the board accepted under a live claim: from the old record to `record`. */
  /** `host`: the host that recorded it, on a board several hosts share (that host pushes it to the remote). */
  | { kind: 'branch-recorded'; taskId: string; from: string | null; record: BranchRecord; host?: RecordHost }
  /** The host that recorded `record` pushed it to the Thread's remote (refs/forkbench/tasks/T-n): another
   *  host's claim can start there. Absent from boards written before remotes: nothing pushed. */
  | { kind: 'branch-pushed'; taskId: string; record: BranchRecord }
  /** A claim on another host could not start at the record (its commits never reached the remote, their host
   *  gone or cut off): the record goes back to `to`, the last one pushed (or, when none was, the base's head
   *  there), and `lost` names each recorded commit left behind. */
  | { kind: 'record-rewound'; taskId: string; from: string; to: BranchRecord; lost: LostRecord[]; by: string }
  /** An agent's state changed (working, waiting for a person, idle, stalled, exited), with the signal that
   *  said so. Changes nothing on the board: it is for the log, and for a person reading back who waited. */
  | { kind: 'agent-state'; agentId: string; state: AgentState; source: StateSource; text: string | null }
  /** A host of a shared board is gone (issue 45): it left (closed its lease) or was lost (its lease lapsed and
   *  another host swept it). `agents`: its agents still running then; `claims`: the claims this event's
   *  decision ended (each also its own claim-ended). Said once in every other host's windows. */
  | { kind: 'host-gone'; host: RecordHost; how: HostGoneHow; agents: number; claims: number }
  /** A write the board refused, with the rule that refused it. Changes nothing but the log. */
  | {
      kind: 'write-rejected';
      taskId: string | null;
      agentId: string;
      token: number | null;
      op: AgentWriteOp;
      code: RejectionCode;
      message: string;
    }
  /** Approval put the task in the merge queue (issue 34) at `rank`; `sha`: the frozen commit it will merge. */
  /** `token`: the claim that said done (issue 49); absent in journals from before. */
  /** `seal`: the approving host's MAC (QueueEntry.seal); absent in journals from before. */
  | { kind: 'queued'; taskId: string; by: string; rank: number; sha: string | null; token?: number | null; host?: string; seal?: string }
  /** The person's order of the queue is now `order` (every queued task, first to land first); `taskId` moved. */
  | { kind: 'queue-moved'; taskId: string; order: string[]; by: string }
  /** The queue's runner merged the task onto `onto` (as `merge`) and checks the result before the base moves. */
  | { kind: 'queue-landing'; taskId: string; onto: string; merge: string | null }
  /** The landing's compare-and-set (issue 49): the entry was still the head and still the work approved once
   *  `merge` was ready, so the base may move to it now; take-backs are refused until it lands or is given up. */
  | { kind: 'queue-committed'; taskId: string; onto: string; merge: string | null }
  /** The task left the queue without landing (a person took it out); a send-back (`returned`) leaves it too. */
  /** `code` `unsealed`: the queue's runner took out an entry that was not the person's act (approvalSeal.ts). */
  | { kind: 'unqueued'; taskId: string; by: string; reason: string; code?: 'unsealed' };

/** `for`: who may take the task when the board dispatches (dispatch.ts); absent on a task-added: anyone. */
export type DispatchEventBody =
  /** Who may take `taskId` is now `for` (empty: any agent), replacing what it named before. */
  | { kind: 'for-set'; taskId: string; for: string[]; by: string }
  /** `agentId`'s own dispatch setting and labels (mode `thread`: the Thread's default). */
  | { kind: 'dispatch-set'; agentId: string; mode: DispatchMode; labels: string[]; by: string };

/**
 * A Thread moved onto this board carried its local board along (issue 45, boardCarry.ts): one `task-copied` per
 * task (its notes follow as `note` events, `wrote` kept), then one `board-copied` that says what was carried from
 * where. All of one copy are decided at once and stored in one transaction: a copy is there whole or not at all.
 */
export type CarryEventBody =
  /** `taskId`: its id here; `from`: its board and id there. Its claim there ended `board-moved` (`lastClaim`);
   *  `worktree`: only for work in review, whose branch approval merges. */
  | {
      kind: 'task-copied';
      taskId: string;
      from: CopiedFrom;
      title: string;
      body: string;
      verify: string | null;
      state: Exclude<TaskState, 'claimed'>;
      after?: string[];
      for?: string[];
      blockedReason: string | null;
      sentBack: SentBack | null;
      attempts: number;
      failures: number;
      lastClaim: EndedClaim | null;
      record: BranchRecord | null;
      submitted: BranchRecord | null;
      worktree: TaskWorktree | null;
      createdAt: number;
      by: string;
    }
  /** `label`: the old board as people know it; `runs`: old → new ids, as [first old number, first new number,
   *  how many] (a map of thousands of ids is a few runs); `already`: its tasks an earlier copy carried, not again. */
  | { kind: 'board-copied'; from: { board: string; label: string }; copied: number; already: number; runs: Array<[number, number, number]>; by: string };

/** `waiting`: the liveness check renewed a claim because its holder waits on a person, not on itself. */
/** `outage`: the shared board's database could not be reached, and every running lease was moved on by that long. */
/** What an agent's CLI spent (issue 47, src-shared/usage/usage.ts): turns read from its own records, attributed
 *  when recorded to the claim it held (`taskId`/`token`, null for overhead). Changes no task's state or claim.
 *  `marks`: up to where in each record stream the reader had handed out every turn (usageLedger.ts). */
export type UsageEventBody =
  | { kind: 'usage'; agentId: string; profile: string; source: UsageSource; turns: UsageTurn[]; taskId: string | null; token: number | null; how: UsageAttribution; limits?: RateLimitReading[]; marks?: UsagePosition[] };

/** Issue 47: a person set (or, null, removed) the budget of a task, or of the Thread (`taskId` null): budgets.ts. */
export type BudgetEventBody = { kind: 'budget-set'; taskId: string | null; budget: Budget | null; by: string };
/** Issue 47 item 5: a parked folder's uncommitted work saved under refs/forkbench/parked/ (before the folder is
 *  removed), and a saved work a person deleted (its ref is gone). Changes no task's state or claim. */
export type ParkedEventBody =
  | { kind: 'worktree-saved'; taskId: string; saved: SavedWork; by: string }
  | { kind: 'saved-work-deleted'; taskId: string; ref: string; by: string };

export type RenewVia = 'write' | 'liveness' | 'grace' | 'waiting' | 'outage';
/** `fence` is a git hook asking, before a commit or push lands, whether its agent still holds the task. */
export type AgentWriteOp = 'claim' | 'renew' | 'note' | 'done' | 'release' | 'edit' | 'fence' | 'record' | 'add' | 'dispatch'
  // Issue 47: `forkbench usage`, an agent's report of what it spent (held to its write quota).
  | 'usage';

export type BoardEvent = EventBase & (BoardEventBody | DispatchEventBody | CarryEventBody | UsageEventBody | BudgetEventBody | ParkedEventBody);
export type BoardEventKind = BoardEvent['kind'];
