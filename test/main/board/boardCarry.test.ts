/**
 * Issue 45, item 1: the copy of a local board as the engine decides it (boardCarry.ts), on two engines standing
 * for the local and the shared board. What a second copy carries after the local board grew (only the new task,
 * waiting on the copy of the old one), a task that waits on a later one (carried after it, ready only once it is
 * done), an approval waiting in the merge queue (not carried: a note says so), the board's text cap (a copy that
 * would pass it is refused whole), and the events read back through the stored-event check and the reducer.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';
import { QUEUE_NOT_CARRIED, type CarrySource } from '../../../src-shared/board/boardCarry.js';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { BoardLimits } from '../../../src-shared/board/limits.js';
import { applyEvent, emptyBoard } from '../../../src-shared/board/reducer.js';
import { checkStoredEvent } from '../../../src-shared/board/storedEvents.js';

function engines() {
  const local = new LeaseEngine(new ManualClock());
  local.createThread('local-thread', 'local goal');
  const shared = new LeaseEngine(new ManualClock());
  shared.createThread('shared-thread', '');
  const made: BoardEvent[] = [];
  shared.onEvent((e) => made.push(e));
  const src = (): CarrySource => ({ board: local.state, id: 'host-1:local-thread', label: 'the local board' });
  return { local, shared, made, src };
}

describe('the copy as the engine decides it', () => {
  it('a second copy after the local board grew carries only the new task, its dependency on an earlier copy mapped', () => {
    const { local, shared, src } = engines();
    local.addTask({ title: 'one' });
    shared.addTask({ title: 'theirs' });
    const first = shared.carryIn(src());
    expect(first.ok && first.value.copied).toEqual([['T-1', 'T-2']]);
    local.addTask({ title: 'two' }, 'user', ['T-1']);
    const second = shared.carryIn(src());
    expect(second.ok && second.value).toMatchObject({ copied: [['T-2', 'T-3']], already: [['T-1', 'T-2']] });
    expect(shared.state.tasks.get('T-3')).toMatchObject({ title: 'two', after: ['T-2'], copiedFrom: { board: 'host-1:local-thread', taskId: 'T-2' } });
    expect(shared.state.tasks.size).toBe(3);
  });

  it('a task that waits on a later one arrives after it and is ready only once it is done; a queued approval is noted, not carried', () => {
    const { local, shared, made, src } = engines();
    local.addTask({ title: 'first, waits on the third' });
    local.addTask({ title: 'in review, approved' });
    local.addTask({ title: 'the third' });
    local.editTask('T-1', {}, 'user', ['T-3']);
    local.assign('T-2', 'agent-x');
    local.done('agent-x', 'T-2');
    expect(local.enqueue('T-2', 'user', () => 'f'.repeat(64)).ok).toBe(true);
    const r = shared.carryIn(src());
    expect(r.ok).toBe(true);
    const order = made.filter((e) => e.kind === 'task-copied').map((e) => (e as { taskId: string }).taskId);
    expect(order.indexOf('T-3')).toBeLessThan(order.indexOf('T-1'));
    expect(shared.claim('agent-y')).toMatchObject({ ok: true, value: { taskId: 'T-3' } });
    expect(shared.state.tasks.get('T-2')).toMatchObject({ state: 'review', queued: null, lastClaim: { agentId: 'agent-x', reason: 'board-moved' } });
    expect(shared.state.tasks.get('T-2')!.notes.map((n) => n.text)).toEqual([QUEUE_NOT_CARRIED]);

    // What was written reads back as stored events, and replays to the same board.
    const replayed = emptyBoard();
    for (const e of made) {
      const v = checkStoredEvent(JSON.parse(JSON.stringify(e)), replayed, e.seq);
      expect(v.ok ? 'ok' : v.why).toBe('ok');
      applyEvent(replayed, e);
    }
  });

  it('a copy that would pass the board’s text cap is refused whole: nothing of it is written', () => {
    const { local, shared, made, src } = engines();
    const big = 'x'.repeat(60 * 1024);
    // The local board filled to its cap (32 Mi characters), and the shared board holding text of its own.
    for (let i = 0; local.addTask({ title: `t${i}`, body: big }).ok; i++);
    expect(local.textChars).toBeGreaterThan(BoardLimits.maxTextChars - 2 * big.length);
    for (let i = 0; i < 3; i++) shared.addTask({ title: `theirs ${i}`, body: big });
    const before = made.length;
    const r = shared.carryIn(src());
    expect(r.ok ? 'copied' : r.error.code).toBe('board-full');
    expect(made.length).toBe(before);
    expect(shared.state.tasks.size).toBe(3);
  });
});
