import { describe, expect, it } from 'vitest';
import { Limits } from '../../../src-shared/board/limits.js';
import { USER } from '../../../src-shared/board/model.js';
import { boardFromSnapshot, applyLiveEvent } from '../../../src-renderer/state/boardState.js';
import { sentBackOf, shortReason, showsLapsed, CARD_REASON_CHARS } from '../../../src-renderer/state/cardMarks.js';
import { engineWith, snapshotOf } from '../../helpers/renderer.js';

/**
 * Issue 20: a task waiting for a person in review never shows LAPSED, and a card says why its work was sent
 * back. The board is a real lease engine's; the window's copy is built from its snapshot and live events.
 */
function windowCopy(tasks: string[]) {
  const { engine, events, clock } = engineWith(tasks);
  const board = boardFromSnapshot(snapshotOf(engine).board);
  events.length = 0;
  const sync = () => {
    for (const e of events.splice(0)) expect(applyLiveEvent(board, e)).toBe('applied');
  };
  const task = (id: string) => board.tasks.get(id)!;
  return { engine, clock, board, sync, task };
}

describe('the lapsed mark on a card', () => {
  it('never shows on a task in review, even when its lease ran out while it waited for a person', () => {
    const { engine, clock, sync, task } = windowCopy(['a']);
    const c = engine.claim('a1', 'T-1');
    if (!c.ok) throw new Error(c.error.message);
    engine.done('a1', 'T-1', c.value.token);
    clock.advance(Limits.defaultLeaseMs);
    engine.sweep();
    sync();
    // review is the person's time (issue 44): the claim is held, nothing lapsed
    expect(task('T-1')).toMatchObject({ state: 'review', claim: { agentId: 'a1' } });
    expect(showsLapsed(task('T-1'))).toBe(false);
    // and after a reload, built from the snapshot alone
    expect(showsLapsed(boardFromSnapshot(snapshotOf(engine).board).tasks.get('T-1')!)).toBe(false);
    // a board from before, whose claim did lapse under the review, shows no mark either
    expect(showsLapsed({ ...task('T-1'), claim: null, lastClaim: { agentId: 'a1', token: c.value.token, reason: 'lapsed' } })).toBe(false);
  });

  it('shows on a task back in the backlog or in needs-attention after a lapse', () => {
    const { engine, clock, sync, task } = windowCopy(['a', 'b']);
    engine.setSettings({ poisonLimit: 1 });
    engine.claim('a1', 'T-1');
    clock.advance(Limits.defaultLeaseMs);
    engine.sweep();
    sync();
    expect(task('T-1').state).toBe('needs-attention');
    expect(showsLapsed(task('T-1'))).toBe(true);
    engine.reset('T-1');
    sync();
    expect(task('T-1').state).toBe('open');
    expect(showsLapsed(task('T-1'))).toBe(true);
    // blocked, it is a person's decision now, not the lapse
    engine.block('T-1', 'waiting on the API');
    sync();
    expect(showsLapsed(task('T-1'))).toBe(false);
  });
});

describe('the reason a card was sent back', () => {
  it('is on the card while the work is redone, and goes when it is submitted again', () => {
    const { engine, sync, task } = windowCopy(['a']);
    const c = engine.claim('a1', 'T-1');
    if (!c.ok) throw new Error(c.error.message);
    engine.done('a1', 'T-1', c.value.token);
    sync();
    expect(sentBackOf(task('T-1'))).toBeNull();
    engine.rejectReview('T-1', 'the tests do not cover empty files');
    sync();
    expect(task('T-1').state).toBe('claimed');
    expect(sentBackOf(task('T-1'))).toMatchObject({ by: USER, reason: 'the tests do not cover empty files' });
    // it outlives the claim: the next one to take the task sees it too
    engine.userRelease('T-1');
    sync();
    expect(task('T-1').state).toBe('open');
    expect(sentBackOf(task('T-1'))?.reason).toBe('the tests do not cover empty files');
    // a reload shows the same
    expect(sentBackOf(boardFromSnapshot(snapshotOf(engine).board).tasks.get('T-1')!)?.reason).toBe('the tests do not cover empty files');
    const again = engine.claim('a2', 'T-1');
    if (!again.ok) throw new Error(again.error.message);
    engine.done('a2', 'T-1', again.value.token);
    sync();
    expect(task('T-1').state).toBe('review');
    expect(sentBackOf(task('T-1'))).toBeNull();
    expect(task('T-1').sentBack).toBeNull();
  });

  it('a failed verify is named as the one who sent it back; a long reason is cut to its first line', () => {
    const { engine, sync, task } = windowCopy(['a']);
    const c = engine.claim('a1', 'T-1');
    if (!c.ok) throw new Error(c.error.message);
    engine.done('a1', 'T-1', c.value.token);
    const output = `npm test failed (exit 1)\n${'x'.repeat(500)}`;
    engine.rejectReview('T-1', output, 'verify');
    sync();
    expect(sentBackOf(task('T-1'))).toMatchObject({ by: 'verify', reason: output });
    expect(shortReason(output)).toBe('npm test failed (exit 1) …');
    const long = 'y'.repeat(CARD_REASON_CHARS + 40);
    expect(shortReason(long)).toHaveLength(CARD_REASON_CHARS);
    expect(shortReason(long).endsWith('…')).toBe(true);
    expect(shortReason('short')).toBe('short');
  });
});
