import * as fs from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import { loadBoard, readLog } from '../src-main/board/journal.js';
import type { WsServerMessage } from '../src-shared/protocol/windowApi.js';
import { ensureRendererBuilt, startServe, type Served } from './harness.js';

let served: Served | undefined;
afterAll(async () => {
  await served?.stop();
  if (served) fs.rmSync(served.root, { recursive: true, force: true });
});

/** A window on the served host, speaking the same WebSocket protocol the page does. */
async function windowOn(s: Served) {
  const ws = new WebSocket(`ws://127.0.0.1:${s.port}/ws?token=${s.token}`, { headers: { Origin: `http://127.0.0.1:${s.port}` } });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let n = 0;
  const pushes: WsServerMessage[] = [];
  const waiting = new Map<number, (m: WsServerMessage) => void>();
  ws.on('message', (raw) => {
    const m = JSON.parse(raw.toString()) as WsServerMessage;
    if ('id' in m) waiting.get(m.id)?.(m);
    else pushes.push(m);
  });
  const call = (method: string, params: unknown) =>
    new Promise<unknown>((resolve, reject) => {
      const id = ++n;
      waiting.set(id, (m) => ('ok' in m && m.ok ? resolve(m.result) : reject(new Error(JSON.stringify(m)))));
      ws.send(JSON.stringify({ id, method, params }));
    });
  return { call, pushes, close: () => ws.close() };
}

describe('forkbench serve', () => {
  it('Ctrl-C stops cleanly: claims are released with host-stopped, agents end, the board is saved', async () => {
    ensureRendererBuilt();
    served = await startServe();
    const w = await windowOn(served);
    const [thread] = (await w.call('threads.list', {})) as Array<{ key: string }>;
    const key = thread?.key as string;
    await w.call('task.add', { key, title: 'held when the host stops' });
    const agent = (await w.call('agent.launch', { key, profile: 'custom', command: 'forkbench claim T-1 && exec sleep 600', cols: 80, rows: 24 })) as { pid: number };
    await expect.poll(async () => ((await w.call('thread.snapshot', { key })) as { board: { tasks: Array<{ state: string }> } }).board.tasks[0]?.state, { timeout: 10_000 }).toBe('claimed');
    w.close();
    expect(await served.stop()).toBe(0);
    expect(served.stderr()).toMatch(/SIGINT, stopping/);
    // the agent's process group is gone
    expect(() => process.kill(agent.pid, 0)).toThrow();
    const boardDir = join(served.root, 'data', 'threads', key);
    const { board } = loadBoard(boardDir);
    expect(board.tasks.get('T-1')).toMatchObject({ state: 'open', claim: null, lastClaim: { reason: 'host-stopped' } });
    expect([...readLog(boardDir)].some((e) => e.kind === 'claim-ended' && e.reason === 'host-stopped')).toBe(true);
  }, 60_000);
});
