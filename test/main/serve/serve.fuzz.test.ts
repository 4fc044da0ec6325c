import * as fs from 'node:fs';
import * as net from 'node:net';
import fc from 'fast-check';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { windowMethods } from '../../../src-shared/protocol/windowApi.js';
import { ensureRendererBuilt, startServe, type Served } from '../../../e2e/harness.js';
import { windowOn, windowSocket } from '../../../e2e/windowClient.js';

/**
 * Random HTTP requests and random WebSocket frames against a real `forkbench serve` on 127.0.0.1; afterwards
 * the host must still be up, have logged no fault, and answer an ordinary authenticated call. Bounded: a
 * fixed number of runs with a fixed seed (FORKBENCH_FUZZ_SEED replays another), each request with a deadline,
 * and no shrinking, so a failure costs one run, not hundreds against a live server.
 */
const SEED = Number(process.env.FORKBENCH_FUZZ_SEED ?? 16_2026);
/** A few hundred of each: enough to reach every branch of the request handlers, and well under 20 s here. */
const HTTP_RUNS = 250;
const WS_RUNS = 300;
/** One request's deadline: a host answers a local request in a few ms, so this only catches a hang. */
const REPLY_MS = 2_000;

let served: Served;
let key: string;
beforeAll(async () => {
  ensureRendererBuilt();
  served = await startServe();
  const w = await windowOn(served);
  key = ((await w.call('threads.list', {}))[0] as { key: string }).key;
  w.close();
});
afterAll(async () => {
  await served?.stop();
  if (served) fs.rmSync(served.root, { recursive: true, force: true });
});

const withSeed = async (what: string, run: () => Promise<void>) => {
  try {
    await run();
  } catch (err) {
    throw new Error(`${what} fuzz failed with seed ${SEED} (replay: FORKBENCH_FUZZ_SEED=${SEED}): ${(err as Error).message}`);
  }
};

// ---- HTTP ----

const hex = fc.integer({ min: 0, max: 255 }).map((n) => n.toString(16).padStart(2, '0').toUpperCase());
/** A piece of a path: plain, a valid or truncated or overlong escape, a NUL, a climb, raw non-ASCII. */
const pathPiece = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9._~-]{0,8}$/),
  hex.map((h) => `%${h}`),
  fc.constantFrom('%', '%0', '%G1', '%E0%A4%A', '%C0%AF', '%00', '%2e%2e', '..', '%2f', '%5c', '//', '?', '#', ';', '%ff%fe'),
  fc.string({ unit: 'grapheme', maxLength: 3 }),
  fc.constantFrom('index.html', 'assets', 'ws', 'session', '.js', '.css', 'a.map'),
);
const path = fc.array(pathPiece, { maxLength: 8 }).map((parts) => `/${parts.join('')}`);
const method = fc.oneof(fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'CONNECT', 'TRACE'), fc.stringMatching(/^[A-Z]{1,10}$/));
const headerValue = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('', 'websocket', 'Upgrade', 'null', 'http://127.0.0.1', 'chunked', '-1', '99999999999'));
const header = fc.tuple(
  fc.oneof(
    fc.constantFrom('Host', 'Origin', 'Cookie', 'Content-Length', 'Transfer-Encoding', 'Upgrade', 'Connection', 'Sec-WebSocket-Key', 'Sec-WebSocket-Version', 'Range', 'Expect'),
    fc.stringMatching(/^[A-Za-z-]{1,12}$/),
  ),
  headerValue,
);
const request = fc.record({
  method,
  path,
  headers: fc.array(header, { maxLength: 6 }),
  /** Sometimes the WebSocket handshake, so the upgrade handler gets the random headers too. */
  upgrade: fc.boolean(),
  body: fc.string({ maxLength: 64 }),
});

