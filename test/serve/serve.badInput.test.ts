import * as fs from 'node:fs';
import * as net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureRendererBuilt, startServe, type Served } from '../../e2e/harness.js';
import { windowOn, windowSocket } from '../../e2e/windowClient.js';
import { ServeConstants } from '../../src-main/serve/serveServer.js';

// Issue 16: one bad request used to end the whole `serve` process, with no `host-stopped` release and the
// agents left running. These run against the real `forkbench serve`, over real sockets.

let served: Served;
beforeAll(async () => {
  ensureRendererBuilt();
  served = await startServe();
});
afterAll(async () => {
  await served?.stop();
  if (served) fs.rmSync(served.root, { recursive: true, force: true });
});

/** One raw HTTP/1.1 request: the status line's code, or 0 when the connection ended with no answer. */
function rawGet(path: string): Promise<number> {
  return new Promise((resolve) => {
    const sock = net.connect(served.port, '127.0.0.1');
    let got = '';
    sock.on('connect', () => sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${served.port}\r\nConnection: close\r\n\r\n`));
    sock.on('data', (d) => (got += d.toString('latin1')));
    sock.on('error', () => resolve(0));
    sock.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0)));
  });
}

async function stillServes(): Promise<void> {
  expect(served.proc.exitCode).toBeNull();
  expect(await rawGet('/')).toBe(200);
  const w = await windowOn(served);
  expect((await w.call('threads.list', {})).length).toBe(1);
  w.close();
}

describe('serve survives a bad request', () => {
  it('answers 400 to paths that do not decode or name no file, and keeps serving', async () => {
    for (const path of ['/%', '/a%00.js', '/%E0%A4%A', '/%ff.js', '/assets/%C0%AF.css', '/x%00', '/%00/']) {
      expect({ path, status: await rawGet(path) }).toEqual({ path, status: 400 });
    }
    await stillServes();
  });

  it('answers a typed error to a WebSocket frame of the wrong shape, and keeps serving', async () => {
    const ws = windowSocket(served);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const replies: unknown[] = [];
    ws.on('message', (raw) => replies.push(JSON.parse(raw.toString())));
    const frames = [
      '{"id":1,"method":{"toString":1},"params":{}}',
      '{"id":2,"method":{"toString":null,"valueOf":null},"params":{}}',
      '{"id":3,"method":"threads.list","params":{"toString":1}}',
      '{"id":"4","method":"threads.list","params":{}}',
      '{"id":1e400,"method":"threads.list"}',
      'null',
      '[]',
      '7',
    ];
    for (const f of frames) ws.send(f);
    await expect.poll(() => replies.length, { timeout: 5_000 }).toBe(frames.length);
    for (const r of replies) expect(r).toMatchObject({ ok: false, error: { code: expect.stringMatching(/^(bad-message|invalid-input)$/) } });
    // a frame whose id was readable is answered under that id
    expect(replies[0]).toMatchObject({ id: 1, ok: false, error: { code: 'bad-message' } });
    ws.close();
    await stillServes();
  });

  it('closes a socket that sends a frame over the limit with 1009, and keeps serving', async () => {
    const ws = windowSocket(served);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const closed = new Promise<number>((resolve) => ws.once('close', resolve));
    ws.on('error', () => undefined); // the host may reset the connection while the frame is still going out
    ws.send('x'.repeat(ServeConstants.maxPayloadBytes + 1));
    expect(await closed).toBe(1009);
    await stillServes();
  });
});
