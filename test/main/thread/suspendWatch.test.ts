import { describe, expect, it } from 'vitest';
import { readUptimeMs, SuspendWatch } from '../../../src-main/thread/suspendWatch.js';

describe('SuspendWatch', () => {
  it('fires on a sleep (uptime runs on while the monotonic clock stood still), not on jitter', () => {
    let up = 1000_000;
    let mono = 50_000;
    const slept: number[] = [];
    const w = new SuspendWatch((ms) => slept.push(ms), () => up, () => mono);
    up += 5000;
    mono += 4990; // ordinary scheduling
    w.check();
    expect(slept).toEqual([]);
    up += 3_600_000 + 5000; // an hour asleep
    mono += 5000;
    w.check();
    expect(slept).toEqual([3_600_000]);
    w.dispose();
  });

  it('a read of /proc/uptime that fails (EMFILE) skips a round instead of throwing from its timer (issue 29)', () => {
    // At the descriptor limit this timer's read threw, an uncaught exception, and serve stopped every agent.
    let fail = false;
    let up = 1_000;
    const resumed: number[] = [];
    const w = new SuspendWatch(
      (ms) => resumed.push(ms),
      () => {
        if (fail) throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
        return up;
      },
      () => 0,
    );
    fail = true;
    expect(() => w.check()).not.toThrow();
    fail = false;
    up += 10_000;
    w.check();
    expect(resumed).toEqual([10_000]);
    w.dispose();
  });

  it('reads /proc/uptime', () => {
    expect(readUptimeMs('12345.67 999.00\n')).toBeCloseTo(12_345_670);
    if (process.platform === 'linux') expect(readUptimeMs()).toBeGreaterThan(0);
  });
});
