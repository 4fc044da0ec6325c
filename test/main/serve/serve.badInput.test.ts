import * as fs from 'node:fs';
import * as net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureRendererBuilt, startServe, type Served } from '../../../e2e/harness.js';
import { windowOn, windowSocket } from '../../../e2e/windowClient.js';
import { ServeConstants } from '../../../src-main/serve/serveServer.js';

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
    sock.on('connect', () => sock.write(`GET ${path} HTTP/1.1\r\nHost: ${served.host}:${served.port}\r\nConnection: close\r\n\r\n`));
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

  it('takes a code trade that ends in mid-body as the client leaving, not as a fault', async () => {
    await new Promise<void>((resolve) => {
      const sock = net.connect(served.port, '127.0.0.1', () =>
        sock.write(`POST /session HTTP/1.1\r\nHost: ${served.host}:${served.port}\r\nOrigin: http://${served.host}:${served.port}\r\nContent-Length: 100\r\n\r\nabc`, () =>
          // the body has started arriving: the host is reading it when the client goes
          setTimeout(() => sock.resetAndDestroy(), 100),
        ),
      );
      sock.on('error', () => undefined);
      sock.on('close', () => resolve());
    });
    await stillServes();
    expect(served.stderr()).not.toMatch(/failed/);
    expect(served.stderr()).toBe('');
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

  it('closes a socket that announces a frame over the limit (50 MB) with 1009, and keeps serving', async () => {
    // A raw socket, so the frame's header alone can be sent: the host refuses on its length, before any body,
    // and the close frame is read before anything else can reset the connection.
    const FIFTY_MB = 50 * 1024 * 1024;
    expect(FIFTY_MB).toBeGreaterThan(ServeConstants.maxPayloadBytes);
    const closeCode = await new Promise<number>((resolve, reject) => {
      const sock = net.connect(served.port, '127.0.0.1');
      let got = Buffer.alloc(0);
      sock.on('connect', () =>
        sock.write(
          `GET /ws HTTP/1.1\r\nHost: ${served.host}:${served.port}\r\nOrigin: http://${served.host}:${served.port}\r\nCookie: ${served.cookie}\r\n` +
            'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
        ),
      );
      sock.on('data', (d) => {
        const first = got.length === 0;
        got = Buffer.concat([got, d]);
        const headEnd = got.indexOf('\r\n\r\n');
        if (first && headEnd > 0) {
          if (!got.toString('latin1', 0, 12).includes('101')) return reject(new Error(got.toString('latin1')));
          // a masked text frame whose 64-bit length says 50 MB, and no payload
          const header = Buffer.alloc(14);
          header[0] = 0x81;
          header[1] = 0x80 | 127;
          header.writeBigUInt64BE(BigInt(FIFTY_MB), 2);
          sock.write(header);
        }
        const frames = headEnd > 0 ? got.subarray(headEnd + 4) : Buffer.alloc(0);
        // a close frame: opcode 8, a 2-byte payload that is the code
        if (frames.length >= 4 && frames[0] === 0x88) {
          resolve(frames.readUInt16BE(2));
          sock.destroy();
        }
      });
      sock.on('error', reject);
    });
    expect(closeCode).toBe(1009);
    await stillServes();
  });
});
