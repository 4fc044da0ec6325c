import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HostWindows } from '../../../src-main/process/hostWindows.js';
import { ThreadManager } from '../../../src-main/window/threadManager.js';
import { startServe, type ServeHandle } from '../../../src-main/serve/serveServer.js';
import { serveRequest, tradeLink } from '../../../e2e/serveClient.js';
import { paneFrameHead } from '../../../src-shared/protocol/paneFrame.js';
import type { AgentInfo, ThreadSnapshot, WsServerMessage } from '../../../src-shared/protocol/windowApi.js';

let root: string;
let threads: ThreadManager;
let windows: HostWindows;
let served: ServeHandle;
let key: string;
/** A credential from a trade of the first link, for the windows these tests open. */
let credential: string;
const links: string[] = [];

beforeAll(async () => {
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-serve-'));
  const staticDir = join(root, 'static');
  fs.mkdirSync(staticDir);
  fs.writeFileSync(join(staticDir, 'index.html'), '<!doctype html><title>fb</title>');
  fs.writeFileSync(join(root, 'secret.txt'), 'do not serve');
  // links inside the served folder that lead out of it
  fs.symlinkSync(join(root, 'secret.txt'), join(staticDir, 'leak.txt'));
  fs.symlinkSync(root, join(staticDir, 'up'));
  fs.mkdirSync(join(root, 'project'));
  threads = new ThreadManager({ dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false });
  key = (await threads.open(join(root, 'project'))).key;
  windows = new HostWindows(threads);
  served = await startServe({ windows, staticDir, onLinkUsed: (url) => links.push(url) });
  ({ credential } = await tradeLink(served.url));
});
afterAll(async () => {
  await threads.dispose();
  await served.close();
  fs.rmSync(root, { recursive: true, force: true });
});

function connect(opts: { token?: string; origin?: string; host?: string; cookie?: string }): Promise<{ ws?: WebSocket; status?: number }> {
  return new Promise((resolve) => {
    const cookie = opts.cookie ?? `forkbench=${opts.token ?? credential}`;
    const ws = new WebSocket(`ws://127.0.0.1:${served.port}/ws`, {
      headers: { Origin: opts.origin ?? served.origin, Cookie: cookie, Host: opts.host ?? `${served.host}:${served.port}` },
    });
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode }));
    ws.once('error', () => resolve({}));
  });
}

function get(path: string, host = `${served.host}:${served.port}`): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port: served.port, path, headers: { Host: host } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
  });
}

