import type { BoardEvent } from '../../src-shared/board/events.js';
import type { ClaimEndReason } from '../../src-shared/board/model.js';
import { SOURCE_WORDS, STATE_WORDS } from '../../src-shared/agents/agentState.js';
import { showControls } from '../../src-shared/text/controlChars.js';

/** Lines the event-log panel keeps: enough to scroll back through a busy minute, cheap to render. */
export const LOG_CAP = 500;

export interface LogEntry {
  readonly seq: number;
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
};

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
      return `settings changed by ${name(e.by)}: lease ${Math.round(e.settings.leaseMs / 1000)} s, poison limit ${e.settings.poisonLimit}`;
    case 'task-added':
      return `${e.taskId} added by ${name(e.by)}: ${clip(e.title)}`;
    case 'task-edited':
      return `${e.taskId} edited by ${name(e.by)}${e.title !== undefined ? `: ${clip(e.title)}` : ''}`;
    case 'grant':
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
    case 'approved':
      return `${e.taskId} approved by ${name(e.by)}`;
    case 'returned':
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
    case 'agent-state':
      // The text is a prompt the agent's CLI showed: its controls are shown as escapes, never acted on.
      return `${name(e.agentId)} ${STATE_WORDS[e.state]} (${SOURCE_WORDS[e.source]})${e.text ? `: ${clip(showControls(e.text, 'none'), 160)}` : ''}`;
    case 'write-rejected':
      // A refused fence is git (a hook in the task's worktree) stopping a commit or push, not a board call the
      // agent made itself: say so, or the line reads like a stray command.
      if (e.op === 'fence' || e.op === 'record') return `${name(e.agentId)}'s git commit/push${e.taskId ? ` on ${e.taskId}` : ''} refused (${e.code}): ${clip(e.message, 160)}`;
      return `${name(e.agentId)} ${e.op}${e.taskId ? ` ${e.taskId}` : ''} rejected: ${e.code}: ${clip(e.message, 160)}`;
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
    if (last && e.kind === 'renew' && last.kind === 'renew' && last.summary === e.summary) all[all.length - 1] = { ...e, repeat: last.repeat + 1 };
    else all.push(e);
  }
  return all.length > cap ? all.slice(-cap) : all;
}

/**
 * The lines the event-log panel shows: renewals only when asked for, and only lines whose kind or text
 * holds every word of `query` (case aside), so `T-3 rejected` finds T-3's refused writes.
 */
export function filterLog(log: readonly LogEntry[], o: { renewals: boolean; query: string }): readonly LogEntry[] {
  const words = o.query.toLowerCase().split(/\s+/).filter(Boolean);
  if (o.renewals && words.length === 0) return log;
  return log.filter((e) => {
    if (!o.renewals && e.kind === 'renew') return false;
    if (words.length === 0) return true;
    const text = `${e.kind} ${e.summary} ${e.code ?? ''}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
}
