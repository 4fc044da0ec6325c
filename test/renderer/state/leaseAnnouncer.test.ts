import { describe, expect, it } from 'vitest';
import { ANNOUNCE_GAP_MS, clockText, heldLeases, LeaseAnnouncer, type HeldLease } from '../../../src-renderer/state/leaseAnnouncer.js';
import { computeColumns } from '../../../src-renderer/state/boardState.js';
import type { Board } from '../../../src-shared/board/reducer.js';
import type { Task } from '../../../src-shared/board/model.js';

/** The host board clock, moved by the test. */
function manualClock(start = 1_000_000) {
  let t = start;
  return { now: () => t, set: (to: number) => void (t = to), advance: (ms: number) => void (t += ms) };
}

const LEASE = 120_000;
const QUARTER = LEASE / 4;
/**
 * The window around the announcer: it looks again on every board event (one each `eventMs` here) and when
 * the timer it set from `nextAt` fires, in time order, from `from` to `to`. Everything it said.
 */
function drive(clock: ReturnType<typeof manualClock>, a: LeaseAnnouncer, leases: HeldLease[], from: number, to: number, eventMs: number): string[] {
  const said: string[] = [];
  let timerAt: number | null = null;
  const look = (at: number) => {
    clock.set(at);
    const r = a.update(leases, LEASE);
    if (r.say) said.push(r.say);
    expect(r.nextAt === null || r.nextAt > at, 'a timer set for now or the past').toBe(true);
    timerAt = r.nextAt;
  };
  for (let t = from; t <= to; t += eventMs) {
    while (timerAt !== null && timerAt < t) look(timerAt);
    look(t);
  }
  return said;
}

const lease = (taskId: string, deadline: number, token = 1, holder = 'shell 2'): HeldLease => ({ taskId, token, holder, deadline });

