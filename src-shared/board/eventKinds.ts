import type { BoardEventKind } from './events.js';

/**
 * Every event kind the reducer knows, at run time: a journal line of any other kind is damage (or a journal
 * from a newer Forkbench), and replaying it as a no-op would silently move the board's sequence on. The
 * `satisfies` makes the type check fail until a kind added to events.ts is listed here too (and one listed
 * here that events.ts lost). Each kind's value says whether it can change which agent holds a task: after
 * those the host sends the windows its agent list again, whose claims are the only ones the tabs draw.
 */
const KINDS = {
  'thread-created': false,
  'goal-set': false,
  'settings-set': false,
  'task-added': false,
  'task-edited': false,
  'after-set': false,
  grant: true,
  renew: false,
  'claim-ended': true,
  reassign: true,
  note: false,
  submitted: false,
  approved: false,
  returned: true,
  blocked: false,
  unblocked: false,
  reset: false,
  'worktree-set': false,
  'worktree-removed': false,
  'branch-recorded': false,
  'branch-pushed': false,
  'record-rewound': false,
  'write-rejected': false,
  'agent-state': false,
  'host-gone': false,
  'for-set': false,
  'dispatch-set': false,
  queued: false,
  'queue-moved': false,
  'queue-landing': false,
  'queue-committed': false,
  unqueued: false,
  'task-copied': false,
  'board-copied': false,
  usage: false,
  'budget-set': false,
  'worktree-saved': false,
  'saved-work-deleted': false,
} as const satisfies Record<BoardEventKind, boolean>;

export function isEventKind(kind: unknown): kind is BoardEventKind {
  return typeof kind === 'string' && Object.hasOwn(KINDS, kind);
}

/** Whether an event of this kind can move a task to another holder or to none (grant, claim end, reassign, a
 *  review returned to the backlog). Every other kind leaves each agent's claims as they were. */
export function changesHolder(kind: BoardEventKind): boolean {
  return KINDS[kind];
}
