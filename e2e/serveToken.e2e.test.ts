import * as fs from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ensureRendererBuilt, type Served } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { serveRequest } from './serveClient.js';

// Issue 16: the page took `?token=` out of its address, but Chromium had stored the navigated address
// already: History, the cache and the session kept the token. Here a real Chromium with a profile on disk
// opens the printed URL; afterwards neither the requests it made nor any file of its profile holds the token.

let served: Served | undefined;
let context: BrowserContext | undefined;
const win = windowForFile({ page: false });

/** Every file under `dir` whose bytes contain `needle`, as paths relative to `dir`. */
function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  for (const rel of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, rel);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      continue; // a lock or temp file gone since the listing
    }
    if (st.isFile() && fs.readFileSync(p).includes(needle)) hits.push(rel);
  }
  return hits;
}

describe('the serve token in a real browser', () => {
  it('is never a navigated address, a request URL or anything the profile keeps', async () => {
    ensureRendererBuilt();
    served = await win.serve();
    const s = served;
    const profile = join(s.root, 'profile');
    context = await win.persistentContext(profile);
    const requested: string[] = [];
    const addresses: string[] = [];
    context.on('request', (r) => requested.push(r.url()));
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('websocket', (ws) => requested.push(ws.url()));
    page.on('framenavigated', (f) => addresses.push(f.url()));

    await page.goto(s.url);
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state'), { timeout: 15_000 }).toBe('connected');
    await page.getByTestId('thread-goal').waitFor();
    addresses.push(await page.evaluate(() => location.href));
    // a reload comes back without the printed URL
    await page.reload();
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state'), { timeout: 15_000 }).toBe('connected');
    addresses.push(await page.evaluate(() => location.href));

    const code = new URL(s.url).hash.replace('#code=', '');
    // The browser's own credential (its trade made one for it alone), as the browser keeps it.
    const credential = (await context.cookies()).find((c) => c.name === 'forkbench')?.value ?? '';
    expect(credential).toMatch(/^[\w-]{43}$/);
    expect(credential).not.toBe(s.credential);
    expect(new URL(addresses.at(-1) as string).hash).toBe(''); // the code is out of the address bar
    expect(requested.length).toBeGreaterThan(2);
    expect(requested.some((u) => u.startsWith(`ws://${s.host}:${s.port}/ws`))).toBe(true);
    expect(requested.filter((u) => u.includes(credential))).toEqual([]);
    for (const a of addresses) expect(new URL(a).searchParams.has('token')).toBe(false);
    expect(addresses.filter((a) => a.includes(credential))).toEqual([]);

    // Closing the browser writes out History, Cookies, the session and the cache.
    await context.close();
    context = undefined;
    // The scan reads what the browser kept: files that name this server's address. A full Chromium keeps it
    // in History; the headless shell of the npm package keeps no History, but its session storage has it.
    const kept = filesContaining(join(profile, 'Default'), `${s.host}:${s.port}`);
    expect(kept.some((f) => f === 'History' || f.startsWith('Session Storage/')), kept.join(', ')).toBe(true);
    expect(filesContaining(profile, credential)).toEqual([]);
    expect(filesContaining(profile, encodeURIComponent(credential))).toEqual([]);
    // What it kept of the printed link (History has `/#code=…`) opens nothing: the code is spent.
    const again = await serveRequest(s, { method: 'POST', path: '/session', body: code });
    expect(again.status).toBe(410);
  }, 90_000);
});
