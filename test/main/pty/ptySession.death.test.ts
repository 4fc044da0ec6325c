/**
 * Issue 11: a dead child is announced at once (`onDeath`), before its output tail has drained; `onExit`
 * still comes only after the tail, which is never lost. And the first output after a quiet gap is not held
 * back by the batch timer.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Timers } from '../../../src-main/base/timers.js';
import { paneTracker, sleep, waitFor } from '../../helpers/pty.js';

const linux = process.platform === 'linux';
const tracker = paneTracker();
const pane = tracker.pane;
afterEach(() => tracker.disposeAll());

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, sleep(ms).then(() => Promise.reject(new Error(`no ${what} within ${ms} ms`)))]);
}

describe('PtySession onDeath', () => {
  it('fires before onExit, and the exit still carries the whole tail (child kills itself mid-output)', async () => {
    // Same shape as exitTailRace, ended by the child's own SIGKILL right after its last write.
    for (let run = 0; run < 5; run++) {
      const p = pane('/bin/sh', ['-c', 'i=1; while [ $i -le 5000 ]; do echo row $i; i=$((i+1)); done; echo the-end; kill -9 $$']);
      const order: string[] = [];
      let outputAtExit = '';
      p.session.onDeath(() => order.push('death'));
      p.session.onExit(() => {
        order.push('exit');
        outputAtExit = p.output();
      });
      const exit = await within(p.session.exited, 10_000, 'exit');
      expect(order, `run ${run}`).toEqual(['death', 'exit']);
      expect(exit.signalName).toBe('SIGKILL');
      expect(outputAtExit.endsWith('row 5000\r\nthe-end\r\n'), `run ${run}`).toBe(true);
      expect(p.chars()).toBe(48_902);
      p.session.dispose();
    }
  });

  it.runIf(linux)('fires while a paused pane still holds the tail; the exit waits for the tail', async () => {
    const p = pane('yes', ['flood']);
    p.session.attach('window'); // never acks: the pty stays paused with output in the kernel
    await waitFor(() => p.session.flowStats.paused, 5_000, 'pause');
    let exited = false;
    p.session.onExit(() => (exited = true));
    const died = new Promise<void>((resolve) => p.session.onDeath(resolve));
    process.kill(p.session.pid, 'SIGKILL');
    await within(died, 2_000, 'death');
    expect(exited).toBe(false);
    expect(p.session.exit).toBeUndefined();
    await sleep(50); // a negative check: the held tail keeps the exit back
    expect(exited).toBe(false);
    p.session.detach('window');
    const exit = await within(p.session.exited, 5_000, 'exit');
    expect(exit.signalName).toBe('SIGKILL');
    expect(exited).toBe(true);
  });

  it.runIf(linux)('input never waits behind output: ^C reaches a `yes` held paused by a window that never acks', async () => {
    const p = pane('yes', ['flood']);
    p.session.attach('window');
    await waitFor(() => p.session.flowStats.paused, 5_000, 'pause');
    await sleep(50); // the kernel buffer fills and `yes` blocks in write(2)
    const died = new Promise<void>((resolve) => p.session.onDeath(resolve));
    p.session.write('\x03');
    await within(died, 2_000, 'death by ^C while paused');
    expect(p.session.flowStats.paused).toBe(true); // nothing was read to let it through
    p.session.detach('window');
    expect((await within(p.session.exited, 5_000, 'exit')).signalName).toBe('SIGINT');
  });

  it('fires exactly once, and never for a session disposed first', async () => {
    const p = pane('/bin/sh', ['-c', 'true']);
    let deaths = 0;
    p.session.onDeath(() => deaths++);
    await within(p.session.exited, 5_000, 'exit');
    await sleep(50);
    expect(deaths).toBe(1);

    const q = pane('sleep', ['30']);
    let qDeaths = 0;
    q.session.onDeath(() => qDeaths++);
    q.session.dispose();
    await within(q.session.exited, 2_000, 'exit');
    await sleep(50);
    expect(qDeaths).toBe(0);
  });
});

describe('PtySession first output after a quiet gap', () => {
  it('a keystroke echo reaches onData without any batch timer running', async () => {
    // Timers that run only when the test says so: the echo must not need one.
    const pending = new Set<() => void>();
    const timers: Timers = {
      setTimeout: (fn) => {
        const entry = () => {
          pending.delete(entry);
          fn();
        };
        pending.add(entry);
        return entry;
      },
      clearTimeout: (h) => void pending.delete(h as () => void),
    };
    const runTimers = () => {
      for (const t of [...pending]) t();
    };
    const p = pane('/bin/sh', ['-c', 'stty raw -echo && echo READY && exec cat'], { timers });
    await waitFor(() => {
      runTimers();
      return p.output().includes('READY');
    }, 5_000, 'READY');
    await sleep(20); // longer than the 5 ms batch interval: the next output is "first after idle"
    runTimers();
    const before = p.output().length;
    p.session.write('x');
    await waitFor(() => p.output().slice(before).includes('x'), 5_000, 'the echo, with no timer run');
  });
});
