import type { BoardEvent } from '../../src-shared/board/events.js';

/** A note as the details panel shows it: who, when, what. */
export interface StoryNote {
  readonly by: string;
  readonly text: string;
  readonly at: number;
}

/** A person's reason for sending work back or stopping it. */
export interface StoryReason extends StoryNote {
  readonly kind: 'returned' | 'blocked';
}

/** What a task's history (`task.history`) says beyond the task itself. */
export interface TaskStory {
  /** The note the agent gave with its last `done` (`forkbench done --note`), or null if it gave none. */
  readonly doneNote: StoryNote | null;
  /** Every reject and block reason, oldest first: the task only keeps the current block. */
  readonly reasons: readonly StoryReason[];
}

/**
 * Read a task's events for what the task object does not keep. `done --note` is journaled as a note by the
 * holder right before its `submitted` event (LeaseEngine.done), so the done note is that note.
 */
export function taskStory(events: readonly BoardEvent[]): TaskStory {
  let doneNote: StoryNote | null = null;
  const reasons: StoryReason[] = [];
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as BoardEvent;
    if (e.kind === 'submitted') {
      const before = events[i - 1];
      doneNote = before?.kind === 'note' && before.by === e.agentId && before.seq === e.seq - 1 ? { by: before.by, text: before.text, at: before.at } : null;
    } else if (e.kind === 'returned' || e.kind === 'blocked') {
      reasons.push({ kind: e.kind, by: e.by, text: e.reason, at: e.at });
    }
  }
  return { doneNote, reasons };
}
