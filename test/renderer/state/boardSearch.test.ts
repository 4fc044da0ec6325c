import { describe, expect, it } from 'vitest';
import { matchTasks } from '../../../src-renderer/state/boardSearch.js';
import { applyEvent, emptyBoard } from '../../../src-shared/board/reducer.js';

describe('board search', () => {
  const board = emptyBoard('t');
  for (const [id, title] of [
    ['T-120', 'Parser for T-12 follow-ups'],
    ['T-12', 'Write the parser'],
    ['T-1200', 'Parser tests'],
  ])
    applyEvent(board, { kind: 'task-added', at: 0, taskId: id, title, body: '', verify: null, by: 'you' } as never);
  const ids = ['T-120', 'T-12', 'T-1200'];

  it('puts the task whose id the query is first, then the other matches in their order (issue 44)', () => {
    expect(matchTasks(ids, board, {}, 't-12')).toEqual(['T-12', 'T-120', 'T-1200']);
    expect(matchTasks(ids, board, {}, ' T-12 ')).toEqual(['T-12', 'T-120', 'T-1200']);
  });

  it('keeps the column order when no id is named, and every word must match', () => {
    expect(matchTasks(ids, board, {}, 'parser')).toEqual(ids);
    expect(matchTasks(ids, board, {}, 'parser tests')).toEqual(['T-1200']);
  });
});
