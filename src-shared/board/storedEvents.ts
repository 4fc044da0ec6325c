import { z } from 'zod';
import type { BoardEvent } from './events.js';
import { isEventKind } from './eventKinds.js';
import { Limits } from './limits.js';
import { leaseEnd } from './eventBounds.js';
import type { Board } from './reducer.js';
import { REJECTION_CODES } from './result.js';
import { AGENT_STATES, STATE_SOURCES } from '../agents/agentLife.js';
import { DISPATCH_MODES } from './dispatch.js';
import { HOST_GONE_HOW, SEND_BACK_CAUSES, TASK_STATES } from './model.js';
import { USAGE_SOURCES } from '../usage/usage.js';
import { PARKED_PREFIX } from '../git/taskBranch.js';
import { AfterSchema, BudgetSchema, LabelsSchema, SettingsPatchSchema, TakersSchema, TaskIdSchema } from './schemas.js';

/**
 * An event read back from where the board is kept (the journal on disk, a shared board's PostgreSQL table) is
 * input like any other: whoever can write that file or holds the database's role can put anything there, and a
 * checksum says only that the bytes are the ones written, not who wrote them. So each one is checked before the
 * host applies it, against the events' shapes (every field known, each within its limits) and against the board
 * it would change (a lease no longer than the board allows, a task added once, a fencing token above the last
 * one granted, the claim it ends or renews the one held). One that fails is not applied: the host sets it aside
 * (quarantine) and goes on, so no event, however it got there, can stop a host from opening or writing.
 */

/** Who did something: an agent's id, `user`, `forkbench`, `verify`, `dispatch`. Bounded, one line. */
const Actor = z.string().min(1).max(Limits.maxAgentIdChars).regex(/^[^\p{C}]+$/u, 'an actor is printable text');
const AgentId = Actor;
const Token = z.number().int().positive();
/** A board-clock time (ms). */
const BoardTime = z.number().finite().nonnegative();
/** Git object names: SHA-1 or SHA-256, lowercase hex. */
const Sha = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, 'not a git object name');
/** A path, branch or host name the board keeps: printable, bounded. */
const Name = (max: number) => z.string().max(max).regex(/^[^\p{C}]*$/u, 'holds control characters');
const Message = z.string().max(Limits.maxNoteChars);
/** Texts are held to their lengths only: what a person or agent may type is checked where it comes in
 *  (schemas.ts), and the host's own texts (a verify's output in a note) may hold what a terminal printed. */
const TitleSchema = z.string().min(1).max(Limits.maxTitleChars);
const BodySchema = z.string().max(Limits.maxBodyChars);
const NoteTextSchema = z.string().max(Limits.maxNoteChars);
const GoalSchema = z.string().max(Limits.maxGoalChars);
const ReasonSchema = z.string().max(Limits.maxNoteChars);
const VerifySchema = z.string().max(Limits.maxVerifyChars).nullable();

const BranchRecordSchema = z.object({ sha: Sha, tree: Sha, token: z.number().int().nonnegative(), by: Actor }).strict();
const RecordHost = z.object({ id: Name(200), name: Name(300) }).strict();
const Lost = z.object({ sha: Sha, by: Actor, host: RecordHost.nullable() }).strict();
const Worktree = z.object({ path: Name(4096), branch: Name(300), token: Token.optional(), base: Name(300), baseCommit: Sha }).strict();
const Dispatch = z.object({ mode: z.enum(DISPATCH_MODES), labels: LabelsSchema }).strict();
/** A whole Thread's settings as events carry them; fields a board from before lacks read as their defaults. */
const Settings = SettingsPatchSchema.extend({ agentDispatch: z.record(AgentId, Dispatch).optional(), budget: BudgetSchema.nullable().optional() }).strict();

