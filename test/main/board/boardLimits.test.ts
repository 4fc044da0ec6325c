import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { BoardLimits, Limits } from '../../../src-shared/board/limits.js';
import { USER } from '../../../src-shared/board/model.js';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';
import { boardTextChars } from '../../../src-main/board/boardText.js';

function setup() {
  const clock = new ManualClock();
  const engine = new LeaseEngine(clock);
  const events: BoardEvent[] = [];
  engine.onEvent((e) => events.push(e));
  engine.createThread('th-1', 'ship it');
  return { clock, engine, events };
}

const BODY = 'x'.repeat(Limits.maxBodyChars);

describe('an agent\'s write quota (BoardLimits)', () => {
  it('takes a burst of adds, then refuses with which limit and when to retry, journaling only the first refusal', () => {
    const { engine, events, clock } = setup();
    let taken = 0;
    for (let i = 0; i < 1000; i++) if (engine.addTask({ title: `t${i}` }, 'a1').ok) taken++;
    expect(taken).toBe(BoardLimits.agentWriteBurst);
    const r = engine.addTask({ title: 'one more' }, 'a1');
    expect(r).toMatchObject({ ok: false, error: { code: 'rate-limited' } });
    if (!r.ok) expect(r.error.message).toMatch(/write quota.*Try again in 1000 ms|write quota.*Try again in 1 s/);
    expect(events.filter((e) => e.kind === 'write-rejected')).toHaveLength(1);
    expect(engine.state.tasks.size).toBe(BoardLimits.agentWriteBurst);
    // Others are not held to a1's quota, and the person to none.
    expect(engine.addTask({ title: 'from a2' }, 'a2').ok).toBe(true);
    for (let i = 0; i < 200; i++) expect(engine.addTask({ title: `person ${i}` }, USER).ok).toBe(true);
    // It refills on the board's clock: one write a second.
    clock.advance(999);
    expect(engine.addTask({ title: 'early' }, 'a1').ok).toBe(false);
    clock.advance(1);
    expect(engine.addTask({ title: 'on time' }, 'a1').ok).toBe(true);
    expect(engine.addTask({ title: 'again' }, 'a1').ok).toBe(false);
    // A new run of refusals is journaled once more.
    expect(events.filter((e) => e.kind === 'write-rejected')).toHaveLength(2);
  });

  it('limits text: 16 full bodies in a row, then 8 KiB a second', () => {
    const { engine, clock } = setup();
    let taken = 0;
    for (let i = 0; i < 40; i++) if (engine.addTask({ title: `t${i}`, body: BODY }, 'a1').ok) taken++;
    expect(taken).toBe(Math.floor(BoardLimits.agentTextBurstChars / (BODY.length + 3)));
    const r = engine.addTask({ title: 'tx', body: BODY }, 'a1');
    expect(r).toMatchObject({ ok: false, error: { code: 'rate-limited' } });
    if (!r.ok) expect(r.error.message).toMatch(/text quota.*Try again in \d+ (ms|s)\./);
    clock.advance(8_000);
    expect(engine.addTask({ title: 'tx', body: BODY }, 'a1').ok).toBe(true);
  });

  it('counts notes, edits and done notes, and a write to a task the agent does not hold', () => {
    const { engine } = setup();
    engine.addTask({ title: 'task' });
    engine.addTask({ title: 'another' });
    const c = engine.claim('a1', 'T-1');
    if (!c.ok) throw new Error('claim');
    for (let i = 0; i < BoardLimits.agentWriteBurst / 2; i++) expect(engine.note('a1', 'T-1', `n${i}`, c.value.token).ok).toBe(true);
    for (let i = 0; i < BoardLimits.agentWriteBurst / 2 - 1; i++) expect(engine.edit('a1', 'T-1', { body: `b${i}` }, c.value.token).ok).toBe(true);
    expect(engine.note('a1', 'T-2', 'not mine')).toMatchObject({ ok: false, error: { code: 'not-holder' } });
    expect(engine.note('a1', 'T-1', 'over', c.value.token)).toMatchObject({ ok: false, error: { code: 'rate-limited' } });
    expect(engine.done('a1', 'T-1', c.value.token, 'a done note')).toMatchObject({ ok: false, error: { code: 'rate-limited' } });
    // Saying done without text is never limited: an agent can always finish.
    expect(engine.done('a1', 'T-1', c.value.token).ok).toBe(true);
    expect(engine.task('T-1')?.notes).toHaveLength(BoardLimits.agentWriteBurst / 2);
  });
});

