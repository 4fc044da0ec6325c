import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBoard, readLog } from '../src-main/board/journal.js';
import { ensureRendererBuilt, type Served } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { windowOn } from './windowClient.js';

let served: Served | undefined;
const win = windowForFile({ page: false });

describe('forkbench serve', () => {
  it('Ctrl-C stops cleanly: claims are released with host-stopped, agents end, the board is saved', async () => {
    ensureRendererBuilt();
    served = await win.serve();
    const w = await windowOn(served);
    const [thread] = await w.call('threads.list', {});
    const key = thread?.key as string;
    await w.call('task.add', { key, title: 'held when the host stops' });
    const agent = await w.call('agent.launch', { key, profile: 'custom', command: 'forkbench claim T-1 && exec sleep 600', cols: 80, rows: 24 });
    await expect.poll(async () => (await w.call('thread.snapshot', { key })).board.tasks[0]?.state, { timeout: 10_000 }).toBe('claimed');
    w.close();
    expect(await served.stop()).toBe(0);
    expect(served.stderr()).toMatch(/SIGINT, stopping/);
    // the agent's process group is gone
    expect(() => process.kill(agent.pid as number, 0)).toThrow();
    const boardDir = join(served.root, 'data', 'threads', key);
    const { board } = loadBoard(boardDir);
    expect(board.tasks.get('T-1')).toMatchObject({ state: 'open', claim: null, lastClaim: { reason: 'host-stopped' } });
    expect([...readLog(boardDir)].some((e) => e.kind === 'claim-ended' && e.reason === 'host-stopped')).toBe(true);
  }, 60_000);
});
