import type { BoardEvent } from '../../src-shared/board/events.js';
import type { Task } from '../../src-shared/board/model.js';
import type { Board } from '../../src-shared/board/reducer.js';

/**
 * How much text a board holds, in UTF-16 units (what String#length counts and what the schemas limit): the
 * goal and each task's title, body, verify command and notes, the parts anyone can make large. Reasons
 * (blocked, sent back) are left out: only the person and the host write them, each one replaces the last,
 * and their schema keeps them short.
 */
export function taskTextChars(t: Task): number {
  let n = t.title.length + t.body.length + (t.verify?.length ?? 0);
  for (const note of t.notes) n += note.text.length;
  return n;
}

export function boardTextChars(b: Readonly<Board>): number {
  let n = b.goal.length;
  for (const t of b.tasks.values()) n += taskTextChars(t);
  return n;
}

/** What `e` changes the board's text by, read before it is applied (`before`: its task as it was). O(1):
 *  an event is checked against the cap before it is made, and counted as it is applied, on every write. */
export function textDelta(e: BoardEvent, board: Readonly<Board>, before: Task | undefined): number {
  switch (e.kind) {
    case 'thread-created':
      return e.goal.length;
    case 'goal-set':
      return e.goal.length - board.goal.length;
    case 'task-added':
    case 'task-copied':
      return e.title.length + e.body.length + (e.verify?.length ?? 0);
    case 'task-edited': {
      let d = 0;
      if (e.title !== undefined) d += e.title.length - (before?.title.length ?? 0);
      if (e.body !== undefined) d += e.body.length - (before?.body.length ?? 0);
      if (e.verify !== undefined) d += (e.verify?.length ?? 0) - (before?.verify?.length ?? 0);
      return d;
    }
    case 'note':
      return e.text.length;
    default:
      return 0;
  }
}
