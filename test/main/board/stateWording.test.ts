import { describe, expect, it } from 'vitest';
import { Limits } from '../../../src-shared/board/limits.js';
import { TASK_STATES, type TaskState } from '../../../src-shared/board/model.js';
import type { Result } from '../../../src-shared/board/result.js';
import { isInState } from '../../../src-shared/board/stateWords.js';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';

/**
 * Issue 20: refusals say where a task is as a person would ("T-3 is in review", never "T-3 is review"). A
 * real engine puts one task in each state; every refusal that names the state is read back word for word.
 */

function must<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

/** T-1 needs-attention, T-2 open, T-3 claimed by a, T-4 in review (held by a), T-5 done, T-6 blocked. */
function boardWithEveryState() {
  const clock = new ManualClock();
  const engine = new LeaseEngine(clock);
  engine.createThread('th-1', '');
  must(engine.setSettings({ poisonLimit: 1 }));
  for (let i = 1; i <= 6; i++) must(engine.addTask({ title: `task ${i}` }));
  must(engine.claim('a', 'T-1'));
  clock.advance(Limits.defaultLeaseMs);
  engine.sweep();
  must(engine.claim('a', 'T-3'));
  const t4 = must(engine.claim('a', 'T-4'));
  must(engine.done('a', 'T-4', t4.token));
  const t5 = must(engine.claim('a', 'T-5'));
  must(engine.done('a', 'T-5', t5.token));
  must(engine.approve('T-5'));
  must(engine.block('T-6', 'waiting on the API'));
  const at: Record<TaskState, string> = { 'needs-attention': 'T-1', open: 'T-2', claimed: 'T-3', review: 'T-4', done: 'T-5', blocked: 'T-6' };
  for (const s of TASK_STATES) expect(engine.task(at[s])?.state).toBe(s);
  return { engine, at };
}

const refusal = (r: Result<unknown>) => (r.ok ? 'accepted' : r.error.message);

describe('a task state in words', () => {
  it('reads naturally for every state', () => {
    expect(Object.fromEntries(TASK_STATES.map((s) => [s, isInState(s)]))).toEqual({
      open: 'is open',
      claimed: 'is claimed',
      review: 'is in review',
      done: 'is done',
      blocked: 'is blocked',
      'needs-attention': 'is in needs-attention',
    });
    expect(isInState('review', { already: true })).toBe('is already in review');
    expect(isInState('done', { already: true })).toBe('is already done');
  });

  it('in the engine refusals, for each state', () => {
    const { engine } = boardWithEveryState();
    expect(refusal(engine.approve('T-1'))).toBe('T-1 is in needs-attention; only a task in review can be approved');
    expect(refusal(engine.approve('T-2'))).toBe('T-2 is open; only a task in review can be approved');
    expect(refusal(engine.rejectReview('T-3', 'no'))).toBe('T-3 is claimed; only a task in review can be rejected');
    expect(refusal(engine.rejectReview('T-5', 'no'))).toBe('T-5 is done; only a task in review can be rejected');
    expect(refusal(engine.approve('T-6'))).toBe('T-6 is blocked; only a task in review can be approved');

    expect(refusal(engine.claim('b', 'T-1'))).toBe('T-1 is in needs-attention; only open tasks can be claimed');
    expect(refusal(engine.claim('b', 'T-3'))).toBe('T-3 is claimed by a; only open tasks can be claimed');
    expect(refusal(engine.claim('a', 'T-3'))).toBe('T-3 is claimed by you; only open tasks can be claimed');
    expect(refusal(engine.claim('b', 'T-4'))).toBe('T-4 is in review (held by a); only open tasks can be claimed');
    expect(refusal(engine.claim('b', 'T-5'))).toBe('T-5 is done; only open tasks can be claimed');

    expect(refusal(engine.assign('T-4', 'a'))).toBe('T-4 is already held by a');
    expect(refusal(engine.assign('T-5', 'b'))).toBe('T-5 is done; only open or claimed tasks can be assigned');
    expect(refusal(engine.assign('T-6', 'b'))).toBe('T-6 is blocked; only open or claimed tasks can be assigned');

    expect(refusal(engine.userRelease('T-2'))).toBe('T-2 is open, not held by anyone');
    expect(refusal(engine.userRelease('T-1'))).toBe('T-1 is in needs-attention, not held by anyone');
    expect(refusal(engine.block('T-4', 'why'))).toBe('T-4 is in review; only an open task can be blocked');
    expect(refusal(engine.unblock('T-5'))).toBe('T-5 is done, not blocked');
    expect(refusal(engine.reset('T-4'))).toBe('T-4 is in review, not in needs-attention');

    // done twice: the holder is told where its task already is
    expect(refusal(engine.done('a', 'T-4'))).toBe('T-4 is already in review');
  });

  it('never says "is <state>" bare for a state that needs "in"', () => {
    const { engine } = boardWithEveryState();
    const messages = ['T-1', 'T-2', 'T-3', 'T-4', 'T-5', 'T-6'].flatMap((id) => [
      refusal(engine.approve(id)),
      refusal(engine.claim('b', id)),
      refusal(engine.block(id, 'x')),
      refusal(engine.reset(id)),
      refusal(engine.unblock(id)),
    ]);
    expect(messages.filter((m) => /is (review|needs-attention)\b/.test(m))).toEqual([]);
  });
});