/** A token count: a turn of any model today is under 10 M tokens; 1e12 leaves room and keeps sums exact. */
const Tokens = z.number().int().nonnegative().max(1e12);
/** Exported for the host's recorder, which refuses a turn the journal would not load back (usageRecorder.ts). */
export const UsageTurnSchema = z
  .object({
    id: Name(400).min(1),
    cliAt: z.number().finite().nullable(),
    model: Name(200).nullable(),
    tokens: z.object({ input: Tokens, output: Tokens, cacheRead: Tokens, cacheWrite: Tokens, reasoning: Tokens }).strict(),
    usd: z.number().finite().nonnegative().nullable(),
  })
  .strict();
export const RateLimitSchema = z.object({ window: Name(100), usedPct: z.number().finite().min(0).max(100), resetsAt: z.number().finite().nullable() }).strict();
/** A reader's mark in one record stream (usage.ts UsagePosition): a byte offset, so a whole number. */
export const UsageMarkSchema = z.object({ stream: Name(400).min(1), at: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER) }).strict();

/** A parked work's ref: under refs/forkbench/parked/, in the characters taskBranch.ts names refs with, no `..`. */
const ParkedRefSchema = Name(4096).refine((r) => r.startsWith(PARKED_PREFIX) && /^[A-Za-z0-9._/-]+$/.test(r) && !r.includes('..'), 'a saved work\'s ref is one of refs/forkbench/parked/');

const CLAIM_END_REASONS = [
  'released',
  'user-released',
  'lapsed',
  'reassigned',
  'completed',
  'no-worktree',
  'waited-too-long',
  'process-exited',
  'agent-exited',
  'pane-closed',
  'host-restarted',
  'host-stopped',
  'host-lost',
  'board-moved',
] as const;
const WRITE_OPS = ['claim', 'renew', 'note', 'done', 'release', 'edit', 'fence', 'record', 'add', 'dispatch', 'usage'] as const;

const EndedClaimSchema = z.object({ agentId: AgentId, token: Token, reason: z.enum(CLAIM_END_REASONS) }).strict();
const SentBackSchema = z.object({ by: Actor, reason: ReasonSchema, at: z.number().finite(), cause: z.enum(SEND_BACK_CAUSES).optional() }).strict();
/** A carried task's old board (`host:thread`, boardCarry.ts: a 36-character host id and a thread id of at most
 *  200, as thread-created bounds it) and id there. */
const CopiedFromSchema = z.object({ board: Name(400), taskId: TaskIdSchema }).strict();
/** Counts a board keeps per task: bounded only so a hand-written row cannot carry a number no board reaches. */
const Count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

const base = { seq: z.number().int().positive(), at: z.number().finite(), mono: BoardTime };
const ev = <K extends string, S extends z.ZodRawShape>(kind: K, shape: S) => z.object({ ...base, kind: z.literal(kind), ...shape }).strict();

