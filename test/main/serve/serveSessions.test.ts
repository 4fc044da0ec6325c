import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { serveRequest, tradeLink } from '../../../e2e/serveClient.js';
import { ThreadManager } from '../../../src-main/window/threadManager.js';
import { HostWindows } from '../../../src-main/process/hostWindows.js';
import { ServeConstants, startServe, type ServeHandle } from '../../../src-main/serve/serveServer.js';
import { SessionConstants, type SavedSession } from '../../../src-main/serve/serveSession.js';
import { CodeTrade, SESSION_ENDED_CLOSE_CODE, SessionProbe } from '../../../src-shared/protocol/serveLink.js';
import { manualTimers } from '../../helpers/manualTimers.js';

// Issue 29, finding 5: the window's credential never rotated or expired. Each trade now makes a credential of
// that browser's own, which expires (by the injected wall clock, no sleeps) and which a window can revoke;
// the host keeps only hashes. Real servers, real sockets.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A serve host on a fresh data folder, its wall clock and timers in the test's hands. */
async function host(o: { port?: number; sessions?: { port: number | null; saved: readonly SavedSession[]; codes?: readonly string[] }; root?: string } = {}) {
  const root = o.root ?? fs.mkdtempSync(join(tmpdir(), 'forkbench-sessions-'));
  if (!o.root) cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const staticDir = join(root, 'static');
  fs.mkdirSync(staticDir, { recursive: true });
  fs.writeFileSync(join(staticDir, 'index.html'), '<!doctype html><title>fb</title>');
  const threads = new ThreadManager({ dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false });
  const clock = { ms: Date.UTC(2026, 0, 1) };
  const t = manualTimers();
  const links: string[] = [];
  const kept: { saved: SavedSession[]; codes: string[] } = { saved: [], codes: [] };
  const served = await startServe({
    windows: new HostWindows(threads),
    staticDir,
    port: o.port,
    host: 'forkbench-0123456789abcdef0123456789abcdef.localhost',
    sessions: o.sessions,
    onSessionsChanged: (saved, codes) => Object.assign(kept, { saved, codes }),
    onLinkUsed: (url) => links.push(url),
    now: () => clock.ms,
    timers: t.timers,
  });
  cleanups.push(async () => {
    await served.close();
    await threads.dispose();
  });
  let link = served.url;
  /** Trades the live link as a browser does: that browser's Cookie header. */
  const browser = async () => {
    const { cookie } = await tradeLink(link);
    link = links.at(-1) as string;
    return cookie;
  };
  return { root, served, clock, t, kept, browser, link: () => link };
}

