import { describe, expect, it } from 'vitest';
import { Limits } from '../../../src-shared/board/limits.js';
import {
  applyLiveEvent,
  boardFromSnapshot,
  computeColumns,
  describeExit,
  isLapsed,
  isWarning,
  nearestDeadline,
  nearestDeadlineOf,
  newlyExited,
} from '../../../src-renderer/state/boardState.js';
import { agent, engineWith, snapshotOf } from '../../helpers/renderer.js';

describe('the renderer copy of the board', () => {
  it('snapshot + live events give the same columns as the host', () => {
    const { engine, events, clock } = engineWith(['parse', 'test', 'docs', 'ship']);
    const snap = snapshotOf(engine);
    const board = boardFromSnapshot(snap.board);
    events.length = 0;
    engine.claim('a1', 'T-1');
    engine.claim('a2', 'T-2');
    engine.done('a2', 'T-2');
    engine.block('T-3', 'waiting on review');
    clock.advance(1);
    for (const e of events) expect(applyLiveEvent(board, e)).toBe('applied');
    const cols = computeColumns(board);
    expect(cols.open).toEqual(['T-4']);
    expect(cols.claimed).toEqual(['T-1']);
    expect(cols.review).toEqual(['T-2']);
    expect(cols.blocked).toEqual(['T-3']);
    expect(cols.done).toEqual([]);
    expect(board.seq).toBe(engine.state.seq);
    expect(board.tasks.get('T-1')?.claim).toEqual(engine.task('T-1')?.claim);
  });

  it('orders a column by task number, not by string (T-10 after T-9)', () => {
    const { engine } = engineWith(Array.from({ length: 11 }, (_, i) => `task ${i + 1}`));
    const cols = computeColumns(boardFromSnapshot(snapshotOf(engine).board));
    expect(cols.open.slice(-3)).toEqual(['T-9', 'T-10', 'T-11']);
  });

  it('keeps the array of a column that did not change, so its component does not re-render', () => {
    const { engine, events } = engineWith(['a', 'b']);
    const board = boardFromSnapshot(snapshotOf(engine).board);
    const before = computeColumns(board);
    events.length = 0;
    engine.block('T-2', 'why not');
    for (const e of events) applyLiveEvent(board, e);
    const after = computeColumns(board, before);
    expect(after.claimed).toBe(before.claimed);
    expect(after.done).toBe(before.done);
    expect(after.open).not.toBe(before.open);
    expect(after.blocked).toEqual(['T-2']);
  });

  it('ignores a duplicate, and reports a gap or an event that does not fit', () => {
    const { engine, events } = engineWith(['a']);
    const board = boardFromSnapshot(snapshotOf(engine).board);
    events.length = 0;
    engine.claim('a1', 'T-1');
    engine.note('a1', 'T-1', 'hi');
    const [grant, note] = events;
    expect(applyLiveEvent(board, note!)).toBe('gap');
    expect(applyLiveEvent(board, grant!)).toBe('applied');
    expect(applyLiveEvent(board, grant!)).toBe('duplicate');
    // An event for a task this copy does not have: the copy diverged.
    const bogus = { ...note!, seq: board.seq + 1, taskId: 'T-99' };
    expect(applyLiveEvent(board, bogus)).toBe('mismatch');
  });
});

describe('the lapsed mark', () => {
  it('appears when a lease runs out and stays until the task is claimed again', () => {
    const { engine, events, clock } = engineWith(['a']);
    const board = boardFromSnapshot(snapshotOf(engine).board);
    events.length = 0;
    engine.claim('a1', 'T-1');
    clock.advance(Limits.defaultLeaseMs);
    engine.sweep();
    for (const e of events.splice(0)) applyLiveEvent(board, e);
    const t = board.tasks.get('T-1')!;
    expect(t.state).toBe('open');
    expect(isLapsed(t)).toBe(true);
    expect(computeColumns(board).open).toEqual(['T-1']);

    // Edits and notes do not clear it; a new claim does.
    engine.editTask('T-1', { title: 'renamed' });
    for (const e of events.splice(0)) applyLiveEvent(board, e);
    expect(isLapsed(board.tasks.get('T-1')!)).toBe(true);
    engine.claim('a2', 'T-1');
    for (const e of events.splice(0)) applyLiveEvent(board, e);
    expect(isLapsed(board.tasks.get('T-1')!)).toBe(false);

    // A release by the holder is not a lapse.
    engine.release('a2', 'T-1');
    for (const e of events.splice(0)) applyLiveEvent(board, e);
    expect(board.tasks.get('T-1')!.state).toBe('open');
    expect(isLapsed(board.tasks.get('T-1')!)).toBe(false);
  });

  it('survives a reload: it is derived from the snapshot alone', () => {
    const { engine, clock } = engineWith(['a']);
    engine.claim('a1', 'T-1');
    clock.advance(Limits.defaultLeaseMs + 5);
    engine.sweep();
    const board = boardFromSnapshot(snapshotOf(engine).board);
    expect(isLapsed(board.tasks.get('T-1')!)).toBe(true);
  });

  it('is not shown for a reassignment or a process exit', () => {
    const { engine, events } = engineWith(['a', 'b']);
    const board = boardFromSnapshot(snapshotOf(engine).board);
    events.length = 0;
    engine.claim('a1', 'T-1');
    engine.assign('T-1', 'a2');
    engine.claim('a3', 'T-2');
    engine.releaseAllHeldBy('a3', 'process-exited');
    for (const e of events) applyLiveEvent(board, e);
    expect(isLapsed(board.tasks.get('T-1')!)).toBe(false);
    expect(isLapsed(board.tasks.get('T-2')!)).toBe(false);
  });
});

