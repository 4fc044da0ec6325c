/**
 * Issue 29, finding 2: a person's record went in while the task was in review, under the claim that had said
 * done, and approval then merged it. Review freezes the task for everyone.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';

const SHA = (c: string) => c.repeat(40);

function taskInReview() {
  const engine = new LeaseEngine(new ManualClock());
  engine.createThread('th-1', 'ship it');
  engine.addTask({ title: 'work' });
  const c = engine.claim('a', 'T-1');
  if (!c.ok) throw new Error(c.error.message);
  const token = c.value.token;
  const worktree = { path: '/w/T-1-1', branch: 'forkbench/T-1', token, base: 'main', baseCommit: SHA('0') };
  expect(engine.recordWorktree('T-1', worktree, 'host', { sha: SHA('0'), tree: SHA('e'), token, by: 'host' }).ok).toBe(true);
  expect(engine.recordBranch('a', 'T-1', token, { ref: 'refs/heads/forkbench/T-1', from: SHA('0'), to: SHA('1'), tree: SHA('f') }).ok).toBe(true);
  return { engine, token };
}

describe('a person’s record', () => {
  it('is taken while the task is worked on', () => {
    const { engine } = taskInReview();
    const r = engine.recordByPerson('T-1', { ref: 'refs/heads/forkbench/T-1', from: SHA('1'), to: SHA('2'), tree: SHA('d') });
    expect(r.ok).toBe(true);
  });

  it('is refused while the task is in review: approval merges exactly what done froze', () => {
    const { engine, token } = taskInReview();
    expect(engine.done('a', 'T-1', token).ok).toBe(true);
    expect(engine.task('T-1')?.state).toBe('review');
    const r = engine.recordByPerson('T-1', { ref: 'refs/heads/forkbench/T-1', from: SHA('1'), to: SHA('2'), tree: SHA('d') });
    expect(r).toMatchObject({ ok: false, error: { code: 'bad-state' } });
    expect(r.ok ? '' : r.error.message).toMatch(/T-1 is in review: its work was frozen at 1111111111 .*Reject it to work on/);
    expect(engine.task('T-1')?.record?.sha).toBe(SHA('1'));
  });
});
