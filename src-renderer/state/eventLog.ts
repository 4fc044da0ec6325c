import type { BoardEvent } from '../../src-shared/board/events.js';
import type { ClaimEndReason, SendBackCause } from '../../src-shared/board/model.js';
import { SOURCE_WORDS, STATE_WORDS } from '../../src-shared/agents/agentLife.js';
import { showControls } from '../../src-shared/text/controlChars.js';
import { DISPATCH_ACTOR } from '../../src-shared/board/dispatch.js';
import { Limits } from '../../src-shared/board/limits.js';
import { runsText } from '../../src-shared/board/boardCarry.js';

/** Lines the event-log panel keeps while it follows the board: enough to scroll back through a busy minute,
 *  cheap to render. Older lines are read from the board's store on request (logHistory.ts). */
export const LOG_CAP = 500;
/** Lines the panel holds at most once older pages are loaded: ten pages, ~1 MB of text. Past it, the newest
 *  lines make room (the panel stops following and says so), so a long read back never grows without bound. */
export const LOG_HISTORY_CAP = 5000;

export interface LogEntry {
  readonly seq: number;
  /** The position of the first event this line stands for (renewals fold into one line); absent: `seq`. */
  readonly first?: number;
  /** Wall clock (event.at), display only. */
  readonly at: number;
  readonly kind: BoardEvent['kind'];
  readonly summary: string;
  /** Rejected writes: the rejection code. */
  readonly code: string | null;
  /** How many identical renewals in a row this line stands for (the liveness check renews every few seconds). */
  readonly repeat: number;
}

const REASONS: Record<ClaimEndReason, string> = {
  released: 'released it',
  'user-released': 'was released by a person',
  lapsed: 'lease lapsed',
  reassigned: 'was reassigned',
  completed: 'completed',
  'no-worktree': 'no worktree',
  'waited-too-long': 'waited too long for a person',
  'process-exited': 'process exited',
  'agent-exited': 'agent exited while the host was away',
  'pane-closed': 'pane closed',
  'host-restarted': 'host restarted',
  'host-stopped': 'host stopped',
  'host-lost': "its host was lost (stopped renewing the host's lease)",
  'board-moved': 'the Thread moved onto another board',
};

/** What the merge queue found, as the log and a card say it. */
export const CAUSE_WORDS: Record<SendBackCause, string> = { conflict: 'merge conflict', 'verify-failed': 'verify failed on its merge' };

const clip = (s: string, n = 80): string => {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
};

