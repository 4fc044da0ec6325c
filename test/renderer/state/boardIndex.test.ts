import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { Limits } from '../../../src-shared/board/limits.js';
import {
  applyLiveEvent,
  boardFromSnapshot,
  compareTaskIds,
  computeColumns,
  insertSorted,
  moveTask,
  nearestDeadline,
  nearestDeadlineOf,
  removeSorted,
  updateColumns,
  type Columns,
} from '../../../src-renderer/state/boardState.js';
import { AppController } from '../../../src-renderer/state/controller.js';
import { agent, engineWith, FakeTransport, settle, snapshotOf } from '../../helpers/renderer.js';

/**
 * The renderer keeps its columns up to date per event instead of regrouping and sorting every task per event
 * (issue 11): whatever the events, the result must equal the full computation. Each agent's claims are the
 * host's (sent with its agent list, test/main/thread/agentClaims.test.ts), never computed here.
 */

describe('sorted id lists', () => {
  it('insert in task-number order and remove, copying only what changes', () => {
    const ids = ['T-2', 'T-9', 'T-10'];
    expect(insertSorted(ids, 'T-1')).toEqual(['T-1', 'T-2', 'T-9', 'T-10']);
    expect(insertSorted(ids, 'T-3')).toEqual(['T-2', 'T-3', 'T-9', 'T-10']);
    expect(insertSorted(ids, 'T-11')).toEqual(['T-2', 'T-9', 'T-10', 'T-11']);
    expect(insertSorted(ids, 'T-9')).toBe(ids);
    expect(removeSorted(ids, 'T-9')).toEqual(['T-2', 'T-10']);
    expect(removeSorted(ids, 'T-4')).toBe(ids);
    expect(ids).toEqual(['T-2', 'T-9', 'T-10']);
    expect(compareTaskIds('T-9', 'T-10')).toBeLessThan(0);
  });

  it('moves a task between two columns and keeps every other column array', () => {
    const { engine } = engineWith(['a', 'b', 'c']);
    engine.claim('a1', 'T-2');
    const cols = computeColumns(boardFromSnapshot(snapshotOf(engine).board));
    const next = moveTask(cols, 'T-2', 'claimed', 'review');
    expect(next.claimed).toEqual([]);
    expect(next.review).toEqual(['T-2']);
    expect(next.open).toBe(cols.open);
    expect(next.done).toBe(cols.done);
    expect(moveTask(cols, 'T-1', 'open', 'open')).toBe(cols);
    expect(moveTask(cols, 'T-4', null, 'open').open).toEqual(['T-1', 'T-3', 'T-4']);
  });
});

type Op =
  | { op: 'add' }
  | { op: 'claim'; agent: number; task: number }
  | { op: 'assign'; agent: number; task: number }
  | { op: 'release'; agent: number; task: number }
  | { op: 'userRelease'; task: number }
  | { op: 'done'; agent: number; task: number }
  | { op: 'approve'; task: number }
  | { op: 'reject'; task: number }
  | { op: 'block'; task: number }
  | { op: 'unblock'; task: number }
  | { op: 'reset'; task: number }
  | { op: 'note'; agent: number; task: number }
  | { op: 'renew'; agent: number; task: number }
  | { op: 'exit'; agent: number }
  | { op: 'advance'; ms: number };

const AGENTS = ['a1', 'a2', 'a3'];
const agentIx = fc.nat({ max: AGENTS.length - 1 });
const taskIx = fc.nat({ max: 11 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.constant({ op: 'add' as const }),
  fc.record({ op: fc.constant('claim' as const), agent: agentIx, task: taskIx }),
  fc.record({ op: fc.constant('assign' as const), agent: agentIx, task: taskIx }),
  fc.record({ op: fc.constant('release' as const), agent: agentIx, task: taskIx }),
  fc.record({ op: fc.constant('userRelease' as const), task: taskIx }),
  fc.record({ op: fc.constant('done' as const), agent: agentIx, task: taskIx }),
  fc.record({ op: fc.constant('approve' as const), task: taskIx }),
  fc.record({ op: fc.constant('reject' as const), task: taskIx }),
  fc.record({ op: fc.constant('block' as const), task: taskIx }),
  fc.record({ op: fc.constant('unblock' as const), task: taskIx }),
  fc.record({ op: fc.constant('reset' as const), task: taskIx }),
  fc.record({ op: fc.constant('note' as const), agent: agentIx, task: taskIx }),
  fc.record({ op: fc.constant('renew' as const), agent: agentIx, task: taskIx }),
  fc.record({ op: fc.constant('exit' as const), agent: agentIx }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: Limits.defaultLeaseMs }) }),
);

