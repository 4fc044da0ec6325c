import type { BoardEvent } from './events.js';

/**
 * A page of a board's history as its store reads it back (BoardService.history): the event-log panel opens
 * with the newest few hundred events and asks for older ones a page at a time, so a long day's history is
 * reachable without a window ever holding all of it.
 */

export const EventPageLimits = {
  /** Events one page carries at most: the panel's own line budget (LOG_CAP), so one page refills it, and
   *  500 events clipped for a window (windowLogEvent) stay a few hundred KB on the wire. */
  maxEvents: 500,
} as const;

export interface EventPageQuery {
  /** Only events at positions below this one (the oldest the window holds); absent: from the newest. */
  readonly before?: number;
  /** At most this many (1…EventPageLimits.maxEvents). */
  readonly limit: number;
  /** Only the events about this task (a task id, exactly: T-2 is not T-20). */
  readonly taskId?: string;
}

/** Where the store's kept history begins: its oldest event's position and wall time. */
export interface KeptFrom {
  readonly seq: number;
  readonly at: number;
}

export interface EventPage {
  /** Newest first: each position below `before`, at most `limit` of them. */
  readonly events: BoardEvent[];
  /** The board's latest position: how many events it has had in all. */
  readonly head: number;
  /** The oldest event the store still keeps. 1 unless older ones were removed (a journal keeps the newest
   *  HISTORY_KEEP_BYTES of its history: journalFiles.ts); null for a store that keeps none yet. */
  readonly keptFrom: KeptFrom | null;
}
