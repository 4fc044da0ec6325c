import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { SESSION_ENDED_CLOSE_CODE } from '../src-shared/protocol/serveLink.js';
import { join } from 'node:path';
import { ensureRendererBuilt, SHOTS, type Served } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { windowSocket } from './windowClient.js';

// Issue 29, finding 5: browsers keep cookies per host name, not per port, so once the serve link was opened
// every other server on 127.0.0.1 was sent `Cookie: forkbench-<port>=<token>`, and that token with a forged
// Origin got 101 on /ws. Here a real Chromium opens the link, then visits a second local server on another
// port, which records every request it is sent; and credentials that are old, revoked or someone else's get
// no socket.

let browser: Browser | undefined;
let served: Served | undefined;
let other: http.Server | undefined;
const win = windowForFile({ page: false });
win.after(() => new Promise((r) => (other ? other.close(r) : r(undefined))));

const state = (page: import('playwright-core').Page) => page.getByTestId('connection-status').getAttribute('data-state');

/** The socket's refusal status, or 101 when it opened (then closed at once). */
function tryWindow(s: Parameters<typeof windowSocket>[0]): Promise<number> {
  return new Promise((resolve) => {
    const ws = windowSocket(s);
    ws.once('open', () => (ws.close(), resolve(101)));
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('error', () => resolve(0));
  });
}

describe("the window's credential in a real browser", () => {
  it('is sent to no other local server, and one that is old, revoked or copied opens no window', async () => {
    ensureRendererBuilt();
    served = await win.serve();
    const s = served;
    // A second server on 127.0.0.1, as any local user or program may run: it records what it is sent.
    const seen: Array<{ url: string; headers: http.IncomingHttpHeaders }> = [];
    other = http.createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>other</title><img src="/pixel.png">');
    });
    await new Promise<void>((r) => other?.listen(0, '127.0.0.1', r));
    const otherPort = (other.address() as AddressInfo).port;

    browser = await win.chromium();
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(s.url);
    await expect.poll(() => state(page), { timeout: 15_000 }).toBe('connected');
    const credential = (await context.cookies()).find((c) => c.name.startsWith('forkbench'))?.value ?? '';
    expect(credential).toMatch(/^[\w-]{43}$/);

    // The browser visits the other server, by both loopback names, as a page and its subresources.
    const visit = await context.newPage();
    for (const name of ['127.0.0.1', 'localhost']) {
      await visit.goto(`http://${name}:${otherPort}/`);
      await visit.waitForLoadState('load');
    }
    // a request with credentials, from a page of the other server to its other name
    await visit.evaluate((port) => fetch(`http://127.0.0.1:${port}/with-credentials`, { mode: 'no-cors', credentials: 'include' }), otherPort);
    await expect.poll(() => seen.filter((r) => r.url === '/with-credentials').length).toBe(1);
    expect(seen.filter((r) => r.url === '/pixel.png').length).toBeGreaterThanOrEqual(2);
    // Nothing of Forkbench's: no cookie at all, and the credential in no header.
    for (const r of seen) {
      expect({ url: r.url, cookie: r.headers.cookie }).toEqual({ url: r.url, cookie: undefined });
      expect(JSON.stringify(r.headers)).not.toContain(credential);
      expect(JSON.stringify(r.headers)).not.toMatch(/forkbench/i);
    }
    console.log(`the other server was sent ${seen.length} requests, none with a cookie`);

    // The name resolves to both loopbacks and Chromium tries [::1] first: serve holds that side of its port
    // too, so no other program can listen there and be sent the page's cookie.
    const squat = http.createServer();
    const squatted = await new Promise<string>((resolve) => {
      squat.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
      squat.listen(s.port, '::1', () => resolve('listening'));
    });
    squat.close();
    expect(['EADDRINUSE', 'EADDRNOTAVAIL', 'EAFNOSUPPORT']).toContain(squatted);

    // The page of the link, at a loopback address instead of its own name, is not served: no page there
    // could hold a cookie that other ports see.
    const byAddress = await context.newPage();
    const answer = await byAddress.goto(`http://127.0.0.1:${s.port}/`);
    expect(answer?.status()).toBe(403);

    // A credential copied from an earlier trade (the harness's), with a forged Origin, is someone else's
    // session: it works until a window signs the others out, then its open window is closed and no new one opens.
    expect(await tryWindow(s)).toBe(101);
    const copied = windowSocket(s);
    await new Promise((r, j) => (copied.once('open', r), copied.once('error', j)));
    const cut = new Promise<number>((r) => copied.once('close', (code) => r(code)));
    await page.getByTestId('revoke-other-sessions').click();
    await expect.poll(() => page.getByTestId('revoke-other-sessions').textContent()).toMatch(/\(1 signed out\)/);
    expect(await cut).toBe(SESSION_ENDED_CLOSE_CODE);
    fs.mkdirSync(SHOTS, { recursive: true });
    await page.locator('.topbar').screenshot({ path: join(SHOTS, 'serve-credential-signed-out-others.png') });
    expect(await tryWindow(s)).toBe(401);
    // the page that signed the others out is still live
    expect(await state(page)).toBe('connected');
    // The browser's credential from its previous trade, copied out: when that browser opens a new link, the
    // trade ends the old credential, and the page goes on with its new one.
    const previous = { ...s, cookie: `forkbench=${credential}` };
    expect(await tryWindow(previous)).toBe(101);
    await expect.poll(() => s.links().length).toBe(3);
    await page.goto(s.links()[2] as string);
    await expect.poll(() => state(page), { timeout: 15_000 }).toBe('connected');
    const renewed = (await context.cookies()).find((c) => c.name.startsWith('forkbench'))?.value ?? '';
    expect(renewed).toMatch(/^[\w-]{43}$/);
    expect(renewed).not.toBe(credential);
    expect(await tryWindow(previous)).toBe(401);
    // The browser's own credential, copied out and replayed from elsewhere, works only while its session
    // lives: once that browser signs out (its own session revoked) it opens nothing.
    const stolen = { ...s, cookie: `forkbench=${renewed}` };
    expect(await tryWindow(stolen)).toBe(101);
    const own = await page.evaluate(() => fetch('/session-revoke', { method: 'POST', body: 'own' }).then((r) => r.status));
    expect(own).toBe(200);
    expect(await tryWindow(stolen)).toBe(401);
    await expect.poll(() => state(page), { timeout: 10_000 }).toBe('refused');
    // and the link the page was opened with is spent
    const again = await browser.newPage();
    await again.goto(s.url);
    await expect.poll(() => state(again), { timeout: 10_000 }).toBe('link-spent');
  }, 120_000);
});