/** Run one user/agent action on the real engine; refusals are fine (they emit `write-rejected` or nothing). */
function run(h: ReturnType<typeof engineWith>, o: Op): void {
  const { engine, clock } = h;
  const a = 'agent' in o ? (AGENTS[o.agent] as string) : '';
  const t = 'task' in o ? `T-${o.task + 1}` : '';
  switch (o.op) {
    case 'add':
      engine.addTask({ title: 'another' });
      return;
    case 'claim':
      engine.claim(a, t);
      return;
    case 'assign':
      engine.assign(t, a);
      return;
    case 'release':
      engine.release(a, t);
      return;
    case 'userRelease':
      engine.userRelease(t);
      return;
    case 'done':
      engine.done(a, t);
      return;
    case 'approve':
      engine.approve(t);
      return;
    case 'reject':
      engine.rejectReview(t, 'not yet');
      return;
    case 'block':
      engine.block(t, 'waiting');
      return;
    case 'unblock':
      engine.unblock(t);
      return;
    case 'reset':
      engine.reset(t);
      return;
    case 'note':
      engine.note(a, t, 'progress');
      return;
    case 'renew':
      engine.renew(a, t);
      return;
    case 'exit':
      engine.releaseAllHeldBy(a, 'process-exited');
      return;
    case 'advance':
      clock.advance(o.ms);
      engine.sweep();
      return;
  }
}

describe('the incremental board index', () => {
  it('equals the full computation after every event, whatever the events', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => {
        const h = engineWith(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j']);
        const board = boardFromSnapshot(snapshotOf(h.engine).board);
        let index: Columns = computeColumns(board);
        h.events.length = 0;
        for (const o of ops) {
          run(h, o);
          for (const e of h.events.splice(0) as BoardEvent[]) {
            const taskId = 'taskId' in e ? e.taskId : null;
            const before = taskId ? board.tasks.get(taskId) : undefined;
            const prev = index;
            expect(applyLiveEvent(board, e)).toBe('applied');
            if (taskId) index = updateColumns(index, taskId, before, board.tasks.get(taskId));
            expect(index).toEqual(computeColumns(board));
            // Events that move nothing (renewals, notes, rejected writes) leave the index as it was.
            if (e.kind === 'renew' || e.kind === 'note' || e.kind === 'write-rejected' || e.kind === 'task-edited') expect(index).toBe(prev);
          }
          // The tab's countdown from the claims the host sends (its engine's, in display order) is the
          // soonest deadline the page's own board shows for that agent. Compared once the action's events
          // are all applied: the engine's claims are its state after the whole action (an exit that ends two
          // claims emits two events), so partway through them the page rightly still shows the second.
          for (const id of AGENTS) expect(nearestDeadlineOf(board, h.engine.claimsOf(id).sort(compareTaskIds))).toBe(nearestDeadline(board, id));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the arrays of columns and agents an event did not touch, so their components do not re-render', () => {
    const { engine, events } = engineWith(['a', 'b', 'c']);
    engine.claim('a1', 'T-1');
    engine.claim('a2', 'T-2');
    const board = boardFromSnapshot(snapshotOf(engine).board);
    const index = computeColumns(board);
    events.length = 0;
    engine.done('a2', 'T-2');
    const [e] = events;
    const before = board.tasks.get('T-2');
    applyLiveEvent(board, e!);
    const next = updateColumns(index, 'T-2', before, board.tasks.get('T-2'));
    expect(next.review).toEqual(['T-2']);
    expect(next.claimed).toEqual(['T-1']);
    expect(next.open).toBe(index.open);
  });
});

describe('AppController keeps the columns per event', () => {
  // Each agent's claims after the same changes, as the host pushes them: test/main/thread/agentClaims.test.ts.
  it('matches a full recount after grants, a reassignment, a review and an exit', async () => {
    const host = engineWith(['a', 'b', 'c', 'd']);
    const t = new FakeTransport();
    const KEY = '0123456789abcdef';
    t.on('threads.list', () => [{ key: KEY, open: true, folder: '/p', goal: '' }]);
    t.on('thread.snapshot', () => snapshotOf(host.engine, { agents: [agent('a1'), agent('a2')], log: host.events.slice() }));
    const c = new AppController(t, { setTimeout: () => 0, clearTimeout: () => undefined });
    c.start();
    await settle();
    let sent = host.events.length;
    const push = () => {
      for (const e of host.events.slice(sent)) t.push({ type: 'board-event', key: KEY, event: e });
      sent = host.events.length;
    };
    const openBefore = c.state.columns.open;
    host.engine.addTask({ title: 'e' });
    push();
    expect(c.state.columns.open).toEqual(['T-1', 'T-2', 'T-3', 'T-4', 'T-5']);
    expect(c.state.columns.open).not.toBe(openBefore);

    host.engine.claim('a1', 'T-3');
    host.engine.claim('a1', 'T-1');
    host.engine.assign('T-2', 'a2');
    push();
    expect(c.state.columns.claimed).toEqual(['T-1', 'T-2', 'T-3']);
    const claimed = c.state.columns.claimed;

    // A renewal changes a deadline, not a column: the column's array does not change.
    host.clock.advance(1000);
    host.engine.renew('a1', 'T-1');
    push();
    expect(c.state.columns.claimed).toBe(claimed);

    host.engine.assign('T-3', 'a2');
    host.engine.done('a1', 'T-1');
    host.engine.releaseAllHeldBy('a2', 'process-exited');
    push();
    const board = c.state.board!;
    expect(c.state.columns).toEqual(computeColumns(board));
    expect(c.state.columns.review).toEqual(['T-1']);
    c.dispose();
  });
});
