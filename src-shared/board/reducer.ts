import type { BoardEvent } from './events.js';
import { Limits } from './limits.js';
import type { Claim, EndedClaim, Task, ThreadSettings } from './model.js';
import { isFailedAttempt } from './claimEnd.js';
import { foldEvidence, leaseFor, NO_EVIDENCE, quietAtSubmit, type LeaseEvidence } from './leaseEvidence.js';
import { ANY_TAKER, backsOff, NO_AGENT_DISPATCH, NO_BACKOFF, withBackoff } from './dispatch.js';
import type { CostBook } from '../usage/usage.js';
import { batchSpend, copyBook, emptyBook, foldBook, foldTaskCost } from '../usage/costFold.js';
import { copyLedger, emptyLedger, foldUsageLedger, type UsageLedger } from './usageLedger.js';

/**
 * The one function that turns an event into a change of state. The host's engine applies each event it
 * decides through it, the journal replays through it on load, and a window keeps its copy of the board
 * current with it, so the three cannot disagree. It mutates the task map in place (O(1) per event):
 * copying a map of 10k tasks per change would make a large board slow.
 */
export interface Board {
  threadId: string;
  goal: string;
  settings: ThreadSettings;
  tasks: Map<string, Task>;
  /** The next fencing token to grant. Persisted, so tokens never repeat across restarts. */
  nextToken: number;
  /** The number in the next task id (T-<n>). */
  nextTaskNumber: number;
  /** Sequence number of the last event applied. */
  seq: number;
  /** What a lease length is chosen from, per agent profile (leaseEvidence.ts). Replaced, never edited. */
  evidence: LeaseEvidence;
  /** What agents spent, besides each task's own (issue 47, costFold.ts): its maps edited in place by the fold. */
  costs: CostBook;
  /** Issue 47: each agent's claims over time and its recorded turns, to attribute usage by (usageLedger.ts). */
  usageLedger: UsageLedger;
}

export const DEFAULT_SETTINGS: ThreadSettings = {
  leaseMs: Limits.defaultLeaseMs,
  poisonLimit: Limits.defaultPoisonLimit,
  renewIntervalMs: Limits.defaultRenewIntervalMs,
  verify: null,
  verifyFiles: [],
  baseBranch: null,
  remote: null,
  copyFiles: [],
  waitHoldMs: Limits.defaultWaitHoldMs,
  notifyAgents: false,
  leaseByProfile: {},
  dispatch: false,
  agentDispatch: NO_AGENT_DISPATCH,
  claimLimit: Limits.defaultClaimLimit,
  uncontained: [],
  prices: {},
  budget: null,
};

/** A new task's fields besides the four every task spells out (id, title, state, createdAt). Snapshots leave
 *  out whatever still holds these values (serialized.ts), and fields added later (worktree) read as these. */
export const NEW_TASK: Omit<Task, 'id' | 'title' | 'state' | 'createdAt'> = {
  body: '',
  claim: null,
  lastClaim: null,
  attempts: 0,
  failures: 0,
  notes: [],
  blockedReason: null,
  sentBack: null,
  verify: null,
  after: [],
  for: ANY_TAKER,
  backoff: NO_BACKOFF,
  worktree: null,
  parked: [],
  saved: [],
  record: null,
  submitted: null,
  pushed: null,
  submittedQuiet: null,
  queued: null,
  copiedFrom: null,
  cost: null,
  budget: null,
};

export function emptyBoard(threadId = ''): Board {
  return { threadId, goal: '', settings: DEFAULT_SETTINGS, tasks: new Map(), nextToken: 1, nextTaskNumber: 1, seq: 0, evidence: NO_EVIDENCE, costs: emptyBook(), usageLedger: emptyLedger() };
}

/** A board of its own that shares every task object with `b`: enough, since applyEvent replaces a task on
 *  change and never edits one, so applying events to either leaves the other as it was. The cost book's maps
 *  are edited in place, so the copy gets its own. */
export function copyBoard(b: Readonly<Board>): Board {
  return { ...b, tasks: new Map(b.tasks), costs: copyBook(b.costs), usageLedger: copyLedger(b.usageLedger) };
}