const StoredEventSchema = z.discriminatedUnion('kind', [
  ev('thread-created', { threadId: Name(200), goal: GoalSchema, settings: Settings }),
  ev('goal-set', { goal: GoalSchema, by: Actor }),
  ev('settings-set', { settings: Settings, by: Actor }),
  ev('task-added', { taskId: TaskIdSchema, title: TitleSchema, body: BodySchema, verify: VerifySchema, by: Actor, after: AfterSchema.optional(), for: TakersSchema.optional() }),
  ev('task-edited', { taskId: TaskIdSchema, title: TitleSchema.optional(), body: BodySchema.optional(), verify: VerifySchema.optional(), by: Actor }),
  ev('after-set', { taskId: TaskIdSchema, after: AfterSchema, by: Actor }),
  ev('grant', { taskId: TaskIdSchema, agentId: AgentId, token: Token, deadline: BoardTime, by: Actor }),
  ev('renew', { taskId: TaskIdSchema, agentId: AgentId, token: Token, deadline: BoardTime, via: z.enum(['write', 'liveness', 'grace', 'waiting', 'outage']), quietMs: z.number().int().nonnegative().optional() }),
  ev('claim-ended', { taskId: TaskIdSchema, agentId: AgentId, token: Token, reason: z.enum(CLAIM_END_REASONS), to: z.enum(TASK_STATES) }),
  ev('reassign', {
    taskId: TaskIdSchema,
    from: z.object({ agentId: AgentId, token: Token }).strict(),
    to: z.object({ agentId: AgentId, token: Token, deadline: BoardTime }).strict(),
    by: Actor,
  }),
  ev('note', { taskId: TaskIdSchema, by: Actor, text: NoteTextSchema, wrote: z.number().finite().optional() }),
  ev('submitted', { taskId: TaskIdSchema, agentId: AgentId, token: Token, record: BranchRecordSchema.nullable().optional() }),
  ev('approved', { taskId: TaskIdSchema, by: Actor }),
  ev('returned', { taskId: TaskIdSchema, by: Actor, reason: ReasonSchema, to: z.enum(['claimed', 'open']), deadline: BoardTime.optional(), cause: z.enum(SEND_BACK_CAUSES).optional() }),
  ev('blocked', { taskId: TaskIdSchema, by: Actor, reason: ReasonSchema }),
  ev('unblocked', { taskId: TaskIdSchema, by: Actor }),
  ev('reset', { taskId: TaskIdSchema, by: Actor }),
  ev('worktree-set', { taskId: TaskIdSchema, worktree: Worktree, by: Actor }),
  ev('worktree-removed', { taskId: TaskIdSchema, by: Actor, why: z.enum(['merged', 'removed']), path: Name(4096).optional() }),
  ev('branch-recorded', { taskId: TaskIdSchema, from: Sha.nullable(), record: BranchRecordSchema, host: RecordHost.optional() }),
  ev('branch-pushed', { taskId: TaskIdSchema, record: BranchRecordSchema }),
  ev('record-rewound', { taskId: TaskIdSchema, from: Sha, to: BranchRecordSchema, lost: z.array(Lost).max(10_000), by: Actor }),
  ev('agent-state', { agentId: AgentId, state: z.enum(AGENT_STATES), source: z.enum(STATE_SOURCES), text: Message.nullable() }),
  ev('host-gone', { host: RecordHost, how: z.enum(HOST_GONE_HOW), agents: z.number().int().nonnegative(), claims: z.number().int().nonnegative() }),
  ev('write-rejected', { taskId: TaskIdSchema.nullable(), agentId: AgentId, token: Token.nullable(), op: z.enum(WRITE_OPS), code: z.enum(REJECTION_CODES), message: Message }),
  ev('queued', { taskId: TaskIdSchema, by: Actor, rank: z.number().int().positive(), sha: Sha.nullable(), token: Token.nullable().optional(), host: Name(200).optional(), seal: z.string().regex(/^[0-9a-f]{64}$/).optional() }),
  ev('queue-moved', { taskId: TaskIdSchema, order: z.array(TaskIdSchema).max(Limits.maxQueued), by: Actor }),
  ev('queue-landing', { taskId: TaskIdSchema, onto: Sha, merge: Sha.nullable() }),
  ev('queue-committed', { taskId: TaskIdSchema, onto: Sha, merge: Sha.nullable() }),
  ev('unqueued', { taskId: TaskIdSchema, by: Actor, reason: ReasonSchema, code: z.literal('unsealed').optional() }),
  ev('for-set', { taskId: TaskIdSchema, for: TakersSchema, by: Actor }),
  ev('dispatch-set', { agentId: AgentId, mode: z.enum(DISPATCH_MODES), labels: LabelsSchema, by: Actor }),
  ev('task-copied', {
    taskId: TaskIdSchema,
    from: CopiedFromSchema,
    title: TitleSchema,
    body: BodySchema,
    verify: VerifySchema,
    state: z.enum(TASK_STATES).exclude(['claimed']),
    after: AfterSchema.optional(),
    for: TakersSchema.optional(),
    blockedReason: ReasonSchema.nullable(),
    sentBack: SentBackSchema.nullable(),
    attempts: Count,
    failures: Count,
    lastClaim: EndedClaimSchema.nullable(),
    record: BranchRecordSchema.nullable(),
    submitted: BranchRecordSchema.nullable(),
    worktree: Worktree.nullable(),
    createdAt: z.number().finite(),
    by: Actor,
  }),
  ev('usage', {
    agentId: AgentId,
    profile: Name(200),
    source: z.enum(USAGE_SOURCES),
    // A batch is what one read of a CLI's records found; 10,000 turns is days of one agent's work. None: a
    // rate-limit reading alone (its CLI reported headroom between turns), which names no task (doesNotApply).
    turns: z.array(UsageTurnSchema).max(10_000),
    taskId: TaskIdSchema.nullable(),
    token: Token.nullable(),
    how: z.enum(['held', 'last-acted', 'overhead']),
    limits: z.array(RateLimitSchema).max(16).optional(),
    // One per stream the read covered: a Codex session has a file per resume; 64 is LedgerBounds.marks.
    marks: z.array(UsageMarkSchema).max(64).optional(),
  }),
  ev('budget-set', { taskId: TaskIdSchema.nullable(), budget: BudgetSchema.nullable(), by: Actor }),
  // Issue 47 item 5: a parked folder's uncommitted work saved (the folder then removed), and a saved work deleted.
  // A saved work's ref is one of refs/forkbench/parked/: a person's Delete removes it, so a ref another host (or
  // whoever can write the store) named elsewhere, refs/heads/main say, would delete that.
  ev('worktree-saved', {
    taskId: TaskIdSchema,
    saved: z
      .object({ ref: ParkedRefSchema, sha: Sha, path: Name(4096), token: Token, author: Actor, files: Count, at: z.number().finite() })
      .strict(),
    by: Actor,
  }),
  ev('saved-work-deleted', { taskId: TaskIdSchema, ref: ParkedRefSchema, by: Actor }),
  ev('board-copied', {
    // The label names a folder (a path, at most 4096 bytes on Linux) and a machine.
    from: z.object({ board: Name(400), label: Name(4096 + 300) }).strict(),
    copied: Count,
    already: Count,
    // One run per task at worst; a board's text cap (32 Mi characters) holds far fewer tasks than this.
    runs: z.array(z.tuple([Count, Count, Count])).max(1_000_000),
    by: Actor,
  }),
]);