describe('LeaseAnnouncer: a polite word when a lease enters its last quarter, and when it is renewed after', () => {
  it('says nothing before the last quarter, tells when it starts, then says it once with the time left', () => {
    const clock = manualClock();
    const a = new LeaseAnnouncer(clock);
    const deadline = clock.now() + LEASE;
    const first = a.update([lease('T-7', deadline)], LEASE);
    expect(first.say).toBeNull();
    // The component's one timer: just after the countdown turns amber, not a poll.
    expect(first.nextAt).toBe(deadline - QUARTER + 1);
    clock.set(first.nextAt as number);
    expect(a.update([lease('T-7', deadline)], LEASE).say).toBe("T-7's lease for shell 2 ends in 0:30");
    // Every board change (other tasks' events) and every later moment of the same period: nothing more.
    for (const step of [1, 1_000, 10_000, 29_000]) {
      clock.set(deadline - QUARTER + step);
      expect(a.update([lease('T-7', deadline)], LEASE).say).toBeNull();
    }
  });

  it('says the renewal after a warning, and a new warning period is warned about again', () => {
    const clock = manualClock();
    const a = new LeaseAnnouncer(clock);
    let deadline = clock.now() + LEASE;
    clock.set(deadline - 20_000);
    expect(a.update([lease('T-7', deadline)], LEASE).say).toBe("T-7's lease for shell 2 ends in 0:20");
    clock.advance(5_000);
    deadline = clock.now() + LEASE; // the holder renewed
    const renewed = a.update([lease('T-7', deadline)], LEASE);
    expect(renewed.say).toBe("T-7's lease for shell 2 renewed");
    expect(renewed.nextAt).toBe(deadline - QUARTER + 1);
    expect(a.update([lease('T-7', deadline)], LEASE).say).toBeNull(); // once
    clock.set(deadline - 10_000);
    expect(a.update([lease('T-7', deadline)], LEASE).say).toBe("T-7's lease for shell 2 ends in 0:10");
  });

  it('says nothing of the routine renewals of a lease that was never in its last quarter', () => {
    const clock = manualClock();
    const a = new LeaseAnnouncer(clock);
    for (let i = 0; i < 10; i++) {
      const r = a.update([lease('T-1', clock.now() + LEASE)], LEASE);
      expect(r.say).toBeNull();
      clock.advance(QUARTER); // renewed every quarter, as the liveness check does
    }
  });

  it('claims entering the last quarter together are one sentence', () => {
    const clock = manualClock();
    const a = new LeaseAnnouncer(clock);
    const d = clock.now() + LEASE;
    const three = [lease('T-1', d, 1, 'shell 1'), lease('T-2', d - 4_000, 2, 'shell 2'), lease('T-3', d - 9_000, 3, 'shell 1')];
    clock.set(d - QUARTER + 1);
    expect(a.update(three, LEASE).say).toBe('3 leases end within 0:30');
  });

  it('a burst of claims running out is two messages in all, not one per claim: what comes within the gap waits and is said together', () => {
    const clock = manualClock();
    const a = new LeaseAnnouncer(clock);
    const start = clock.now();
    // 50 claims granted 20 ms apart: each enters its last quarter 20 ms after the one before.
    const all = Array.from({ length: 50 }, (_, i) => lease(`T-${i + 1}`, start + LEASE + i * 20, i + 1, `shell ${(i % 12) + 1}`));
    const said = drive(clock, a, all, start + LEASE - QUARTER - 100, start + LEASE + 2_000, 20);
    expect(said[0]).toBe("T-1's lease for shell 1 ends in 0:30");
    // The other 49 entered while the first was being said: one sentence, after the gap.
    // The last entered 980 ms after the first; 2 s after the first was said, it has 28.98 s left.
    expect(said[1]).toBe('49 leases end within 0:29');
    expect(said).toHaveLength(2);
    // Then they all lapse, leaving the board: nothing is said of it.
    clock.set(start + LEASE + 5_000);
    expect(a.update([], LEASE)).toEqual({ say: null, nextAt: null });
  });

  it('a message held back by the gap says when its turn comes; renewed before then, it is never said at all', () => {
    const clock = manualClock();
    const a = new LeaseAnnouncer(clock);
    const d1 = clock.now() + LEASE;
    const d2 = d1 + 500;
    clock.set(d1 - QUARTER + 1);
    expect(a.update([lease('T-1', d1), lease('T-2', d2, 2)], LEASE).say).toBe("T-1's lease for shell 2 ends in 0:30");
    clock.set(d2 - QUARTER + 1);
    const held = a.update([lease('T-1', d1), lease('T-2', d2, 2)], LEASE);
    expect(held.say).toBeNull();
    expect(held.nextAt).toBe(d1 - QUARTER + 1 + ANNOUNCE_GAP_MS);
    // T-2 is renewed before its warning was said: nothing about it, then or later.
    const renewed = clock.now() + LEASE;
    clock.set(held.nextAt as number);
    expect(a.update([lease('T-1', d1), lease('T-2', renewed, 2)], LEASE).say).toBeNull();
    clock.advance(ANNOUNCE_GAP_MS);
    expect(a.update([lease('T-1', d1), lease('T-2', renewed, 2)], LEASE).say).toBeNull();
  });

  it('a claim that ended is said nothing more of; a new claim of the same task is a new lease, warned afresh', () => {
    const clock = manualClock();
    const a = new LeaseAnnouncer(clock);
    const d = clock.now() + LEASE;
    clock.set(d - 10_000);
    expect(a.update([lease('T-4', d, 7)], LEASE).say).toBe("T-4's lease for shell 2 ends in 0:10");
    clock.set(d + 1);
    expect(a.update([], LEASE).say).toBeNull(); // lapsed: the card says so
    const d2 = clock.now() + LEASE;
    expect(a.update([lease('T-4', d2, 8, 'shell 3')], LEASE).say).toBeNull(); // the new claim, not "renewed"
    clock.set(d2 - 5_000);
    expect(a.update([lease('T-4', d2, 8, 'shell 3')], LEASE).say).toBe("T-4's lease for shell 3 ends in 0:05");
  });

  it('a shorter lease setting that moves the quarter is no renewal; a lease already over when first seen is not announced', () => {
    const clock = manualClock();
    const a = new LeaseAnnouncer(clock);
    const d = clock.now() + LEASE;
    clock.set(d - 20_000);
    expect(a.update([lease('T-1', d)], LEASE).say).toBe("T-1's lease for shell 2 ends in 0:20");
    clock.advance(ANNOUNCE_GAP_MS);
    // The Thread's lease becomes 12 s: 20 s left is no longer its last quarter, but nothing was renewed.
    expect(a.update([lease('T-1', d)], 12_000).say).toBeNull();
    // The window opens with a claim past its deadline that the host has not yet ended: nothing to say.
    const late = new LeaseAnnouncer(clock);
    expect(late.update([lease('T-9', clock.now() - 1)], LEASE).say).toBeNull();
  });

  it('the warning and the renewal that come at once are one message, the warning first', () => {
    const clock = manualClock();
    const a = new LeaseAnnouncer(clock);
    const d = clock.now() + LEASE;
    clock.set(d - 20_000);
    expect(a.update([lease('T-1', d)], LEASE).say).toBe("T-1's lease for shell 2 ends in 0:20");
    clock.advance(ANNOUNCE_GAP_MS);
    const d1 = clock.now() + LEASE;
    const d2 = clock.now() + 10_000; // granted long ago, now in its last quarter
    expect(a.update([lease('T-1', d1), lease('T-2', d2, 2, 'shell 5')], LEASE).say).toBe("T-2's lease for shell 5 ends in 0:10. T-1's lease for shell 2 renewed");
  });

  it("a claim on its profile's own lease is warned about in that lease's last quarter, not the Thread's", () => {
    const clock = manualClock();
    const a = new LeaseAnnouncer(clock);
    const own = 300_000;
    const deadline = clock.now() + own;
    const held = { ...lease('T-4', deadline), leaseMs: own };
    // Inside the Thread's last quarter (30 s of 120 s) would be 31 s before the deadline: the own lease's
    // quarter starts 75 s before it.
    expect(a.update([held], LEASE).nextAt).toBe(deadline - own / 4 + 1);
    clock.set(deadline - own / 4 + 1);
    expect(a.update([held], LEASE).say).toBe("T-4's lease for shell 2 ends in 1:15");
  });
});

