import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadBoard, readLog } from '../../../src-main/board/journal.js';
import { ensureRendererBuilt, startServe, type Served } from '../../../e2e/harness.js';
import { windowOn } from '../../../e2e/windowClient.js';

// Issue 16: a fault no code of the host caught ended `serve` half-way: claims not released, agents orphaned.
// Here the real `serve` gets such a fault injected (test/fixtures/injectFault.mjs, loaded with --import).

const FAULT = join(import.meta.dirname, '..', '..', 'fixtures', 'injectFault.mjs');

let served: Served | undefined;
afterEach(async () => {
  await served?.stop();
  if (served) fs.rmSync(served.root, { recursive: true, force: true });
  served = undefined;
});

/** serve with an agent holding T-1, and the fault injector armed. */
async function serveWithClaim(fault: 'throw' | 'reject' | 'none') {
  ensureRendererBuilt();
  const s = await startServe({ nodeArgs: ['--import', FAULT], env: { FORKBENCH_TEST_FAULT: fault } });
  served = s;
  const w = await windowOn(s);
  const key = (await w.call('threads.list', {}))[0]?.key as string;
  await w.call('task.add', { key, title: 'held when the fault hits' });
  const agent = await w.call('agent.launch', { key, profile: 'custom', command: 'forkbench claim T-1 && exec sleep 600', cols: 80, rows: 24 });
  await expect.poll(async () => (await w.call('thread.snapshot', { key })).board.tasks[0]?.state, { timeout: 10_000 }).toBe('claimed');
  return { s, w, key, pid: agent.pid as number };
}

describe('serve after a fault nobody caught', () => {
  it('an uncaught exception is logged and stops the host as Ctrl-C does: claims released as host-stopped, agents ended', async () => {
    const { s, w, key, pid } = await serveWithClaim('throw');
    w.close();
    const exited = new Promise<number | null>((resolve) => s.proc.once('exit', resolve));
    s.proc.kill('SIGUSR2');
    expect(await exited).toBe(1);
    expect(s.stderr()).toMatch(/uncaught exception: Error: injected fault/);
    expect(s.stderr()).toMatch(/stopping: releasing claims/);
    expect(() => process.kill(pid, 0)).toThrow(); // the agent is gone
    const boardDir = join(s.root, 'data', 'threads', key);
    expect(loadBoard(boardDir).board.tasks.get('T-1')).toMatchObject({ state: 'open', claim: null, lastClaim: { reason: 'host-stopped' } });
    expect([...readLog(boardDir)].some((e) => e.kind === 'claim-ended' && e.reason === 'host-stopped')).toBe(true);
  }, 60_000);

  it('an unhandled rejection is logged and the host goes on serving', async () => {
    const { s, w, key } = await serveWithClaim('reject');
    s.proc.kill('SIGUSR2');
    await expect.poll(() => s.stderr(), { timeout: 5_000 }).toMatch(/unhandled rejection \(still serving\): Error: injected rejection/);
    expect(s.proc.exitCode).toBeNull();
    expect((await w.call('thread.snapshot', { key })).board.tasks[0]?.state).toBe('claimed');
    w.close();
  }, 60_000);

  it('with nobody reading its output any more (the terminal closed), Ctrl-C still stops it cleanly', async () => {
    const { s, w, key, pid } = await serveWithClaim('none');
    w.close();
    // The reader of serve's stdout and stderr goes away, as a closed terminal's or an exited `| head`'s does:
    // every write serve makes from now on fails with EPIPE.
    s.proc.stdout?.destroy();
    s.proc.stderr?.destroy();
    const exited = new Promise<number | null>((resolve) => s.proc.once('exit', resolve));
    s.proc.kill('SIGINT');
    // Before the fix it spun at 100% CPU in a loop of failing writes and never exited (SIGTERM too).
    const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 20_000))]);
    if (code === 'hung') s.proc.kill('SIGKILL');
    expect(code).toBe(0);
    expect(() => process.kill(pid, 0)).toThrow();
    const boardDir = join(s.root, 'data', 'threads', key);
    expect(loadBoard(boardDir).board.tasks.get('T-1')).toMatchObject({ state: 'open', lastClaim: { reason: 'host-stopped' } });
  }, 60_000);
});