/** Every kind of event has its stored shape here: a kind added to events.ts and not here fails typecheck, where it
 *  would otherwise set every such event aside as the store hands it back. */
type Unchecked = Exclude<BoardEvent['kind'], z.infer<typeof StoredEventSchema>['kind']>;
const everyKindChecked: [Unchecked] extends [never] ? true : Unchecked = true;
void everyKindChecked;

/** An event that may be applied, or why it may not: what a quarantine notice says. */
export type StoredEventVerdict = { readonly ok: true; readonly event: BoardEvent } | { readonly ok: false; readonly kind: string | null; readonly why: string };

/** How an hour reads in a refusal: leases are set in hours at most, so a 10-year one reads as 87,600 h. */
const hours = (ms: number) => `${Math.round(ms / 3_600_000).toLocaleString('en')} h`;

/**
 * Whether `raw` (an event as read from the store, at position `seq`) may be applied to `b`, the board as it is
 * just before that position. The event itself is returned as it was read, not as zod would rewrite it: what is
 * applied is what is stored.
 */
export function checkStoredEvent(raw: unknown, b: Readonly<Board>, seq: number): StoredEventVerdict {
  const kindOf = (raw as { kind?: unknown } | null)?.kind;
  const kind = typeof kindOf === 'string' ? kindOf.slice(0, 40) : null;
  const no = (why: string): StoredEventVerdict => ({ ok: false, kind, why });
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return no('it is not an event (not a JSON object)');
  if (!isEventKind(kindOf)) return no(kind === null ? 'it names no kind' : `"${kind}" is not a kind of event this version of Forkbench knows`);
  const parsed = StoredEventSchema.safeParse(raw);
  if (!parsed.success) return no(describeIssue(parsed.error));
  const e = raw as BoardEvent;
  if (e.seq !== seq) return no(`it says it is event #${e.seq}, but it is stored at #${seq}`);
  const why = doesNotApply(e, b);
  return why === null ? { ok: true, event: e } : no(why);
}

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'it does not have the shape of its kind';
  if (issue.code === 'unrecognized_keys') return `it has a field its kind does not (${issue.keys.map((k) => k.slice(0, 40)).join(', ')})`;
  const path = issue.path.length ? `${issue.path.join('.')}: ` : '';
  return `${path}${issue.message}`.slice(0, 300);
}

