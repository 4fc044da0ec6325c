import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { applyEvent, emptyBoard } from '../../../src-shared/board/reducer.js';
import { deserializeBoard, serializeBoard } from '../../../src-shared/board/serialized.js';
import { taskDetails, windowBoard, WindowBoardLimits, windowLogEvent } from '../../../src-shared/board/windowBoard.js';

let seq = 0;
const ev = (e: Record<string, unknown>) => ({ seq: ++seq, at: seq, mono: seq, ...e }) as BoardEvent;

function board() {
  seq = 0;
  const b = emptyBoard('th');
  applyEvent(b, ev({ kind: 'thread-created', threadId: 'th', goal: '', settings: b.settings }));
  applyEvent(b, ev({ kind: 'task-added', taskId: 'T-1', title: 'long', body: 'b'.repeat(10_000), verify: null, by: 'a1' }));
  applyEvent(b, ev({ kind: 'task-added', taskId: 'T-2', title: 'short', body: 'tiny', verify: null, by: 'a1' }));
  for (let i = 0; i < 5; i++) applyEvent(b, ev({ kind: 'note', taskId: 'T-1', by: 'a1', text: `note ${i} `.padEnd(1000, 'n') }));
  return b;
}

describe("a window's board", () => {
  it('carries the start of long bodies and no notes, with what it left out; short tasks as they are', () => {
    const b = board();
    const w = windowBoard(b);
    const [t1, t2] = w.tasks;
    expect(t1).toMatchObject({ id: 'T-1', body: 'b'.repeat(WindowBoardLimits.bodyPreviewChars), omitted: { bodyChars: 10_000, notes: 5 } });
    expect(t1).not.toHaveProperty('notes');
    expect(t2).toEqual(serializeBoard(b).tasks[1]);
    // The host's own snapshot file is untouched: every body and note.
    expect(serializeBoard(b).tasks[0]).toMatchObject({ body: 'b'.repeat(10_000) });
  });

  it("stays right as events arrive: an edited body is whole, new notes add to the count", () => {
    const b = board();
    const mine = deserializeBoard(windowBoard(b));
    applyEvent(mine, ev({ kind: 'note', taskId: 'T-1', by: 'a1', text: 'live' }));
    expect(mine.tasks.get('T-1')).toMatchObject({ omitted: { bodyChars: 10_000, notes: 5 }, notes: [{ text: 'live' }] });
    applyEvent(mine, ev({ kind: 'task-edited', taskId: 'T-1', body: 'whole new body', by: 'user' }));
    expect(mine.tasks.get('T-1')).toMatchObject({ body: 'whole new body', omitted: { bodyChars: 0, notes: 5 } });
  });

  it("gives a task's details, the newest notes within the budget", () => {
    const b = board();
    expect(taskDetails(b.tasks.get('T-1')!)).toMatchObject({ body: 'b'.repeat(10_000), olderNotes: 0 });
    applyEvent(b, ev({ kind: 'note', taskId: 'T-2', by: 'a1', text: 'x'.repeat(WindowBoardLimits.detailsChars - 10) }));
    applyEvent(b, ev({ kind: 'note', taskId: 'T-2', by: 'a1', text: 'newest' }));
    const d = taskDetails(b.tasks.get('T-2')!);
    expect(d.notes.map((n) => n.text.length)).toEqual([WindowBoardLimits.detailsChars - 10, 6]);
    applyEvent(b, ev({ kind: 'note', taskId: 'T-2', by: 'a1', text: 'y'.repeat(100) }));
    const e = taskDetails(b.tasks.get('T-2')!);
    expect(e.olderNotes).toBe(1);
    expect(e.notes.map((n) => n.text)).toEqual(['newest', 'y'.repeat(100)]);
  });

  it('clips bodies and notes in the log it opens with', () => {
    const e = windowLogEvent(ev({ kind: 'task-added', taskId: 'T-9', title: 't', body: 'z'.repeat(5000), verify: null, by: 'a1' }));
    expect((e as { body: string }).body).toHaveLength(WindowBoardLimits.logTextChars + 1);
    const n = windowLogEvent(ev({ kind: 'note', taskId: 'T-9', by: 'a1', text: 'short' }));
    expect((n as { text: string }).text).toBe('short');
  });
});
