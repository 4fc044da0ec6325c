/**
 * Issue 31: "Branch records are idempotent by their own natural key (task, commit)". A record of a commit the
 * board already holds, sent again (its answer lost, a hook run twice), is answered with that record and
 * writes nothing; before, it was a move off the record (`from` no longer the recorded sha), which the host
 * then put aside: a retry could move the task's own recorded work off its branch.
 */
import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';

const SHA = (c: string) => c.repeat(40);
const MOVE = { ref: 'refs/heads/forkbench/T-1', from: SHA('0'), to: SHA('1'), tree: SHA('f') };

function claimedWithWorktree() {
  const engine = new LeaseEngine(new ManualClock());
  engine.createThread('th-1', 'ship it');
  engine.addTask({ title: 'work' });
  engine.addTask({ title: 'other' });
  const c = engine.claim('a', 'T-1');
  if (!c.ok) throw new Error(c.error.message);
  const token = c.value.token;
  const worktree = { path: '/w/T-1-1', branch: 'forkbench/T-1', token, base: 'main', baseCommit: SHA('0') };
  expect(engine.recordWorktree('T-1', worktree, 'host', { sha: SHA('0'), tree: SHA('e'), token, by: 'host' }).ok).toBe(true);
  const events: BoardEvent[] = [];
  engine.onEvent((e) => events.push(e));
  return { engine, token, events };
}

describe('a branch record sent again', () => {
  it('by its agent: the same record back, one event', () => {
    const { engine, token, events } = claimedWithWorktree();
    const first = engine.recordBranch('a', 'T-1', token, MOVE);
    const again = engine.recordBranch('a', 'T-1', token, MOVE);
    expect(first.ok && again.ok).toBe(true);
    expect(again).toEqual(first);
    expect(events.filter((e) => e.kind === 'branch-recorded')).toHaveLength(1);
    expect(events.filter((e) => e.kind === 'write-rejected')).toEqual([]);
  });

  it('by a person: the same', () => {
    const { engine, events } = claimedWithWorktree();
    expect(engine.recordByPerson('T-1', MOVE).ok).toBe(true);
    expect(engine.recordByPerson('T-1', MOVE)).toMatchObject({ ok: true, value: { sha: SHA('1') } });
    expect(events.filter((e) => e.kind === 'branch-recorded')).toHaveLength(1);
  });

  it('is still fenced: a stale token, another branch or another tree is refused as before', () => {
    const { engine, token } = claimedWithWorktree();
    expect(engine.recordBranch('a', 'T-1', token, MOVE).ok).toBe(true);
    expect(engine.recordBranch('a', 'T-1', token + 1, MOVE)).toMatchObject({ ok: false, error: { code: 'stale-token' } });
    expect(engine.recordBranch('b', 'T-1', undefined, MOVE)).toMatchObject({ ok: false, error: { code: 'not-holder' } });
    expect(engine.recordBranch('a', 'T-1', token, { ...MOVE, ref: 'refs/heads/forkbench/T-2' })).toMatchObject({ ok: false, error: { code: 'not-holder' } });
    expect(engine.recordBranch('a', 'T-1', token, { ...MOVE, tree: SHA('d') })).toMatchObject({ ok: false, error: { code: 'off-record' } });
  });
});