describe('claims per agent and warnings', () => {
  it('finds the nearest deadline among the claims an agent holds', () => {
    const { engine, clock } = engineWith(['a', 'b', 'c']);
    engine.claim('a1', 'T-1');
    clock.advance(5_000);
    engine.claim('a1', 'T-2');
    engine.claim('a2', 'T-3');
    const board = boardFromSnapshot(snapshotOf(engine).board);
    expect(nearestDeadline(board, 'a1')).toBe(engine.task('T-1')!.claim!.deadline);
    expect(nearestDeadline(board, 'a3')).toBeNull();
    expect(nearestDeadline(null, 'a1')).toBeNull();
  });

  it('is amber when stalled or under a quarter of the lease', () => {
    expect(isWarning(60_000, 120_000, false)).toBe(false);
    expect(isWarning(29_999, 120_000, false)).toBe(true);
    expect(isWarning(30_000, 120_000, false)).toBe(false);
    expect(isWarning(100_000, 120_000, true)).toBe(true);
  });

  it('notices agents that just exited, once', () => {
    const before = [agent('a1'), agent('a2'), agent('a3', { status: 'exited', exit: { code: 0, signal: null } })];
    const after = [agent('a1', { status: 'exited', exit: { code: 0, signal: 9 } }), agent('a2'), before[2]!, agent('a4', { status: 'exited' })];
    expect(newlyExited(before, after).map((a) => a.id)).toEqual(['a1']);
    expect(describeExit(after[0]!)).toBe('killed by signal 9');
    expect(describeExit(agent('x', { exit: { code: 2, signal: null } }))).toBe('exited with code 2');
  });
});

describe("the tab's countdown after `done` (issue 32)", () => {
  it('stops as the card does: a task in review keeps its claim but is no deadline for its agent; a reject starts it again', () => {
    const { engine, events } = engineWith(['parse', 'test']);
    const board = boardFromSnapshot(snapshotOf(engine).board);
    events.length = 0;
    engine.claim('a1', 'T-1');
    engine.claim('a1', 'T-2');
    engine.done('a1', 'T-1');
    for (const e of events.splice(0)) applyLiveEvent(board, e);
    // The host still lists both as a1's (the claim on T-1 lives on in review) ...
    const claims = engine.claimsOf('a1').sort();
    expect(claims).toEqual(['T-1', 'T-2']);
    expect(board.tasks.get('T-1')?.claim?.agentId).toBe('a1');
    // ... but only T-2's lease counts down on a1's tab, as only T-2's card shows one.
    expect(nearestDeadlineOf(board, claims)).toBe(board.tasks.get('T-2')?.claim?.deadline);
    expect(nearestDeadline(board, 'a1')).toBe(board.tasks.get('T-2')?.claim?.deadline);
    engine.done('a1', 'T-2');
    for (const e of events.splice(0)) applyLiveEvent(board, e);
    expect(nearestDeadlineOf(board, claims)).toBeNull();
    expect(nearestDeadline(board, 'a1')).toBeNull();
    // Sent back while the lease runs: the task is a1's work again, and its countdown is back.
    expect(engine.rejectReview('T-1', 'the tests fail').ok).toBe(true);
    for (const e of events.splice(0)) applyLiveEvent(board, e);
    expect(nearestDeadlineOf(board, claims)).toBe(board.tasks.get('T-1')?.claim?.deadline);
  });
});
