import * as fs from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { ThreadManager } from '../../../src-main/window/threadManager.js';
import { HostWindows } from '../../../src-main/process/hostWindows.js';
import { startServe } from '../../../src-main/serve/serveServer.js';
import { loadServeState, saveServeState, SERVE_STATE_FILE } from '../../../src-main/serve/serveState.js';
import { SessionProbe, STOPPING_CLOSE_CODE } from '../../../src-shared/protocol/serveLink.js';
import { tradeLink } from '../../../e2e/serveClient.js';

const roots: string[] = [];
const tmp = () => {
  const r = fs.mkdtempSync(join(tmpdir(), 'forkbench-serve-state-'));
  roots.push(r);
  return r;
};
afterEach(() => {
  for (const r of roots.splice(0)) fs.rmSync(r, { recursive: true, force: true });
});

describe('the serve state kept per data folder', () => {
  it('is made once, owner-only, and the same on the next run, with the port and sessions the last run recorded', () => {
    const data = join(tmp(), 'data');
    const first = loadServeState(data);
    expect(first).toMatchObject({ port: null, sessions: [], replaced: null });
    expect(first.host).toMatch(/^forkbench-[0-9a-f]{32}\.localhost$/);
    const file = join(data, SERVE_STATE_FILE);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const sessions = [{ hash: 'h'.repeat(43), createdAt: 1, lastUsedAt: 2 }];
    saveServeState(data, { host: first.host, port: 43117, sessions });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(loadServeState(data)).toEqual({ host: first.host, port: 43117, sessions, replaced: null });
  });

  it('keeps the hashes of the link codes given out, and drops any that is not a hash', () => {
    const data = join(tmp(), 'data');
    const { host } = loadServeState(data);
    const codes = ['a'.repeat(43), 'b'.repeat(43)];
    saveServeState(data, { host, port: 43117, sessions: [], codes });
    expect(loadServeState(data)).toEqual({ host, port: 43117, sessions: [], codes, replaced: null });
    fs.writeFileSync(join(data, SERVE_STATE_FILE), JSON.stringify({ host, port: 43117, sessions: [], codes: ['a'.repeat(43), 'the code itself?', 7] }), { mode: 0o600 });
    expect(loadServeState(data).codes).toEqual(['a'.repeat(43)]);
  });

  it('starts afresh on a file others could read, or one that holds no state, and says why', () => {
    const data = tmp();
    const { host } = loadServeState(data);
    const file = join(data, SERVE_STATE_FILE);
    fs.chmodSync(file, 0o644);
    const widened = loadServeState(data);
    expect(widened.replaced).toMatch(/readable by others \(mode 644\)/);
    expect(widened.host).not.toBe(host);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    fs.writeFileSync(file, '{"host":"example.com","port":1,"sessions":[]}', { mode: 0o600 });
    const bad = loadServeState(data);
    expect(bad.replaced).toMatch(/did not hold serve's state/);
    expect(loadServeState(data)).toEqual({ host: bad.host, port: null, sessions: [], replaced: null });
  });

  it("keeps an earlier version's port but not its cookie token, which opens nothing now", () => {
    const data = tmp();
    fs.writeFileSync(join(data, SERVE_STATE_FILE), JSON.stringify({ token: 'A'.repeat(43), port: 43117 }), { mode: 0o600 });
    const moved = loadServeState(data);
    expect(moved).toMatchObject({ port: 43117, sessions: [], replaced: null });
    expect(JSON.stringify(moved)).not.toContain('A'.repeat(43));
    expect(fs.readFileSync(join(data, SERVE_STATE_FILE), 'utf8')).not.toContain('A'.repeat(43));
  });
});

describe('GET /session-check and a stopping host', () => {
  it('says whether the cookie is let in, and a stopping host lets every window go with its own close code', async () => {
    const root = tmp();
    const staticDir = join(root, 'static');
    fs.mkdirSync(staticDir);
    fs.writeFileSync(join(staticDir, 'index.html'), '<!doctype html><title>fb</title>');
    const threads = new ThreadManager({ dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false });
    const served = await startServe({ windows: new HostWindows(threads), staticDir, holdWindows: true });
    const own = { Host: `${served.host}:${served.port}`, Origin: served.origin };
    try {
      const { cookie } = await tradeLink(served.url);
      const probe = (cookie?: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const headers: Record<string, string> = { Host: own.Host, ...(cookie ? { Cookie: cookie } : {}) };
          http
            .get({ host: '127.0.0.1', port: served.port, path: '/session-check', headers }, (res) => {
              let body = '';
              res.on('data', (d) => (body += d));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
            })
            .on('error', reject);
        });
      // held until the host says it is ready: a page that comes early is told to wait, not let in
      const early = await probe(cookie);
      expect(early).toEqual({ status: SessionProbe.unavailable, body: 'the Forkbench host is starting\n' });
      served.admit();
      expect((await probe(cookie)).status).toBe(SessionProbe.admitted);
      const wrong = await probe('forkbench=not-the-token');
      expect(wrong.status).toBe(SessionProbe.refused);
      expect(wrong.body).toMatch(/open the newest link/);
      expect((await probe()).status).toBe(SessionProbe.refused);

      const ws = new WebSocket(`ws://127.0.0.1:${served.port}/ws`, { headers: { ...own, Cookie: cookie } });
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
      served.stopping();
      expect(await closed).toBe(STOPPING_CLOSE_CODE);
      expect((await probe(cookie)).status).toBe(SessionProbe.unavailable);
      // and no new window gets in while it stops
      const again = await new Promise<number>((resolve) => {
        const w2 = new WebSocket(`ws://127.0.0.1:${served.port}/ws`, { headers: { ...own, Cookie: cookie } });
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
