import { afterEach, describe, expect, it } from 'vitest';
import { realTimers, type Timers } from '../../../src-main/base/timers.js';
import { manualTimers } from '../../helpers/manualTimers.js';
import { sleep, spawnPane, waitFor, type Pane } from '../../helpers/pty.js';

const linux = process.platform === 'linux';
const panes: Pane[] = [];
afterEach(() => {
  for (const p of panes.splice(0)) p.session.dispose();
});

/** Real timers that remember which are still pending (by delay), so a test can ask what a session left. */
function trackedTimers() {
  const pending = new Map<unknown, number>();
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      const h = realTimers.setTimeout(() => {
        pending.delete(h);
        fn();
      }, ms);
      pending.set(h, ms);
      return h;
    },
    clearTimeout: (h) => {
      pending.delete(h);
      realTimers.clearTimeout(h);
    },
    unref: (h) => realTimers.unref?.(h),
  };
  return { timers, pending: () => [...pending.values()] };
}

/** Every global setTimeout armed while `fn` runs (the session must use its injected timers only). */
function globalTimersArmedDuring(fn: () => void): number[] {
  const armed: number[] = [];
  const real = globalThis.setTimeout;
  globalThis.setTimeout = ((cb: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    armed.push(ms ?? 0);
    return real(cb, ms, ...args);
  }) as typeof setTimeout;
  try {
    fn();
  } finally {
    globalThis.setTimeout = real;
  }
  return armed;
}

describe('PtySession disposed mid-exit-tail', () => {
  it.runIf(linux)('heldDestroyRace: disposed while a paused pane holds its dead child’s tail, it arms no timer and its exit comes at once', async () => {
    const t = trackedTimers();
    const p = spawnPane('yes', ['flood'], { timers: t.timers });
    panes.push(p);
    p.session.attach('window'); // a window that never acks: the pty stays paused with output in the kernel
    await waitFor(() => p.session.flowStats.paused, 5_000, 'pause');
    process.kill(p.session.pid, 'SIGKILL');
    // node-pty destroys its socket 200 ms after reaping the child; while the paused pty still holds the
    // child's tail, the session holds that destroy back (and keeps the slave).
    await waitFor(() => (p.session as unknown as { slave: { heldDestroy?: unknown } }).slave.heldDestroy !== undefined, 5_000, 'the held socket destroy');

    const armed = globalTimersArmedDuring(() => p.session.dispose());
    expect(armed, 'global timers armed by dispose()').toEqual([]);
    expect(t.pending(), 'injected timers still pending after dispose()').toEqual([]);
    // Nobody reads the tail any more: the held destroy ran now, not after another 200 ms grace.
    const t0 = performance.now();
    const exit = await Promise.race([p.session.exited, sleep(2_000).then(() => null)]);
    expect(exit?.signalName).toBe('SIGKILL');
    expect(performance.now() - t0).toBeLessThan(150);
  });

  it('exitCapRace: disposed while the exit waits for the mirror, no cap timer is left behind', async () => {
    const m = manualTimers();
    const DRAIN = 7;
    const QUIET = 3;
    const BATCH = 1;
    const p = spawnPane('/bin/sh', ['-c', 'echo the-tail'], { timers: m.timers, drainQuietMs: DRAIN, exitQuietMs: QUIET, exitMaxWaitMs: 5_000, batchDelayMs: BATCH });
    panes.push(p);
    // Drive the drain by hand until node-pty has reported the child's exit and the session armed its quiet timer.
    const deadline = performance.now() + 5_000;
    while (!m.has((ms) => ms === QUIET)) {
      if (performance.now() > deadline) throw new Error(`no exit timer; pending: ${m.delays().join(', ')}`);
      await sleep(DRAIN + 3);
      m.fire((ms) => ms === DRAIN || ms === BATCH);
    }
    let reported = false;
    p.session.onExit(() => (reported = true));
    m.fire((ms) => ms === QUIET);
    // reportExit now waits for the mirror, capped by a timer of ~5 s: dispose mid-wait.
    expect(m.has((ms) => ms > 1_000), 'the cap timer is armed').toBe(true);
    p.session.dispose();
    expect(m.delays(), 'timers still pending after dispose()').toEqual([]);
    const exit = await Promise.race([p.session.exited, sleep(2_000).then(() => null)]);
    expect(exit).toMatchObject({ exitCode: 0 });
    await sleep(20);
    expect(reported).toBe(false); // a disposed session reports nothing
    expect(p.output()).toContain('the-tail');
  });
});
