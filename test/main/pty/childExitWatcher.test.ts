import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { isChildDead, watchChildExit } from '../../../src-main/pty/childExitWatcher.js';
import { waitFor } from '../../helpers/pty.js';

describe('watchChildExit', () => {
  it('fires once when a child dies, from SIGCHLD', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    let fired = 0;
    const w = watchChildExit(child.pid!, () => fired++);
    expect(isChildDead(child.pid!)).toBe(false);
    child.kill('SIGKILL');
    await waitFor(() => fired === 1, 2_000, 'the death notice');
    expect(isChildDead(child.pid!)).toBe(true);
    w.dispose();
  });

  it('fires for a child that died before it was watched', async () => {
    const child = spawn('true', [], { stdio: 'ignore' });
    await new Promise((r) => child.once('exit', r));
    let fired = 0;
    watchChildExit(child.pid!, () => fired++);
    await waitFor(() => fired === 1, 2_000, 'the death notice');
  });

  it('a disposed watch stays silent and stops listening for SIGCHLD', async () => {
    const before = process.listenerCount('SIGCHLD');
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    let fired = 0;
    const w = watchChildExit(child.pid!, () => fired++);
    expect(process.listenerCount('SIGCHLD')).toBe(before + 1);
    w.dispose();
    expect(process.listenerCount('SIGCHLD')).toBe(before);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(fired).toBe(0);
  });
});