/** Why a well-formed event cannot follow board `b` (the reducer would refuse it, or it breaks a board limit), or null. */
function doesNotApply(e: BoardEvent, b: Readonly<Board>): string | null {
  if (e.kind === 'thread-created') return b.seq === 0 ? null : 'the board was created already';
  if (e.kind === 'agent-state' || e.kind === 'host-gone' || e.kind === 'write-rejected' || e.kind === 'dispatch-set' || e.kind === 'goal-set' || e.kind === 'settings-set' || e.kind === 'board-copied') return null;
  if (e.kind === 'usage' && e.turns.length === 0 && (!e.limits?.length || e.taskId !== null)) return 'a usage event without turns is a rate-limit reading, and names no task';
  if (e.kind === 'usage' || e.kind === 'budget-set') return e.taskId === null || b.tasks.has(e.taskId) ? null : `there is no task ${e.taskId}`;
  const t = b.tasks.get(e.taskId);
  if (e.kind === 'task-added' || e.kind === 'task-copied') return t ? `${e.taskId} was added already` : null;
  if (!t) return `there is no task ${e.taskId}`;
  const leaseTooLong = (deadline: number) => (leaseEnd(e.mono, deadline) < deadline ? `its lease runs ${hours(deadline - e.mono)}, past the board's longest (${hours(Limits.maxLeaseMs)})` : null);
  const tokenNotNew = (token: number) => (token < b.nextToken ? `its token ${token} is not above the last one granted (${b.nextToken - 1})` : null);
  switch (e.kind) {
    case 'grant':
      if (t.claim) return `${e.taskId} is held already (token ${t.claim.token})`;
      return tokenNotNew(e.token) ?? leaseTooLong(e.deadline);
    case 'reassign':
      if (t.claim?.token !== e.from.token || t.claim.agentId !== e.from.agentId) return `${e.taskId} is not held by ${e.from.agentId} under token ${e.from.token}`;
      return tokenNotNew(e.to.token) ?? leaseTooLong(e.to.deadline);
    case 'renew':
      if (t.claim?.token !== e.token || t.claim.agentId !== e.agentId) return `${e.taskId} is not held by ${e.agentId} under token ${e.token}`;
      return leaseTooLong(e.deadline);
    case 'returned':
      if (e.deadline === undefined) return null;
      if (e.to !== 'claimed' || !t.claim) return `a send-back to the backlog carries no lease`;
      return leaseTooLong(e.deadline);
    case 'saved-work-deleted':
      return t.saved?.some((w) => w.ref === e.ref) ? null : `${e.taskId} has no saved work ${e.ref}`;
    case 'claim-ended':
      return t.claim?.token === e.token && t.claim.agentId === e.agentId ? null : `${e.taskId} is not held by ${e.agentId} under token ${e.token}`;
    case 'approved':
      return t.claim ? `${e.taskId} is still held (token ${t.claim.token}): a claim ends before approval` : null;
    case 'queue-moved': {
      const missing = e.order.find((id) => !b.tasks.get(id)?.queued);
      return missing ? `${missing} is not in the merge queue` : null;
    }
    case 'queue-landing':
    case 'queue-committed':
      return t.queued ? null : `${e.taskId} is not in the merge queue`;
    default:
      return null;
  }
}
