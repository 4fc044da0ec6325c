import type { SentBack, Task } from '../../src-shared/board/model.js';
import { isLapsed } from './boardState.js';

/**
 * What a card marks beside its title and fields, decided from the task alone (so a reload shows the same).
 */

/**
 * The "lapsed" mark: only where a lapse is news a person acts on, a task back in the backlog or parked in
 * needs-attention. A task in review waits for a person, not for its agent: its lease running out there
 * changes nothing, and LAPSED would read as the agent's failure. Done and blocked tasks are past it.
 */
export function showsLapsed(task: Pick<Task, 'state' | 'claim' | 'lastClaim'>): boolean {
  return (task.state === 'open' || task.state === 'needs-attention') && isLapsed(task);
}

/** Characters of a send-back reason on a card: about two lines; the details panel has the rest. */
export const CARD_REASON_CHARS = 160;

/**
 * Why the task's work came back from review, for its card: while it is worked on again (claimed, open,
 * needs-attention). In review or done, the work it was about has been replaced or accepted. A long reason
 * (a verify's output) shows its first line, cut; the card's tooltip and the details panel hold all of it.
 */
export function sentBackOf(task: Pick<Task, 'state' | 'sentBack'>): SentBack | null {
  const s = task.sentBack;
  if (!s || task.state === 'review' || task.state === 'done' || task.state === 'blocked') return null;
  return s;
}

/** The first line of a reason, cut to `max` characters with an ellipsis. */
export function shortReason(reason: string, max = CARD_REASON_CHARS): string {
  const first = reason.split('\n', 1)[0] ?? '';
  const cut = first.length > max ? `${first.slice(0, max - 1)}…` : first;
  return cut !== reason ? (cut.endsWith('…') ? cut : `${cut} …`) : cut;
}