export class EventMismatch extends Error {
  constructor(event: BoardEvent, why: string) {
    super(`event #${event.seq} (${event.kind}) does not apply: ${why}`);
    this.name = 'EventMismatch';
  }
}

export function taskNumber(taskId: string): number {
  // Ids are validated as T-<digits> before they reach the board; this runs on every change of state.
  return taskId.startsWith('T-') ? Number(taskId.slice(2)) : NaN;
}

/** Display order of task ids: by number (T-9 before T-10). The host sends each agent's claims in it. */
export function compareTaskIds(a: string, b: string): number {
  const d = taskNumber(a) - taskNumber(b);
  return Number.isNaN(d) ? a.localeCompare(b) : d;
}

export function applyEvent(b: Board, e: BoardEvent): void {
  if (e.seq <= b.seq) throw new EventMismatch(e, `sequence ${e.seq} is not after ${b.seq}`);
  // Only these two read the task as it was; a renewal (the hot path) looks nothing up for the evidence.
  const before = e.kind === 'approved' || e.kind === 'claim-ended' ? b.tasks.get(e.taskId) : undefined;
  switch (e.kind) {
    case 'thread-created':
      b.threadId = e.threadId;
      b.goal = e.goal;
      b.settings = withDefaults(e.settings);
      break;
    case 'goal-set':
      b.goal = e.goal;
      break;
    case 'settings-set':
      b.settings = withDefaults(e.settings);
      break;
    case 'task-added': {
      if (b.tasks.has(e.taskId)) throw new EventMismatch(e, `${e.taskId} exists`);
      b.tasks.set(e.taskId, {
        ...NEW_TASK,
        id: e.taskId,
        title: e.title,
        body: e.body,
        state: 'open',
        verify: e.verify,
        createdAt: e.at,
        ...(e.after?.length ? { after: e.after } : {}),
        ...(e.for?.length ? { for: e.for } : {}),
      });
      b.nextTaskNumber = Math.max(b.nextTaskNumber, taskNumber(e.taskId) + 1);
      break;
    }
    case 'task-edited':
      update(b, e, (t) => ({
        ...t,
        title: e.title ?? t.title,
        body: e.body ?? t.body,
        verify: e.verify === undefined ? t.verify : e.verify,
        // A window's copy now has the whole body: the edit carried it.
        ...(t.omitted && e.body !== undefined ? { omitted: { ...t.omitted, bodyChars: 0 } } : {}),
      }));
      break;
    case 'after-set':
      update(b, e, (t) => ({ ...t, after: e.after.length ? e.after : NEW_TASK.after }));
      break;
    case 'grant':
      update(b, e, (t) => ({
        ...t,
        state: 'claimed',
        claim: claimOf(e.agentId, e.token, e.deadline, e.at, leaseFor(b.settings, e.agentId)),
        attempts: t.attempts + 1,
      }));
      b.nextToken = Math.max(b.nextToken, e.token + 1);
      break;
    case 'renew':
      update(b, e, (t) => {
        if (!t.claim || t.claim.token !== e.token) throw new EventMismatch(e, 'no such claim');
        const deadline = Math.max(t.claim.deadline, e.deadline);
        // A quiet gap counts while the task is worked on; in review the agent waits for a person, not itself.
        if (e.quietMs === undefined || t.state !== 'claimed' || e.quietMs <= (t.claim.quietMs ?? 0)) return { ...t, claim: { ...t.claim, deadline } };
        return { ...t, claim: { ...t.claim, deadline, quietMs: e.quietMs } };
      });
      break;
    case 'claim-ended':
      update(b, e, (t) => {
        if (!t.claim || t.claim.token !== e.token) throw new EventMismatch(e, 'no such claim');
        const ended: EndedClaim = { agentId: e.agentId, token: e.token, reason: e.reason };
        return {
          ...t,
          state: e.to,
          claim: null,
          lastClaim: ended,
          failures: t.failures + (isFailedAttempt(e.reason, t.state) ? 1 : 0),
          ...(backsOff(e.reason) ? { backoff: withBackoff(t, e.agentId, e.mono) } : {}),
        };
      });
      break;
    case 'reassign':
      update(b, e, (t) => ({
        ...t,
        state: 'claimed',
        claim: claimOf(e.to.agentId, e.to.token, e.to.deadline, e.at, leaseFor(b.settings, e.to.agentId)),
        lastClaim: { agentId: e.from.agentId, token: e.from.token, reason: 'reassigned' },
        attempts: t.attempts + 1,
        backoff: withBackoff(t, e.from.agentId, e.mono),
      }));
      b.nextToken = Math.max(b.nextToken, e.to.token + 1);
      break;
    case 'note':
      update(b, e, (t) => ({ ...t, notes: [...t.notes, { by: e.by, text: e.text, at: e.wrote ?? e.at }] }));
      break;
    case 'task-copied': {
      if (b.tasks.has(e.taskId)) throw new EventMismatch(e, `${e.taskId} exists`);
      b.tasks.set(e.taskId, {
        ...NEW_TASK,
        id: e.taskId,
        title: e.title,
        body: e.body,
        state: e.state,
        verify: e.verify,
        createdAt: e.createdAt,
        ...(e.after?.length ? { after: e.after } : {}),
        ...(e.for?.length ? { for: e.for } : {}),
        blockedReason: e.blockedReason,
        sentBack: e.sentBack,
        attempts: e.attempts,
        failures: e.failures,
        lastClaim: e.lastClaim,
        record: e.record,
        submitted: e.submitted,
        worktree: e.worktree,
        copiedFrom: e.from,
      });
      b.nextTaskNumber = Math.max(b.nextTaskNumber, taskNumber(e.taskId) + 1);
      break;
    }
    case 'submitted':
      update(b, e, (t) => ({ ...t, state: 'review', submitted: e.record ?? null, sentBack: null, submittedQuiet: quietAtSubmit(t.claim, e.agentId) }));
      break;
    case 'approved':
      // The engine ends any claim with its own claim-ended event first, so no claim ends unrecorded.
      update(b, e, (t) => {
        if (t.claim) throw new EventMismatch(e, 'the claim must end before approval');
        return { ...t, state: 'done', sentBack: null, submittedQuiet: null, queued: null };
      });
      break;
    case 'returned':
      update(b, e, (t) => ({
        ...t,
        state: e.to,
        // Back to its holder with the fresh lease the event carries (journals from before carry none).
        claim: e.to === 'open' || !t.claim ? null : e.deadline === undefined ? t.claim : { ...t.claim, deadline: e.deadline },
        submitted: null,
        sentBack: { by: e.by, reason: e.reason, at: e.at, ...(e.cause ? { cause: e.cause } : {}) },
        submittedQuiet: null,
        queued: null,
      }));
      break;
    case 'blocked':
      update(b, e, (t) => ({ ...t, state: 'blocked', blockedReason: e.reason }));
      break;
    case 'unblocked':
      update(b, e, (t) => ({ ...t, state: 'open', blockedReason: null }));
      break;
    case 'reset':
      update(b, e, (t) => ({ ...t, state: 'open', failures: 0, submittedQuiet: null }));
      break;
    case 'worktree-set':
      // The previous grant's folder is parked (fenced), not forgotten: a person may still want what is in it.
      update(b, e, (t) => ({
        ...t,
        worktree: e.worktree,
        parked: t.worktree && t.worktree.path !== e.worktree.path ? [...t.parked.filter((p) => p.path !== t.worktree?.path), t.worktree] : t.parked,
      }));
      break;
    case 'worktree-removed':
      update(b, e, (t) =>
        e.path === undefined
          ? { ...t, worktree: null, parked: [] }
          : { ...t, worktree: t.worktree?.path === e.path ? null : t.worktree, parked: t.parked.filter((p) => p.path !== e.path) },
      );
      break;
    case 'branch-recorded':
      update(b, e, (t) => ({ ...t, record: e.record }));
      break;
    case 'branch-pushed':
      update(b, e, (t) => ({ ...t, pushed: e.record }));
      break;
    case 'record-rewound':
      // `pushed` stays: `to` is the last pushed record, or the base's head (which no push of the task's put there).
      update(b, e, (t) => ({ ...t, record: e.to }));
      break;
    case 'for-set':
      update(b, e, (t) => ({ ...t, for: e.for.length ? e.for : NEW_TASK.for }));
      break;
    case 'dispatch-set': {
      const { [e.agentId]: _was, ...others } = b.settings.agentDispatch ?? NO_AGENT_DISPATCH;
      // An agent back on the Thread's default with no labels needs no entry: the map stays as small as the
      // agents that differ.
      const keep = e.mode !== 'thread' || e.labels.length > 0;
      b.settings = { ...b.settings, agentDispatch: keep ? { ...others, [e.agentId]: { mode: e.mode, labels: e.labels } } : others };
      break;
    }
    case 'worktree-saved':
      // One saved work per ref: a clean-up redone after a restart saves the same folder under the same ref.
      update(b, e, (t) => ({ ...t, saved: [...(t.saved ?? []).filter((w) => w.ref !== e.saved.ref), e.saved] }));
      break;
    case 'saved-work-deleted':
      update(b, e, (t) => ({ ...t, saved: (t.saved ?? []).filter((w) => w.ref !== e.ref) }));
      break;
    case 'write-rejected':
    case 'agent-state':
    case 'board-copied':
    case 'host-gone':
      break;
    case 'usage': {
      // Issue 47: priced with the Thread's prices as they are now, so a replay prices every turn as it was.
      const spent = batchSpend(e.turns, b.settings.prices);
      foldBook(b.costs, e, spent);
      if (e.taskId !== null && spent.turns > 0) update(b, e as typeof e & { taskId: string }, (t) => ({ ...t, cost: foldTaskCost(t.cost, e, spent) }));
      break;
    }
    case 'budget-set':
      if (e.taskId === null) b.settings = { ...b.settings, budget: e.budget };
      else update(b, e as typeof e & { taskId: string }, (t) => ({ ...t, budget: e.budget }));
      break;
    case 'queued':
      update(b, e, (t) => ({ ...t, queued: { rank: e.rank, by: e.by, sha: e.sha, token: e.token ?? null, at: e.at, ...(e.host ? { host: e.host } : {}), seq: e.seq, ...(e.seal ? { seal: e.seal } : {}), landing: null } }));
      break;
    case 'queue-moved':
      e.order.forEach((id, i) => {
        const t = b.tasks.get(id);
        if (!t?.queued) throw new EventMismatch(e, `${id} is not in the merge queue`);
        b.tasks.set(id, { ...t, queued: { ...t.queued, rank: i + 1 } });
      });
      break;
    case 'queue-landing':
      update(b, e, (t) => {
        if (!t.queued) throw new EventMismatch(e, `${e.taskId} is not in the merge queue`);
        // A new landing (a first try, or one after the base moved) starts with no agreement to move the base.
        return { ...t, queued: { ...t.queued, landing: { onto: e.onto, merge: e.merge }, committing: false } };
      });
      break;
    case 'queue-committed':
      update(b, e, (t) => {
        if (!t.queued) throw new EventMismatch(e, `${e.taskId} is not in the merge queue`);
        return { ...t, queued: { ...t.queued, landing: { onto: e.onto, merge: e.merge }, committing: true } };
      });
      break;
    case 'unqueued':
      update(b, e, (t) => ({ ...t, queued: null }));
      break;
  }
  b.evidence = foldEvidence(b.evidence, e, before, b.settings);
  foldUsageLedger(b.usageLedger, e);
  b.seq = e.seq;
}

/** Settings written before a field existed read as that field's default, so old journals replay as they were. */
export function withDefaults(s: Partial<ThreadSettings>): ThreadSettings {
  return { ...DEFAULT_SETTINGS, ...s };
}

function claimOf(agentId: string, token: number, deadline: number, at: number, leaseMs: number): Claim {
  return { agentId, token, deadline, grantedAt: deadline - leaseMs, grantedAtWall: at };
}

function update(b: Board, e: BoardEvent & { taskId: string }, f: (t: Task) => Task): void {
  const t = b.tasks.get(e.taskId);
  if (!t) throw new EventMismatch(e, `no task ${e.taskId}`);
  b.tasks.set(e.taskId, f(t));
}
