import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { taskStory } from '../../../src-renderer/state/taskStory.js';

let seq = 0;
const ev = (body: Record<string, unknown>) => ({ seq: ++seq, at: 1000 * seq, mono: seq, ...body }) as unknown as BoardEvent;

describe('taskStory', () => {
  it('finds the note given with the last done, and every reject and block reason', () => {
    const events = [
      ev({ kind: 'grant', taskId: 'T-1', agentId: 'a', token: 1, deadline: 9, by: 'a' }),
      ev({ kind: 'note', taskId: 'T-1', by: 'a', text: 'halfway' }),
      ev({ kind: 'note', taskId: 'T-1', by: 'a', text: 'first try done' }),
      ev({ kind: 'submitted', taskId: 'T-1', agentId: 'a', token: 1 }),
      ev({ kind: 'returned', taskId: 'T-1', by: 'user', reason: 'tests fail', to: 'claimed' }),
      ev({ kind: 'blocked', taskId: 'T-1', by: 'user', reason: 'waiting on the API' }),
    ];
    const story = taskStory(events);
    expect(story.doneNote).toMatchObject({ by: 'a', text: 'first try done' });
    expect(story.reasons.map((r) => [r.kind, r.text])).toEqual([
      ['returned', 'tests fail'],
      ['blocked', 'waiting on the API'],
    ]);
    // a later done without a note has no done note: an older note is not it
    const again = taskStory([...events, ev({ kind: 'note', taskId: 'T-1', by: 'user', text: 'a person says' }), ev({ kind: 'submitted', taskId: 'T-1', agentId: 'a', token: 2 })]);
    expect(again.doneNote).toBeNull();
  });
});