describe('refused writes in the journal', () => {
  it('a loop of refused claims is answered every time but journaled only within its own quota', () => {
    const { engine, events, clock } = setup();
    for (let i = 0; i < 1000; i++) expect(engine.claim('a1', 'T-404')).toMatchObject({ ok: false, error: { code: 'no-such-task' } });
    expect(events.filter((e) => e.kind === 'write-rejected')).toHaveLength(BoardLimits.agentRefusalsLoggedBurst);
    // Another agent's refusals are its own, and the quota refills on the board's clock.
    expect(engine.renew('a2', 'T-404').ok).toBe(false);
    clock.advance(1000);
    expect(engine.claim('a1', 'T-404').ok).toBe(false);
    expect(events.filter((e) => e.kind === 'write-rejected').map((e) => (e as { agentId: string }).agentId).slice(-2)).toEqual(['a2', 'a1']);
  });
});

describe('the board\'s text cap', () => {
  it('refuses agents at their share and everyone at the cap, keeps count across edits, and loses nothing', () => {
    const { engine, clock } = setup();
    // Fill to just under the agents' share as the person (not rate-limited).
    const fill = BoardLimits.agentTextChars - engine.textChars - 1000;
    let left = fill;
    while (left > 0) {
      const n = Math.min(left, Limits.maxBodyChars);
      expect(engine.addTask({ title: 'f', body: 'y'.repeat(n - 1) }).ok).toBe(true);
      left -= n;
    }
    expect(engine.textChars).toBe(boardTextChars(engine.state));
    const before = engine.state.tasks.size;
    clock.advance(60_000);
    const r = engine.addTask({ title: 'big', body: 'z'.repeat(2000) }, 'a1');
    expect(r).toMatchObject({ ok: false, error: { code: 'board-full' } });
    if (!r.ok) expect(r.error.message).toMatch(/agents may fill it to 28\.0 Mi.*Nothing was written/);
    expect(engine.state.tasks.size).toBe(before);
    // The person still has room.
    expect(engine.addTask({ title: 'person', body: 'z'.repeat(2000) }).ok).toBe(true);
    // An edit that shortens a body makes room, for agents too.
    expect(engine.editTask('T-1', { body: '' }).ok).toBe(true);
    expect(engine.textChars).toBe(boardTextChars(engine.state));
    expect(engine.addTask({ title: 'big', body: 'z'.repeat(2000) }, 'a1').ok).toBe(true);
    // The person is held to the full cap.
    left = BoardLimits.maxTextChars - engine.textChars - 10;
    while (left > 0) {
      const n = Math.min(left, Limits.maxBodyChars);
      expect(engine.addTask({ title: 'f', body: 'y'.repeat(n - 1) }).ok).toBe(true);
      left -= n;
    }
    expect(engine.userNote('T-2', 'z'.repeat(100))).toMatchObject({ ok: false, error: { code: 'board-full' } });
    expect(engine.setGoal('g'.repeat(100))).toMatchObject({ ok: false, error: { code: 'board-full' } });
    expect(engine.textChars).toBe(boardTextChars(engine.state));
    // A board loaded over the cap (written before it) loads as it is and takes no more text.
    const again = new LeaseEngine(clock, engine.state as never);
    expect(again.textChars).toBe(engine.textChars);
  });
});