/** One human line per event. `name` turns an agent id into the name its tab shows. */
export function summarize(e: BoardEvent, name: (agentId: string) => string = (id) => id): string {
  switch (e.kind) {
    case 'thread-created':
      return `thread created${e.goal ? `: ${clip(e.goal)}` : ''}`;
    case 'goal-set':
      return `goal set by ${name(e.by)}: ${clip(e.goal) || '(empty)'}`;
    case 'settings-set':
      return `settings changed by ${name(e.by)}: lease ${Math.round(e.settings.leaseMs / 1000)} s${profileLeases(e.settings.leaseByProfile)}, poison limit ${e.settings.poisonLimit}, claims per agent ${e.settings.claimLimit ?? Limits.defaultClaimLimit}${e.settings.uncontained?.length ? `, no sandbox for ${e.settings.uncontained.join(', ')}` : ''}`;
    case 'task-added':
      return `${e.taskId} added by ${name(e.by)}: ${clip(e.title)}${e.after?.length ? ` (after ${e.after.join(', ')})` : ''}`;
    case 'task-edited':
      return `${e.taskId} edited by ${name(e.by)}${e.title !== undefined ? `: ${clip(e.title)}` : ''}`;
    case 'after-set':
      return e.after.length ? `${e.taskId} now waits on ${e.after.join(', ')} (set by ${name(e.by)})` : `${e.taskId} waits on nothing now (set by ${name(e.by)})`;
    case 'grant':
      if (e.by === DISPATCH_ACTOR) return `${e.taskId} dispatched to ${name(e.agentId)}, idle (token ${e.token})`;
      return e.by === e.agentId ? `${e.taskId} claimed by ${name(e.agentId)} (token ${e.token})` : `${e.taskId} assigned to ${name(e.agentId)} by ${name(e.by)} (token ${e.token})`;
    case 'renew':
      return `${e.taskId} lease renewed for ${name(e.agentId)} (${e.via})`;
    case 'claim-ended':
      return `${e.taskId}: ${name(e.agentId)}'s claim ended, ${REASONS[e.reason] ?? e.reason} → ${e.to}`;
    case 'reassign':
      return `${e.taskId} reassigned from ${name(e.from.agentId)} to ${name(e.to.agentId)} by ${name(e.by)} (token ${e.to.token})`;
    case 'note':
      return `${e.taskId} note by ${name(e.by)}: ${clip(e.text)}`;
    case 'submitted':
      return `${e.taskId} submitted for review by ${name(e.agentId)}${e.record ? ` at ${e.record.sha.slice(0, 10)}` : ''}`;
    case 'branch-recorded':
      return `${e.taskId} commit ${e.record.sha.slice(0, 10)} recorded for ${name(e.record.by)} (token ${e.record.token})`;
    case 'branch-pushed':
      return `${e.taskId} commit ${e.record.sha.slice(0, 10)} is on the remote`;
    case 'record-rewound':
      return `${e.taskId} record back to ${e.to.sha.slice(0, 10)}: lost ${e.lost.map((l) => l.sha.slice(0, 10)).join(', ') || 'nothing named'}`;
    case 'approved':
      return `${e.taskId} approved by ${name(e.by)}`;
    case 'returned':
      // The merge queue's send-backs are their own outcome (issue 44), said as such, never as a lapse.
      if (e.cause) return `${e.taskId} ${CAUSE_WORDS[e.cause]}: sent back (${e.to}): ${clip(e.reason.replace(/^Merge queue: /, ''))}`;
      return `${e.taskId} returned (${e.to}) by ${name(e.by)}: ${clip(e.reason)}`;
    case 'blocked':
      return `${e.taskId} blocked by ${name(e.by)}: ${clip(e.reason)}`;
    case 'unblocked':
      return `${e.taskId} unblocked by ${name(e.by)}`;
    case 'reset':
      return `${e.taskId} reset by ${name(e.by)}`;
    case 'worktree-set':
      return `${e.taskId} worktree ${e.worktree.branch} ready (from ${e.worktree.base})`;
    case 'worktree-removed':
      if (e.path !== undefined) return `${e.taskId} worktree ${e.path} removed by ${name(e.by)}`;
      return e.why === 'merged' ? `${e.taskId} merged into its base; worktree removed` : `${e.taskId} worktree removed by ${name(e.by)}`;
    case 'worktree-saved':
      return `${e.taskId} parked folder ${e.saved.path}: ${e.saved.files} uncommitted file${e.saved.files === 1 ? '' : 's'} by ${name(e.saved.author)} saved as ${e.saved.ref}`;
    case 'saved-work-deleted':
      return `${e.taskId} saved work ${e.ref} deleted by ${name(e.by)}`;
    case 'agent-state':
      // The text is a prompt the agent's CLI showed: its controls are shown as escapes, never acted on.
      return `${name(e.agentId)} ${STATE_WORDS[e.state]} (${SOURCE_WORDS[e.source]})${e.text ? `: ${clip(showControls(e.text, 'none'), 160)}` : ''}`;
    case 'host-gone': {
      // A host's name is another machine's word: shown, never acted on.
      const host = showControls(e.host.name, 'none');
      const ended = e.claims ? `; ${e.claims === 1 ? '1 claim' : `${e.claims} claims`} of its agents ended` : '';
      const ran = `it ran ${e.agents === 1 ? '1 agent' : `${e.agents} agents`}`;
      return e.how === 'left' ? `host ${host} left the board (${ran})${ended}` : `host ${host} was lost (it stopped renewing its lease; ${ran})${ended}`;
    }
    case 'write-rejected':
      // A refused fence is git (a hook in the task's worktree) stopping a commit or push, not a board call the
      // agent made itself: say so, or the line reads like a stray command.
      if (e.op === 'fence' || e.op === 'record') return `${name(e.agentId)}'s git commit/push${e.taskId ? ` on ${e.taskId}` : ''} refused (${e.code}): ${clip(e.message, 160)}`;
      return `${name(e.agentId)} ${e.op}${e.taskId ? ` ${e.taskId}` : ''} rejected: ${e.code}: ${clip(e.message, 160)}`;
    case 'for-set':
      return `${e.taskId} may be taken by ${e.for.length ? e.for.join(', ') : 'any agent'} (set by ${name(e.by)})`;
    case 'dispatch-set':
      return `${name(e.agentId)} dispatch ${e.mode === 'thread' ? "as the Thread's default" : e.mode}${e.labels.length ? `, labels ${e.labels.join(', ')}` : ''} (set by ${name(e.by)})`;
    case 'queued':
      return `${e.taskId} approved by ${name(e.by)}: in the merge queue${e.sha ? ` at ${e.sha.slice(0, 10)}` : ''}`;
    case 'queue-moved':
      return `merge queue reordered by ${name(e.by)}: ${e.order.join(', ')}`;
    case 'queue-landing':
      return `${e.taskId} landing: ${e.merge ? `merged onto ${e.onto.slice(0, 10)} as ${e.merge.slice(0, 10)}, verifying` : `nothing to merge onto ${e.onto.slice(0, 10)}`}`;
    case 'queue-committed':
      return `${e.taskId} landing: ${e.merge ? `moving the base to ${e.merge.slice(0, 10)}` : 'nothing to merge'}`;
    case 'unqueued':
      return `${e.taskId} taken out of the merge queue by ${name(e.by)}: ${clip(e.reason)}`;
    case 'task-copied':
      return `${e.taskId} carried from another board, where it was ${e.from.taskId} (${e.state}): ${clip(e.title)}`;
    case 'board-copied':
      return `${e.copied} task${e.copied === 1 ? '' : 's'} carried from ${clip(e.from.label, 160)}${e.already ? ` (${e.already} carried before, not again)` : ''}${e.runs.length ? `: ${clip(runsText(e.runs), 240)}` : ''}`;
    case 'usage': {
      const tokens = e.turns.reduce((n, t) => n + t.tokens.input + t.tokens.output + t.tokens.cacheRead + t.tokens.cacheWrite, 0);
      const to = e.taskId === null ? "as the agent's own overhead" : `to ${e.taskId}${e.how === 'last-acted' ? ' (the task it last acted on)' : ''}`;
      return `${name(e.agentId)} spent ${tokens.toLocaleString('en')} tokens in ${e.turns.length} turn${e.turns.length === 1 ? '' : 's'}, counted ${to}`;
    }
    case 'budget-set': {
      const of = e.taskId === null ? "the Thread's budget" : `${e.taskId}'s budget`;
      return e.budget === null ? `${of} was removed` : `${of} was set to ${e.budget.unit === 'usd' ? `$${e.budget.limit}` : `${e.budget.limit.toLocaleString('en')} tokens`}`;
    }
  }
}

