import { describe, expect, it } from 'vitest';
import { CpuWork, judgeLiveness, LivenessLimits, progressAt } from '../../../src-main/agents/liveness.js';
import { socketPathFor } from '../../../src-main/agents/agentSocket.js';

describe('liveness verdict', () => {
  const lease = 120_000;
  it('renews a running or sleeping agent that showed progress within the lease window', () => {
    expect(judgeLiveness({ state: 'running', lastProgressAt: 1000, now: 1000 + lease - 1, leaseMs: lease })).toBe('renew');
    expect(judgeLiveness({ state: 'sleeping', lastProgressAt: 5000, now: 6000, leaseMs: lease })).toBe('renew');
  });
  it('does not renew an agent silent for the whole lease window', () => {
    expect(judgeLiveness({ state: 'sleeping', lastProgressAt: 1000, now: 1000 + lease, leaseMs: lease })).toBe('stalled');
  });
  it('never renews a stopped process or a zombie, however recent its output', () => {
    expect(judgeLiveness({ state: 'stopped', lastProgressAt: 1000, now: 1001, leaseMs: lease })).toBe('stalled');
    expect(judgeLiveness({ state: 'zombie', lastProgressAt: 1000, now: 1001, leaseMs: lease })).toBe('stalled');
  });
  it('reports a vanished process as gone (the exit event releases its claims)', () => {
    expect(judgeLiveness({ state: 'gone', lastProgressAt: 1000, now: 1001, leaseMs: lease })).toBe('gone');
  });
});

describe('what counts as progress (issue 42: a pane printing a dot every 15 s kept its claims for ever)', () => {
  const lease = 120_000;
  it("for a holder, output alone is progress for one lease past its last board call or CPU work, no longer", () => {
    const dots = (now: number) => progressAt({ lastWorkAt: 0, lastOutputAt: now - 15_000, leaseMs: lease, holds: true });
    expect(judgeLiveness({ state: 'sleeping', lastProgressAt: dots(lease + 60_000), now: lease + 60_000, leaseMs: lease })).toBe('renew');
    expect(judgeLiveness({ state: 'sleeping', lastProgressAt: dots(2 * lease), now: 2 * lease, leaseMs: lease })).toBe('stalled');
    expect(judgeLiveness({ state: 'sleeping', lastProgressAt: dots(10 * lease), now: 10 * lease, leaseMs: lease })).toBe('stalled');
    // a board call (or a commit through the fence, which is one) starts the lease of output again
    expect(progressAt({ lastWorkAt: 9 * lease, lastOutputAt: 10 * lease - 1, leaseMs: lease, holds: true })).toBe(10 * lease - 1);
    // an agent that holds nothing: its output is progress as it is (running, not idle)
    expect(progressAt({ lastWorkAt: 0, lastOutputAt: 10 * lease, leaseMs: lease, holds: false })).toBe(10 * lease);
  });

  it('CPU counts as work at a share of a core, not a tick now and then', () => {
    const interval = 30_000;
    // A dot loop: ~1.8 ms of fork and exec a turn, a turn every 0.2 s: 0.9 % of a core. Never work.
    const dots = new CpuWork(0);
    for (let t = interval; t <= 20 * lease; t += interval) dots.observe(t, Math.floor((t * 0.009) / 10) * 10, lease);
    expect(dots.lastWorkAt).toBe(0);
    // An agent at 5 % of a core: work at every reading.
    const busy = new CpuWork(0);
    for (let t = interval; t <= 4 * interval; t += interval) {
      busy.observe(t, t * 0.05, lease);
      expect(busy.lastWorkAt).toBe(t);
    }
    // A burst after a long quiet counts when it is seen: the window looks back about a lease, not to the start.
    const burst = new CpuWork(0);
    burst.observe(10 * lease, 20, lease);
    expect(burst.lastWorkAt).toBe(0);
    burst.observe(10 * lease + interval, 20, lease);
    burst.observe(11 * lease, 20 + LivenessLimits.workCpuShare * (lease + interval), lease);
    expect(burst.lastWorkAt).toBe(11 * lease);
    // A short window needs the floor: one tick is no work.
    const tick = new CpuWork(0);
    tick.observe(500, 10, 2_000);
    expect(tick.lastWorkAt).toBe(0);
    tick.observe(1_000, LivenessLimits.minWorkCpuMs + 10, 2_000);
    expect(tick.lastWorkAt).toBe(1_000);
    // A drop (a child reaped outside the tree) is no work, and the window starts again from it.
    tick.observe(1_500, 5, 2_000);
    expect(tick.lastWorkAt).toBe(1_000);
  });
});

describe('socket paths', () => {
  it('are short enough for macOS (104 bytes) and become named pipes on Windows', () => {
    const p = socketPathFor('/Users/someone/Library/Caches/TemporaryItems/forkbench', '0123456789abcdef0123', 'darwin');
    expect(p).toBe('/Users/someone/Library/Caches/TemporaryItems/forkbench/fb-0123456789ab/agents.sock');
    expect(Buffer.byteLength(p)).toBeLessThan(104);
    expect(socketPathFor('C:\\x', '0123456789abcdef', 'win32')).toBe('\\\\.\\pipe\\forkbench-fb-0123456789ab');
  });
});