/** Opens the window socket with `cookie`: the socket, or the refusal's status. */
function connect(s: ServeHandle, cookie: string): Promise<{ ws?: WebSocket; status?: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${s.port}/ws`, { headers: { Host: `${s.host}:${s.port}`, Origin: s.origin, Cookie: cookie } });
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => resolve({ status: res.statusCode }));
    ws.once('error', () => resolve({}));
  });
}

async function opens(s: ServeHandle, cookie: string): Promise<WebSocket> {
  const { ws, status } = await connect(s, cookie);
  if (!ws) throw new Error(`refused: ${status}`);
  return ws;
}

const closeCode = (ws: WebSocket) => new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
const probe = async (s: ServeHandle, cookie: string) => (await serveRequest(s, { path: '/session-check', headers: { Cookie: cookie } })).status;
const revoke = (s: ServeHandle, cookie: string, what: string) => serveRequest(s, { method: 'POST', path: '/session-revoke', body: what, headers: { Cookie: cookie } });

describe('browser sessions on serve', () => {
  it('tells a spent link (used, or live in the run before a restart) from one it never gave out', async () => {
    const h = await host();
    // Connection: close, so no kept-alive socket to the first run's server is reused after its restart.
    const trade = (s: ServeHandle, code: string) => serveRequest(s, { method: 'POST', path: '/session', body: code, headers: { Connection: 'close' } });
    const codeOf = (link: string) => new URL(link).hash.replace('#code=', '');
    const used = codeOf(h.link());
    await h.browser();
    const spent = await trade(h.served, used);
    expect(spent).toMatchObject({ status: CodeTrade.spent, body: expect.stringMatching(/used already/) });
    // Made up, the same length and alphabet as a real one, or a real one cut short: never given out.
    for (const madeUp of ['A'.repeat(43), used.slice(0, 42), `${used}x`, '']) {
      expect(await trade(h.served, madeUp)).toMatchObject({ status: CodeTrade.unknown, body: expect.stringMatching(/never gave out this link/) });
    }
    // What is kept is hashes only: no code the host gave out is in it, the live one least of all.
    const live = codeOf(h.link());
    const file = JSON.stringify(h.kept.codes);
    expect(h.kept.codes).toHaveLength(2);
    for (const c of [used, live]) expect(file).not.toContain(c);
    // A restart on the same data folder: the last run's live link, never used, is spent now (a new run has a
    // new code), and is said so; the used one still is; a made-up one is still never given out.
    const port = h.served.port;
    await h.served.close();
    const next = await host({ root: h.root, port, sessions: { port, saved: h.kept.saved, codes: h.kept.codes } });
    expect((await trade(next.served, live)).status).toBe(CodeTrade.spent);
    expect((await trade(next.served, used)).status).toBe(CodeTrade.spent);
    expect((await trade(next.served, 'B'.repeat(43))).status).toBe(CodeTrade.unknown);
    // Answering never spends the live code: the new link still opens a browser.
    expect(codeOf(next.link())).not.toBe(live);
    await next.browser();
  });

  it('gives each trade a credential of its own', async () => {
    const h = await host();
    const [a, b] = [await h.browser(), await h.browser()];
    expect(a).not.toBe(b);
    (await opens(h.served, a)).close();
    (await opens(h.served, b)).close();
    // the host keeps hashes: nothing it writes down opens a window
    expect(h.kept.saved).toHaveLength(2);
    const file = JSON.stringify(h.kept.saved);
    for (const c of [a, b]) expect(file).not.toContain(c.slice(c.indexOf('=') + 1));
  });

  it('refuses a credential unused for the idle time, by the injected clock, and not a millisecond before', async () => {
    const h = await host();
    const cookie = await h.browser();
    const ws = await opens(h.served, cookie);
    // a window open with it keeps it in use, however long
    h.clock.ms += SessionConstants.idleMs * 2;
    expect(await probe(h.served, cookie)).toBe(SessionProbe.admitted);
    // the idle time starts from the last window's close (the host records it: wait for that, not a delay)
    ws.close();
    await expect.poll(() => h.kept.saved[0]?.lastUsedAt).toBe(h.clock.ms);
    h.clock.ms += SessionConstants.idleMs - 1;
    expect(await probe(h.served, cookie)).toBe(SessionProbe.admitted);
    h.clock.ms += 1;
    expect(await connect(h.served, cookie)).toEqual({ status: 401 });
    expect(await probe(h.served, cookie)).toBe(SessionProbe.refused);
  });

  it('ends a credential at its lifetime however much it is used: its open window is closed by the sweep', async () => {
    const h = await host();
    const cookie = await h.browser();
    const ws = await opens(h.served, cookie);
    const closed = closeCode(ws);
    h.clock.ms += SessionConstants.lifetimeMs - 1;
    h.t.fire((ms) => ms === ServeConstants.expirySweepMs);
    expect(ws.readyState).toBe(WebSocket.OPEN);
    h.clock.ms += 1;
    h.t.fire((ms) => ms === ServeConstants.expirySweepMs);
    expect(await closed).toBe(SESSION_ENDED_CLOSE_CODE);
    expect(await connect(h.served, cookie)).toEqual({ status: 401 });
    // the sweep goes on for the next ones
    expect(h.t.has((ms) => ms === ServeConstants.expirySweepMs)).toBe(true);
  });

  it("ends a browser's previous credential when that browser trades a new link: a copy of the old one opens nothing", async () => {
    const h = await host();
    const old = await h.browser();
    const oldWindow = await opens(h.served, old);
    const cut = closeCode(oldWindow);
    // the same browser opens the next link: its trade carries the cookie it has
    const next = h.link();
    const traded = await serveRequest(h.served, { method: 'POST', path: '/session', body: new URL(next).hash.replace('#code=', ''), headers: { Cookie: old } });
    expect(traded.status).toBe(204);
    const fresh = String(traded.headers['set-cookie']).split(';')[0] as string;
    expect(fresh).not.toBe(old);
    expect(await cut).toBe(SESSION_ENDED_CLOSE_CODE);
    expect(await connect(h.served, old)).toEqual({ status: 401 });
    (await opens(h.served, fresh)).close();
  });

  it("lets a window sign out the other browsers, closing their windows at once, and then its own", async () => {
    const h = await host();
    const mine = await h.browser();
    const stolen = await h.browser();
    const theirs = await opens(h.served, stolen);
    const cut = closeCode(theirs);
    // only the page's own origin may, only with a session, and only say what it ends
    const foreign = await serveRequest(h.served, { method: 'POST', path: '/session-revoke', body: 'others', headers: { Cookie: mine, Origin: `http://127.0.0.1:${h.served.port}` } });
    expect(foreign.status).toBe(403);
    expect((await revoke(h.served, 'forkbench=nothing', 'others')).status).toBe(401);
    expect((await revoke(h.served, mine, 'everything')).status).toBe(400);
    expect(theirs.readyState).toBe(WebSocket.OPEN);
    expect(await revoke(h.served, mine, 'others')).toMatchObject({ status: 200, body: '1' });
    expect(await cut).toBe(SESSION_ENDED_CLOSE_CODE);
    expect(await connect(h.served, stolen)).toEqual({ status: 401 });
    const again = await revoke(h.served, mine, 'others');
    expect(again).toMatchObject({ status: 200, body: '0' });
    (await opens(h.served, mine)).close();
    expect((await revoke(h.served, mine, 'own')).status).toBe(200);
    expect(await connect(h.served, mine)).toEqual({ status: 401 });
  });

  it('keeps the sessions across a restart on the same port, and drops them on another', async () => {
    const first = await host();
    const cookie = await first.browser();
    const saved = first.kept.saved;
    const port = first.served.port;
    await first.served.close();
    const same = await host({ port, sessions: { port, saved }, root: first.root });
    (await opens(same.served, cookie)).close();
    await same.served.close();
    const moved = await host({ port: 0, sessions: { port, saved }, root: first.root });
    expect(moved.served.port).not.toBe(port);
    expect(await connect(moved.served, cookie)).toEqual({ status: 401 });
    expect(moved.kept.saved).toEqual([]);
  });

  it(`keeps at most ${SessionConstants.maxSessions} sessions, the least recently used going first but never one with a window open`, async () => {
    const h = await host();
    const first = await h.browser();
    const ws = await opens(h.served, first);
    const second = await h.browser();
    for (let i = 0; i < SessionConstants.maxSessions; i++) {
      h.clock.ms += 1;
      await h.browser();
    }
    expect(h.kept.saved).toHaveLength(SessionConstants.maxSessions);
    expect(await probe(h.served, first)).toBe(SessionProbe.admitted);
    expect(await probe(h.served, second)).toBe(SessionProbe.refused);
    ws.close();
  });
});