export function toLogEntry(e: BoardEvent, name?: (agentId: string) => string): LogEntry {
  return { seq: e.seq, at: e.at, kind: e.kind, summary: summarize(e, name), code: e.kind === 'write-rejected' ? e.code : null, repeat: 1 };
}

/** Append and keep only the newest LOG_CAP lines. Returns a new array (the store is immutable). */
export function appendLog(log: readonly LogEntry[], entries: readonly LogEntry[], cap = LOG_CAP): LogEntry[] {
  if (entries.length === 0) return log as LogEntry[];
  const all = [...log];
  for (const e of entries) {
    const last = all[all.length - 1];
    // Renewals of one claim by the same route fold into one line with a count, so they cannot push the
    // lines that matter (lapses, rejections) out of the panel.
    if (last && e.kind === 'renew' && last.kind === 'renew' && last.summary === e.summary) all[all.length - 1] = { ...e, first: firstOf(last), repeat: last.repeat + e.repeat };
    else all.push(e);
  }
  return all.length > cap ? all.slice(-cap) : all;
}

/** The position of the first event a line stands for. */
export const firstOf = (e: LogEntry): number => e.first ?? e.seq;

/**
 * Lines read from the board's history (newest first, as a page comes) put before the lines held. Lines at or
 * after the first held are dropped (a page may overlap what live events brought). A page that does not reach
 * the held lines (they moved on while it was read: a gap) changes nothing, and the caller reads again. Over
 * `cap`, the newest lines make room: `droppedNewest` says the panel no longer ends at the board's head.
 */
