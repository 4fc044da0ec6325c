import * as fs from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { ThreadManager } from '../../../src-main/host/threadManager.js';
import { startServe } from '../../../src-main/serve/serveServer.js';
import { loadServeState, saveServeState, SERVE_STATE_FILE } from '../../../src-main/serve/serveState.js';
import { SessionProbe, STOPPING_CLOSE_CODE } from '../../../src-shared/protocol/serveLink.js';

const roots: string[] = [];
const tmp = () => {
  const r = fs.mkdtempSync(join(tmpdir(), 'forkbench-serve-state-'));
  roots.push(r);
  return r;
};
afterEach(() => {
  for (const r of roots.splice(0)) fs.rmSync(r, { recursive: true, force: true });
});

describe('the serve token kept per data folder', () => {
  it('is made once, owner-only, and the same on the next run, with the port the last run recorded', () => {
    const data = join(tmp(), 'data');
    const first = loadServeState(data);
    expect(first).toMatchObject({ port: null, replaced: null });
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const file = join(data, SERVE_STATE_FILE);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    saveServeState(data, { token: first.token, port: 43117 });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(loadServeState(data)).toEqual({ token: first.token, port: 43117, replaced: null });
  });

  it('replaces a token others could read, or a file that holds none, and says why', () => {
    const data = tmp();
    const { token } = loadServeState(data);
    const file = join(data, SERVE_STATE_FILE);
    fs.chmodSync(file, 0o644);
    const widened = loadServeState(data);
    expect(widened.replaced).toMatch(/readable by others \(mode 644\)/);
    expect(widened.token).not.toBe(token);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    fs.writeFileSync(file, '{"token":"short"}', { mode: 0o600 });
    const bad = loadServeState(data);
    expect(bad.replaced).toMatch(/did not hold a serve token/);
    expect(loadServeState(data)).toEqual({ token: bad.token, port: null, replaced: null });
  });
});

describe('GET /session-check and a stopping host', () => {
  it('says whether the cookie is let in, and a stopping host lets every window go with its own close code', async () => {
    const root = tmp();
    const staticDir = join(root, 'static');
    fs.mkdirSync(staticDir);
    fs.writeFileSync(join(staticDir, 'index.html'), '<!doctype html><title>fb</title>');
    const threads = new ThreadManager({ dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false });
    const served = await startServe({ threads, staticDir, holdWindows: true });
    try {
      const probe = (cookie?: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const headers: Record<string, string> = cookie ? { Cookie: cookie } : {};
          http
            .get({ host: '127.0.0.1', port: served.port, path: '/session-check', headers }, (res) => {
              let body = '';
              res.on('data', (d) => (body += d));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
            })
            .on('error', reject);
        });
      // held until the host says it is ready: a page that comes early is told to wait, not let in
      const early = await probe(served.cookie);
      expect(early).toEqual({ status: SessionProbe.unavailable, body: 'the Forkbench host is starting\n' });
      served.admit();
      expect((await probe(served.cookie)).status).toBe(SessionProbe.admitted);
      const wrong = await probe(`forkbench-${served.port}=not-the-token`);
      expect(wrong.status).toBe(SessionProbe.refused);
      expect(wrong.body).toMatch(/open the newest link/);
      expect((await probe()).status).toBe(SessionProbe.refused);

      const ws = new WebSocket(`ws://127.0.0.1:${served.port}/ws`, { headers: { Origin: `http://127.0.0.1:${served.port}`, Cookie: served.cookie } });
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
      served.stopping();
      expect(await closed).toBe(STOPPING_CLOSE_CODE);
      expect((await probe(served.cookie)).status).toBe(SessionProbe.unavailable);
      // and no new window gets in while it stops
      const again = await new Promise<number>((resolve) => {
        const w2 = new WebSocket(`ws://127.0.0.1:${served.port}/ws`, { headers: { Origin: `http://127.0.0.1:${served.port}`, Cookie: served.cookie } });
        w2.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        w2.once('open', () => resolve(101));
        w2.once('error', () => undefined);
      });
      expect(again).toBe(503);
    } finally {
      await threads.dispose();
      await served.close();
    }
  });
});
