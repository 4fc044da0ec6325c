import type { TaskState } from './model.js';

/**
 * A task's state as the end of a sentence that starts with its id: "T-2 is in review", "T-2 is done".
 * Messages say where a task is the way a person would ("is in review", not "is review"), in one place, so
 * every refusal that names a state reads the same. The column names stay the states' own words.
 */
const PHRASES: Record<TaskState, string> = {
  open: 'is open',
  claimed: 'is claimed',
  review: 'is in review',
  done: 'is done',
  blocked: 'is blocked',
  'needs-attention': 'is in needs-attention',
};

/** "is in review"; with `already`, "is already in review". */
export function isInState(state: TaskState, o: { already?: boolean } = {}): string {
  const phrase = PHRASES[state];
  return o.already ? phrase.replace(/^is /, 'is already ') : phrase;
}