export function prependLog(log: readonly LogEntry[], olderNewestFirst: readonly LogEntry[], cap = LOG_HISTORY_CAP): { lines: readonly LogEntry[]; droppedNewest: boolean } {
  const start = log.length ? firstOf(log[0] as LogEntry) : Infinity;
  const older = olderNewestFirst.filter((e) => e.seq < start).reverse();
  const newestOlder = older.at(-1);
  if (!newestOlder) return { lines: log, droppedNewest: false };
  if (log.length && newestOlder.seq + 1 < start) return { lines: log, droppedNewest: false };
  const all = appendLog(appendLog([], older, Infinity), log, Infinity);
  return all.length > cap ? { lines: all.slice(0, cap), droppedNewest: true } : { lines: all, droppedNewest: false };
}

/** Two runs of lines as one, in the board's order, each event once: the panel's lines and a task's page. */
export function mergeLines(a: readonly LogEntry[], b: readonly LogEntry[]): readonly LogEntry[] {
  if (!b.length) return a;
  if (!a.length) return b;
  const bySeq = new Map<number, LogEntry>();
  for (const e of b) bySeq.set(e.seq, e);
  for (const e of a) bySeq.set(e.seq, e);
  return [...bySeq.values()].sort((x, y) => x.seq - y.seq);
}

/** A word of a filter that is a task id (`t-2`, `T-2`): it matches that id whole, never T-20 or T-2000. */
const TASK_WORD = /^t-\d{1,9}$/;
/** Task ids as a line's text spells them: `T-` and every digit that follows, so `T-20` is never read as T-2. */
const TASK_IN_TEXT = /(?<![\w-])t-\d+/g;

export interface LogQuery {
  /** Task ids the filter names, as the board spells them (T-2). */
  readonly taskIds: readonly string[];
  /** Every word of the filter, lower-cased. */
  readonly words: readonly string[];
}

export function parseLogQuery(query: string): LogQuery {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return { words, taskIds: words.filter((w) => TASK_WORD.test(w)).map((w) => `T-${w.slice(2)}`) };
}

/**
 * The lines the event-log panel shows: renewals only when asked for, and only lines holding every word of
 * `query` (case aside), so `T-3 rejected` finds T-3's refused writes. A word that is a task id matches a
 * whole id in the line (`T-2` is not T-20 or T-2000); any other word matches anywhere in it.
 */
export function filterLog(log: readonly LogEntry[], o: { renewals: boolean; query: string }): readonly LogEntry[] {
  const { words } = parseLogQuery(o.query);
  if (o.renewals && words.length === 0) return log;
  return log.filter((e) => {
    if (!o.renewals && e.kind === 'renew') return false;
    if (words.length === 0) return true;
    const text = `${e.kind} ${e.summary} ${e.code ?? ''}`.toLowerCase();
    let ids: Set<string> | null = null;
    return words.every((w) => {
      if (!TASK_WORD.test(w)) return text.includes(w);
      ids ??= new Set(text.match(TASK_IN_TEXT));
      return ids.has(w);
    });
  });
}

/** The profiles' own leases in a settings line (` (codex 180 s)`), so the log says who set which; none: ''. */
function profileLeases(by: Readonly<Record<string, number>> | undefined): string {
  const set = Object.entries(by ?? {});
  return set.length ? ` (${set.map(([p, ms]) => `${p} ${Math.round(ms / 1000)} s`).join(', ')})` : '';
}
