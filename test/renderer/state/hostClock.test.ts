import { describe, expect, it } from 'vitest';
import { HostClock } from '../../../src-renderer/state/hostClock.js';

describe('HostClock: the host board clock estimated from readings', () => {
  it('takes the largest lower bound: a countdown ends late, never early', () => {
    // True relation: host = local + 5_000. Messages take 0..40 ms to arrive.
    const c = new HostClock(() => 0);
    c.reset(10_000, 5_030); // snapshot sent at host 10_000 (local 5_000), received 30 ms later
    expect(c.now(5_030)).toBe(10_000); // 30 ms behind the truth (10_030)
    c.observe(12_000, 7_040); // 40 ms of transit: a weaker bound, ignored
    expect(c.now(7_040)).toBe(12_010); // offset still 4_970 (truth: 12_040)
    c.observe(13_000, 8_002); // 2 ms of transit: a tighter bound
    expect(c.now(8_002)).toBe(13_000);
    // Whatever the readings, the estimate never runs ahead of the host.
    for (const local of [8_002, 9_000, 50_000]) expect(c.now(local)).toBeLessThanOrEqual(local + 5_000);
  });

  it('computes remaining lease from a deadline, never below zero', () => {
    const c = new HostClock(() => 0);
    c.reset(100_000, 1_000);
    const deadline = 100_000 + 120_000;
    expect(c.remaining(deadline, 1_000)).toBe(120_000);
    expect(c.remaining(deadline, 61_000)).toBe(60_000);
    expect(c.remaining(deadline, 121_000)).toBe(0);
    expect(c.remaining(deadline, 500_000)).toBe(0);
  });

  it('a new snapshot replaces what was learnt (the host may have restarted)', () => {
    const c = new HostClock(() => 0);
    c.reset(1_000_000, 0);
    c.reset(500, 10);
    expect(c.now(10)).toBe(500);
  });

  it('reads the local clock it was given', () => {
    let local = 0;
    const c = new HostClock(() => local);
    expect(c.synced).toBe(false);
    c.reset(2_000);
    expect(c.synced).toBe(true);
    local = 250;
    expect(c.now()).toBe(2_250);
    expect(c.remaining(3_000)).toBe(750);
  });
});
