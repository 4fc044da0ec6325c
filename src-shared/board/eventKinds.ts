import type { BoardEventKind } from './events.js';

/**
 * Every event kind the reducer knows, at run time: a journal line of any other kind is damage (or a journal
 * from a newer Forkbench), and replaying it as a no-op would silently move the board's sequence on. The
 * `satisfies` makes the type check fail until a kind added to events.ts is listed here too (and one listed
 * here that events.ts lost).
 */
const KINDS = {
  'thread-created': true,
  'goal-set': true,
  'settings-set': true,
  'task-added': true,
  'task-edited': true,
  grant: true,
  renew: true,
  'claim-ended': true,
  reassign: true,
  note: true,
  submitted: true,
  approved: true,
  returned: true,
  blocked: true,
  unblocked: true,
  reset: true,
  'worktree-set': true,
  'worktree-removed': true,
  'branch-recorded': true,
  'write-rejected': true,
  'agent-state': true,
} as const satisfies Record<BoardEventKind, true>;

export function isEventKind(kind: unknown): kind is BoardEventKind {
  return typeof kind === 'string' && Object.hasOwn(KINDS, kind);
}