describe('clockText and heldLeases', () => {
  it('reads time left as a clock does, seconds rounded up like the countdowns', () => {
    expect(clockText(30_000)).toBe('0:30');
    expect(clockText(29_001)).toBe('0:30');
    expect(clockText(125_000)).toBe('2:05');
    expect(clockText(3 * 3_600_000 + 61_000)).toBe('3:01:01');
    expect(clockText(-5)).toBe('0:00');
  });

  it('lists the claimed tasks’ leases with their holders’ names, and nothing else', () => {
    const claim = (agentId: string, token: number, deadline: number) => ({ agentId, token, deadline, grantedAt: 0, grantedAtWall: 0 });
    const tasks = new Map<string, Task>(
      [
        { id: 'T-1', state: 'open', claim: null },
        { id: 'T-2', state: 'claimed', claim: claim('a-2', 4, 9_000) },
        { id: 'T-3', state: 'review', claim: claim('a-1', 5, 9_500) },
      ].map((t) => [t.id, t as unknown as Task]),
    );
    const board = { tasks, settings: { leaseMs: LEASE, leaseByProfile: {} } } as unknown as Board;
    expect(heldLeases(board, computeColumns(board), (id) => (id === 'a-2' ? 'shell 2' : id))).toEqual([{ taskId: 'T-2', token: 4, holder: 'shell 2', deadline: 9_000, leaseMs: LEASE }]);
    expect(heldLeases(null, computeColumns(board), String)).toEqual([]);
  });
});