describe('serve mode', () => {
  it('listens on loopback only under a random name of its own, and prints a link with a long random one-time code', () => {
    expect(served.url).toMatch(/^http:\/\/forkbench-[0-9a-f]{32}\.localhost:\d+\/#code=[\w-]{43}$/);
    expect(new URL(served.url).hostname).toBe(served.host);
    expect(credential).toMatch(/^[\w-]{43}$/);
    expect(served.url).not.toContain(credential);
  });

  it('holds its port on both loopbacks: browsers try [::1] first for a .localhost name, so no other program may listen there', async () => {
    const squat = net.createServer();
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      squat.once('error', (e) => resolve(e));
      squat.listen(served.port, '::1', () => resolve(null));
    });
    squat.close();
    // a machine with no IPv6 loopback has no [::1] for anyone to listen on
    expect(['EADDRINUSE', 'EADDRNOTAVAIL', 'EAFNOSUPPORT']).toContain(err?.code);
    if (err?.code !== 'EADDRINUSE') return;
    const over6 = await new Promise<number>((resolve, reject) =>
      http.get({ host: '::1', port: served.port, path: '/', headers: { Host: `${served.host}:${served.port}` } }, (res) => (res.resume(), resolve(res.statusCode ?? 0))).on('error', reject),
    );
    expect(over6).toBe(200);
  });

  it('takes no port whose [::1] side another program holds: a given one fails as taken, a random one is another', async () => {
    const squat = net.createServer();
    const ok = await new Promise<boolean>((resolve) => {
      squat.once('error', () => resolve(false));
      squat.listen(0, '::1', () => resolve(true));
    });
    if (!ok) return; // no IPv6 loopback here: nothing to hold
    const held = (squat.address() as net.AddressInfo).port;
    try {
      const staticDir = join(root, 'static');
      await expect(startServe({ windows, staticDir, port: held })).rejects.toMatchObject({ code: 'EADDRINUSE' });
      const other = await startServe({ windows, staticDir });
      expect(other.port).not.toBe(held);
      await other.close();
    } finally {
      squat.close();
    }
  });

  it("trades the link's code once, from this server's own page only, for a cookie of its own name: HttpOnly, SameSite=Strict, a new credential each trade", async () => {
    const trade = (code: string, headers: Record<string, string> = {}) => serveRequest(served, { method: 'POST', path: '/session', body: code, headers });
    const code = new URL(served.url).hash.replace('#code=', '');
    // another site's page, a page at a loopback address, or a rebound name, cannot spend it
    expect((await trade(code, { Origin: 'https://evil.example' })).status).toBe(403);
    expect((await trade(code, { Origin: `http://127.0.0.1:${served.port}` })).status).toBe(403);
    expect((await trade(code, { Host: `127.0.0.1:${served.port}`, Origin: `http://127.0.0.1:${served.port}` })).status).toBe(403);
    expect((await trade(code, { Host: `localhost:${served.port}`, Origin: `http://localhost:${served.port}` })).status).toBe(403);
    expect((await trade('A'.repeat(43))).status).toBe(403);
    const ok = await trade(code);
    expect(ok.status).toBe(204);
    const setCookie = String(ok.headers['set-cookie']);
    expect(setCookie).toMatch(/^forkbench=[\w-]{43}; HttpOnly; SameSite=Strict; Path=\/$/);
    // host-only (no Domain) and no expiry written to disk: the browser keeps it in memory for this name alone
    expect(setCookie).not.toMatch(/Domain|Expires|Max-Age/i);
    // a credential of this trade's own, not the one an earlier trade gave
    expect(setCookie).not.toContain(credential);
    // spent: the same link opens nothing again (said as spent, not as unknown), and the next browser has a link of its own
    expect((await trade(code)).status).toBe(410);
    expect(links.at(-1)).toBe(served.url);
    expect(served.url).not.toContain(code);
    expect((await serveRequest(served, { path: '/session' })).status).toBe(405);
    expect((await trade('x'.repeat(10_000))).status).toBe(413);
  });

  it('refuses a WebSocket with no token, a wrong token, a foreign Origin, or a rebound Host', async () => {
    expect((await connect({ token: '' })).status).toBe(401);
    expect((await connect({ cookie: '' })).status).toBe(401);
    expect((await connect({ token: 'A'.repeat(43) })).status).toBe(401);
    // the cookie of earlier versions (named for the port) opens nothing
    expect((await connect({ cookie: `forkbench-${served.port}=${credential}` })).status).toBe(401);
    // the token in the address is not accepted any more: it would be kept in the browser's history
    const inUrl = await new Promise<number | undefined>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${served.port}/ws?token=${credential}`, { headers: { Origin: served.origin, Host: `${served.host}:${served.port}` } });
      ws.once('open', () => (ws.close(), resolve(101)));
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode));
    });
    expect(inUrl).toBe(401);
    expect((await connect({ origin: 'https://evil.example' })).status).toBe(403);
    expect((await connect({ origin: `http://127.0.0.1:${served.port + 1}` })).status).toBe(403);
    expect((await connect({ origin: `http://${served.host}:${served.port + 1}` })).status).toBe(403);
    expect((await connect({ host: `evil.example:${served.port}` })).status).toBe(403);
    // loopback addresses are not its name: a page there would keep its cookie where other ports see it
    for (const h of ['127.0.0.1', 'localhost']) {
      expect((await connect({ host: `${h}:${served.port}`, origin: `http://${h}:${served.port}` })).status).toBe(403);
      expect((await connect({ host: `${h}:${served.port}` })).status).toBe(403);
    }
  });

  it('answers the window API over the socket, validating every request', async () => {
    const { ws } = await connect({});
    if (!ws) throw new Error('no connection');
    const replies = new Map<number, WsServerMessage>();
    const call = (id: number, method: string, params: unknown) =>
      new Promise<WsServerMessage>((resolve) => {
        ws.on('message', (raw) => {
          const m = JSON.parse(raw.toString()) as WsServerMessage;
          if ('id' in m && m.id === id) {
            replies.set(id, m);
            resolve(m);
          }
        });
        ws.send(JSON.stringify({ id, method, params }));
      });
    const snap = await call(1, 'thread.snapshot', { key });
    expect(snap).toMatchObject({ ok: true, value: { key, board: { tasks: [] } } });
    expect((snap as { value: ThreadSnapshot }).value.profiles.map((p) => p.id)).toContain('shell');
    expect(await call(2, 'task.add', { key, title: '' })).toMatchObject({ ok: false, error: { code: 'invalid-input' } });
    expect(await call(3, 'task.add', { key, title: 'hello', evil: 1 })).toMatchObject({ ok: false, error: { code: 'invalid-input' } });
    expect(await call(4, 'rm -rf', {})).toMatchObject({ ok: false, error: { code: 'unknown-method' } });
    expect(await call(5, 'task.add', { key, title: 'hello' })).toMatchObject({ ok: true });
    expect(await call(6, 'task.approve', { key, taskId: 'T-1' })).toMatchObject({ ok: false, error: { code: 'bad-state' } });
    // The snapshot's text is put together from each task's kept JSON: after a change it is the board as it is.
    const before = (await call(7, 'thread.snapshot', { key })) as { value: ThreadSnapshot };
    expect(before.value.board.tasks).toEqual([expect.objectContaining({ id: 'T-1', title: 'hello' })]);
    await call(8, 'task.edit', { key, taskId: 'T-1', title: 'renamed' });
    const after = (await call(9, 'thread.snapshot', { key })) as { value: ThreadSnapshot };
    expect(after.value.board.tasks).toEqual([expect.objectContaining({ id: 'T-1', title: 'renamed' })]);
    expect(after.value.board.seq).toBeGreaterThan(before.value.board.seq);
    ws.close();
  });

  it('routes each push to the windows that have its Thread open, as Electron routes to the Thread’s window', async () => {
    fs.mkdirSync(join(root, 'other'), { recursive: true });
    const otherKey = (await threads.open(join(root, 'other'))).key;
    const windows = await Promise.all([connect({}), connect({})]);
    const [a, b] = windows.map((w) => {
      if (!w.ws) throw new Error('no connection');
      return w.ws;
    }) as [WebSocket, WebSocket];
    const heard = new Map<WebSocket, string[]>([[a, []], [b, []]]);
    const answered = (ws: WebSocket, id: number) =>
      new Promise<void>((resolve) =>
        ws.on('message', (raw) => {
          const m = JSON.parse(raw.toString()) as WsServerMessage;
          if ('push' in m && m.push.type === 'board-event') heard.get(ws)?.push(`${m.push.key}:${m.push.event.kind}`);
          if ('id' in m && m.id === id) resolve();
        }),
      );
    const snap = (ws: WebSocket, k: string) => {
      const done = answered(ws, 1);
      ws.send(JSON.stringify({ id: 1, method: 'thread.snapshot', params: { key: k } }));
      return done;
    };
    await Promise.all([snap(a, key), snap(b, otherKey)]);
    await threads.get(otherKey)?.board.run((e) => e.addTask({ title: 'only for the other window' }));
    await threads.get(key)?.board.run((e) => e.addTask({ title: 'only for the first window' }));
    await new Promise<void>((resolve) => {
      const check = () => (heard.get(a)?.length && heard.get(b)?.length ? resolve() : setTimeout(check, 10));
      check();
    });
    expect(heard.get(a)).toEqual([`${key}:task-added`]);
    expect(heard.get(b)).toEqual([`${otherKey}:task-added`]);
    a.close();
    b.close();
  });

  it('sends pane output as binary messages, its header and the UTF-8 bytes with no JSON, the same to every window', async () => {
    const windows = await Promise.all([connect({}), connect({})]);
    const [a, b] = windows.map((w) => {
      if (!w.ws) throw new Error('no connection');
      return w.ws;
    }) as [WebSocket, WebSocket];
    const binary = new Map<WebSocket, Buffer[]>([[a, []], [b, []]]);
    const jsonPanes: unknown[] = [];
    const answers = new Map<number, WsServerMessage>();
    for (const ws of [a, b]) {
      ws.on('message', (raw, isBinary) => {
        if (isBinary) return void binary.get(ws)?.push(raw as Buffer);
        const m = JSON.parse(raw.toString()) as WsServerMessage;
        if ('push' in m && m.push.type === 'pane-data') jsonPanes.push(m);
        if ('id' in m && ws === a) answers.set(m.id, m);
      });
    }
    const call = async (ws: WebSocket, id: number, method: string, params: unknown) => {
      ws.send(JSON.stringify({ id, method, params }));
      for (let i = 0; i < 500 && !answers.has(id); i++) await new Promise((r) => setTimeout(r, 10));
      return answers.get(id) as { ok: boolean; value: unknown };
    };
    b.send(JSON.stringify({ id: 1, method: 'thread.snapshot', params: { key } }));
    await call(a, 1, 'thread.snapshot', { key });
    const text = 'café \x1b[1mbold\x1b[0m 🙂 done';
    const launched = await call(a, 2, 'agent.launch', { key, profile: 'custom', command: `printf 'caf\\303\\251 \\033[1mbold\\033[0m \\360\\237\\231\\202 done'; exec sleep 600`, cols: 80, rows: 24 });
    const agentId = (launched.value as AgentInfo).id;
    const head = Buffer.from(paneFrameHead(key, agentId));
    const textOf = (ws: WebSocket) => Buffer.concat((binary.get(ws) ?? []).filter((m) => m.subarray(0, head.length).equals(head)).map((m) => m.subarray(head.length))).toString('utf8');
    for (let i = 0; i < 500 && !(textOf(a).includes('done') && textOf(b).includes('done')); i++) await new Promise((r) => setTimeout(r, 10));
    expect(textOf(a)).toBe(text);
    expect(Buffer.concat(binary.get(a) ?? [])).toEqual(Buffer.concat(binary.get(b) ?? []));
    expect(jsonPanes).toEqual([]);
    await call(a, 3, 'agent.close', { key, agentId });
    a.close();
    b.close();
  });

  it('a fault of the host on a request is answered under that request’s id, never an id the page did not use (issue 29)', async () => {
    // Writing thread.snapshot's answer threw RangeError (a board too large for one string) and was answered
    // under id -1: the page waited for its own id for ever, after every restart too. The fault is injected
    // where it struck: the serialization of the answer, after the router had answered.
    const stringify = JSON.stringify;
    const spy = vi.spyOn(JSON, 'stringify').mockImplementation(((value: unknown, ...rest: unknown[]) => {
      if ((value as { value?: { board?: unknown } } | null)?.value?.board === 0) throw new RangeError('Invalid string length');
      return (stringify as (...a: unknown[]) => string)(value, ...rest);
    }) as typeof JSON.stringify);
    const { ws } = await connect({});
    try {
      const reply = new Promise<WsServerMessage>((resolve) => ws!.on('message', (d, binary) => !binary && resolve(JSON.parse(String(d)) as WsServerMessage)));
      ws!.send(JSON.stringify({ id: 41, method: 'thread.snapshot', params: { key } }));
      expect(await reply).toMatchObject({ id: 41, ok: false, error: { code: 'failed', message: expect.stringMatching(/thread\.snapshot: Invalid string length/) } });
    } finally {
      spy.mockRestore();
      ws!.close();
    }
  });

  it('serves the built page and nothing outside it, under its own name only', async () => {
    expect((await get('/')).body).toContain('<title>fb</title>');
    for (const h of [`127.0.0.1:${served.port}`, `localhost:${served.port}`, `forkbench-${'0'.repeat(32)}.localhost:${served.port}`]) {
      expect(await get('/', h)).toEqual({ status: 403, body: 'forbidden host: open the link `forkbench serve` printed\n' });
    }
    expect((await get('/../secret.txt')).body).not.toContain('do not serve');
    for (const probe of ['/%2e%2e/secret.txt', '/..%2fsecret.txt', '/assets/..%2f..%2fsecret.txt']) {
      const r = await get(probe);
      expect(r.body).not.toContain('do not serve');
      expect([403, 404]).toContain(r.status);
    }
    expect((await get('/..%2fsecret.txt')).status).toBe(403);
  });

  it('does not follow a symlink out of the served folder', async () => {
    for (const probe of ['/leak.txt', '/up/secret.txt', '/up/static/leak.txt']) {
      const r = await get(probe);
      expect({ probe, status: r.status }).toEqual({ probe, status: 404 });
      expect(r.body).not.toContain('do not serve');
    }
    // a link whose real path is back inside is a file of the folder
    expect((await get('/up/static/index.html')).status).toBe(200);
  });
});