/** Sends `raw` on a fresh connection: the status code answered, or 0 when the server closed without one. */
function send(raw: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(served.port, '127.0.0.1');
    let got = '';
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no answer in ${REPLY_MS} ms to ${JSON.stringify(raw.toString('latin1').slice(0, 200))}`));
    }, REPLY_MS);
    sock.on('connect', () => sock.end(raw));
    sock.on('data', (d) => {
      got += d.toString('latin1');
      if (/^HTTP\/1\.1 \d{3}/.test(got)) sock.destroy(); // the status line is all this needs
    });
    sock.on('error', () => undefined); // a reset after the answer is fine; close follows
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0));
    });
  });
}

// ---- WebSocket ----

const realMethods = Object.keys(windowMethods).filter(
  // Those that open a folder or start a process: a random valid call of them is work, not a probe.
  (m) => !['threads.open', 'agent.launch', 'agent.relaunch'].includes(m),
);
const wrong = fc.oneof(fc.anything({ maxDepth: 2 }), fc.constantFrom(null, true, -1, 1.5, 2 ** 60, '', [], {}, { toString: 1 }, { valueOf: null }));
const params = fc.oneof(
  wrong,
  fc.record(
    {
      key: fc.oneof(fc.constant('KEY'), fc.stringMatching(/^[0-9a-f]{16}$/), wrong),
      taskId: fc.oneof(fc.constantFrom('T-1', 'T-999999999999'), wrong),
      agentId: wrong,
      title: fc.oneof(fc.string({ maxLength: 20 }), wrong),
      goal: fc.oneof(fc.string({ maxLength: 20 }), wrong),
      cols: fc.oneof(fc.integer(), wrong),
      chars: fc.oneof(fc.integer(), fc.double(), wrong),
    },
    { requiredKeys: [] },
  ),
);
/** JSON text of a frame whose every field may be of the wrong type, named the real Thread's key sometimes. */
const objectFrame = fc
  .record(
    {
      id: fc.oneof(fc.nat(), wrong),
      method: fc.oneof(fc.constantFrom(...realMethods), fc.string({ maxLength: 20 }), wrong),
      params,
      extra: wrong,
    },
    { requiredKeys: [] },
  )
  .map((f) => JSON.stringify(f).replaceAll('"KEY"', JSON.stringify(key)));
const frame = fc.oneof(
  objectFrame.map((text) => ({ text })),
  fc.json({ maxDepth: 3 }).map((text) => ({ text })),
  fc.string({ unit: 'binary', maxLength: 60 }).map((text) => ({ text })),
  fc.constantFrom('{"id":1e400,"method":"threads.list"}', '{"id":123456789012345678901234567890,"method":"threads.list"}', '{"id":-0,"method":"threads.list"}', '{"__proto__":{"id":1},"method":"threads.list"}', '{"id":1,"method":"threads.list","params":{"__proto__":{"x":1}}}').map((text) => ({ text })),
  /** Binary frames, and text frames that are not UTF-8 (the socket is closed with 1007 for those). */
  fc.uint8Array({ maxLength: 60 }).map((bytes) => ({ bytes, binary: true })),
  fc.uint8Array({ minLength: 1, maxLength: 20 }).map((bytes) => ({ bytes: Uint8Array.from([0xff, ...bytes]), binary: false })),
);

/** One authenticated window socket that answers an id-tagged probe; reopened when a frame got it closed. */
class Probe {
  private ws: WebSocket | null = null;
  private next = 1_000_000;
  readonly faults: unknown[] = [];

  private async socket(): Promise<WebSocket> {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) return this.ws;
    const ws = windowSocket(served);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.on('message', (raw) => {
      const m = JSON.parse(raw.toString()) as { ok?: boolean; error?: { code?: string } };
      // `failed` is the router's word for a handler that threw something it did not foresee
      if (m.ok === false && m.error?.code === 'failed') this.faults.push(m);
    });
    this.ws = ws;
    return ws;
  }

  /** Sends `f`, then a probe call, and waits for the probe's answer (or the socket's close). */
  async sendThenProbe(f: { text: string } | { bytes: Uint8Array; binary: boolean }): Promise<void> {
    const ws = await this.socket();
    const id = this.next++;
    const answered = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to the probe in ${REPLY_MS} ms after ${JSON.stringify(f).slice(0, 200)}`)), REPLY_MS);
      const done = () => {
        clearTimeout(timer);
        ws.off('message', onMessage);
        ws.off('close', done);
        resolve();
      };
      const onMessage = (raw: WebSocket.RawData) => {
        if ((JSON.parse(raw.toString()) as { id?: number }).id === id) done();
      };
      ws.on('message', onMessage);
      ws.once('close', done);
    });
    if ('text' in f) ws.send(f.text);
    else ws.send(f.bytes, { binary: f.binary });
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ id, method: 'threads.list', params: {} }));
    await answered;
  }

  close(): void {
    this.ws?.close();
  }
}

describe(`serve under random input (seed ${SEED})`, () => {
  it('random HTTP requests: every one answered below 500 or closed, and the host stays up', async () => {
    await withSeed('HTTP', () =>
      fc.assert(
        fc.asyncProperty(request, async (r) => {
          const hs = r.upgrade ? [['Upgrade', 'websocket'], ['Connection', 'Upgrade'], ['Sec-WebSocket-Version', '13'], ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ==']] : [];
          const head = [...hs, ['Host', `${served.host}:${served.port}`], ...r.headers]
            .map(([n, v]) => `${n}: ${String(v).replace(/[\r\n]/g, ' ')}`)
            .join('\r\n');
          const status = await send(Buffer.concat([Buffer.from(`${r.method} ${r.path.replace(/[\s]/g, '%20')} HTTP/1.1\r\n${head}\r\n\r\n`), Buffer.from(r.body)]));
          expect(status === 0 || (status >= 100 && status < 500)).toBe(true);
          expect(served.proc.exitCode).toBeNull();
        }),
        { seed: SEED, numRuns: HTTP_RUNS, endOnFailure: true },
      ),
    );
  }, 20_000);

  it('random WebSocket frames: answered or closed, never a host fault', async () => {
    const probe = new Probe();
    try {
      await withSeed('WebSocket', () =>
        fc.assert(
          fc.asyncProperty(frame, async (f) => {
            await probe.sendThenProbe(f);
            expect(served.proc.exitCode).toBeNull();
          }),
          { seed: SEED, numRuns: WS_RUNS, endOnFailure: true },
        ),
      );
    } finally {
      probe.close();
    }
    expect(probe.faults).toEqual([]);
  }, 20_000);

  it('afterwards the host is up, logged no fault, and answers an ordinary call', async () => {
    expect(served.proc.exitCode).toBeNull();
    const w = await windowOn(served);
    const snap = await w.call('thread.snapshot', { key });
    expect(snap.key).toBe(key);
    w.close();
    expect(served.stderr()).not.toMatch(/uncaught exception|unhandled rejection|failed:/);
  });
});
