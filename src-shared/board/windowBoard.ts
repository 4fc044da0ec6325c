import type { BoardEvent } from './events.js';
import type { Note, Task } from './model.js';
import type { Board } from './reducer.js';
import { compactTask, type CompactTask, type SerializedBoard } from './serialized.js';
import { copyBook } from '../usage/costFold.js';

/**
 * The board as a window's snapshot carries it: every task's title, state, claim and counts, but only the
 * start of its body and none of its notes. A window draws cards from this and asks for one task's body and
 * notes when a person opens it (`task.details`). A snapshot that carried every body and note grew with
 * everything ever written (a flood of 14k tasks of 64 KiB made one string longer than V8 allows, and the
 * window never opened); this one grows with the number of tasks only.
 */
export const WindowBoardLimits = {
  /** A card shows three lines of the body at most, about 70 characters each at its usual width: 200
   *  characters fill them, and 10k tasks' previews stay under 2 MB of the snapshot. */
  bodyPreviewChars: 200,
  /** The event-log panel shows one line per event; 400 characters of a note or body is more than it shows. */
  logTextChars: 400,
  /** A task's details answer: its newest notes up to this many characters (and the body, at most 64 KiB).
   *  2 Mi characters is a long read for a person, and a few MB on the wire. */
  detailsChars: 2 * 1024 * 1024,
} as const;

/** One task as a window's snapshot carries it. */
export function windowTask(t: Task): CompactTask {
  const c = compactTask(t);
  const cut = t.body.length > WindowBoardLimits.bodyPreviewChars;
  if (!cut && t.notes.length === 0) return c;
  const out: CompactTask = { ...c, omitted: { bodyChars: cut ? t.body.length : 0, notes: t.notes.length } };
  delete (out as { notes?: unknown }).notes;
  if (cut) (out as { body: string }).body = t.body.slice(0, WindowBoardLimits.bodyPreviewChars);
  return out;
}

/** Like serializedBoard's cache: the reducer never changes a task in place, so an entry never goes stale
 *  and a window's snapshot re-shapes only the tasks that changed since the last one. */
const shaped = new WeakMap<Task, CompactTask>();

/** A board as a window's snapshot carries it (serializedBoardJson turns it into text as it does any). */
export function windowBoard(b: Readonly<Board>): SerializedBoard {
  const tasks: CompactTask[] = [];
  for (const t of b.tasks.values()) {
    let c = shaped.get(t);
    if (c === undefined) shaped.set(t, (c = windowTask(t)));
    tasks.push(c);
  }
  return { threadId: b.threadId, goal: b.goal, settings: b.settings, tasks, nextToken: b.nextToken, nextTaskNumber: b.nextTaskNumber, seq: b.seq, evidence: b.evidence, costs: copyBook(b.costs) };
}

const clip = (s: string) => (s.length > WindowBoardLimits.logTextChars ? `${s.slice(0, WindowBoardLimits.logTextChars)}…` : s);

/** An event as the log panel of a window's snapshot carries it: bodies and notes cut to a line's worth. */
export function windowLogEvent(e: BoardEvent): BoardEvent {
  switch (e.kind) {
    case 'task-added':
    case 'task-copied':
      return e.body.length > WindowBoardLimits.logTextChars ? { ...e, body: clip(e.body) } : e;
    case 'task-edited':
      return e.body !== undefined && e.body.length > WindowBoardLimits.logTextChars ? { ...e, body: clip(e.body) } : e;
    case 'note':
      return e.text.length > WindowBoardLimits.logTextChars ? { ...e, text: clip(e.text) } : e;
    default:
      return e;
  }
}

/** What a window gets when a person opens a task: its whole body and its newest notes. */
export interface TaskDetails {
  readonly taskId: string;
  readonly body: string;
  /** Oldest first, the newest that fit WindowBoardLimits.detailsChars. */
  readonly notes: readonly Note[];
  /** Notes older than those, left out. */
  readonly olderNotes: number;
}

export function taskDetails(t: Task): TaskDetails {
  let budget = WindowBoardLimits.detailsChars;
  let first = t.notes.length;
  while (first > 0) {
    const n = (t.notes[first - 1] as Note).text.length;
    if (n > budget && first < t.notes.length) break;
    budget -= n;
    first--;
  }
  return { taskId: t.id, body: t.body, notes: t.notes.slice(first), olderNotes: first };
}
