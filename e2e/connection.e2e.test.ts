import * as fs from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ensureRendererBuilt, SHOTS, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { serveRequest } from './serveClient.js';

/**
 * Issue 20, finding 2: an honest connection. The host stops: within a second the page is greyed, says the
 * host stopped, and no agent reads "running". The host comes back on the same data folder: same port, same
 * token, and the page is live again within 2 s without a new link. A wrong token, or a link already used,
 * says so in the page.
 */
let browser: Browser | undefined;
const win = windowForFile({ page: false });

const state = (page: Page) => page.getByTestId('connection-status').getAttribute('data-state');
const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`) });

describe('the connection in a real browser', () => {
  it('greys the page when the host stops, reconnects when it returns, and says when a token is wrong', async () => {
    ensureRendererBuilt();
    fs.mkdirSync(SHOTS, { recursive: true });
    const first = await win.serve();
    browser = await win.chromium();
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(withQuery(first.url, 'debug=1'));
    await expect.poll(() => state(page)).toBe('connected');
    await page.getByTestId('add-task-title').fill('Survive a restart');
    await page.getByTestId('add-task-submit').click();
    await page.getByTestId('card-T-1').waitFor();
    await page.getByTestId('launch-menu').click();
    await page.getByTestId('launch-shell').click();
    const tab = page.locator('[data-testid^="agent-tab-"]').first();
    await expect.poll(() => tab.getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
    expect(await page.getByTestId('layout').getAttribute('data-offline')).toBe('false');

    // Ctrl-C on serve: the page is greyed and says so within a second.
    const stoppedAt = Date.now();
    const exited = first.stop();
    await expect.poll(() => state(page), { timeout: 1000, interval: 20 }).toBe('host-stopped');
    const greyedMs = Date.now() - stoppedAt;
    expect(await page.getByTestId('layout').getAttribute('data-offline')).toBe('true');
    expect(await page.getByTestId('connection-banner').textContent()).toMatch(/host stopped.*reconnects by itself/);
    const main = await page.getByTestId('main').evaluate((el) => ({ filter: getComputedStyle(el).filter, inert: (el as HTMLElement).inert }));
    expect(main).toEqual({ filter: 'grayscale(1)', inert: true });
    // what the tab says where it said "running"
    const shown = await tab.locator('.tab-status').evaluate((el) => getComputedStyle(el, '::after').content);
    expect(shown).toBe('"unknown"');
    console.log(`page greyed ${greyedMs} ms after SIGINT`);
    await shot(page, 'connection-01-host-stopped');
    expect(await exited).toBe(0);

    // The host returns on the same data folder: same name, same port, the browser's session kept; the page
    // is live again by itself.
    const second = await win.serve({ root: first.root });
    const backAt = Date.now();
    expect(second.port).toBe(first.port);
    expect(second.host).toBe(first.host);
    expect(fs.statSync(join(first.root, 'data', 'serve.json')).mode & 0o777).toBe(0o600);
    await expect.poll(() => state(page), { timeout: 2000, interval: 20 }).toBe('connected');
    const liveMs = Date.now() - backAt;
    await expect.poll(() => page.getByTestId('layout').getAttribute('data-offline')).toBe('false');
    await page.getByTestId('card-T-1').waitFor();
    // the old agent ended with the old host: its tab says so, not "running"
    await expect.poll(() => page.locator('[data-testid^="agent-tab-"][data-status="running"]').count()).toBe(0);
    console.log(`page live again ${liveMs} ms after the restarted serve printed its link`);
    await shot(page, 'connection-02-live-again');

    // A wrong token: the page says it is not let in and what to do, instead of "connecting…" forever.
    const wrong = await browser.newContext();
    await wrong.addCookies([{ name: 'forkbench', value: 'x'.repeat(43), domain: second.host, path: '/' }]);
    const wrongPage = await wrong.newPage();
    await wrongPage.goto(`http://${second.host}:${second.port}/`);
    await expect.poll(() => state(wrongPage), { timeout: 5000 }).toBe('refused');
    expect(await wrongPage.getByTestId('connection-banner').textContent()).toMatch(/does not accept this page.*Open the newest link/);
    await shot(wrongPage, 'connection-03-wrong-token');
    await wrong.close();

    // A link someone else used already, in a browser with no session: said as such.
    const code = new URL(second.url).hash.replace('#code=', '');
    const spent = await serveRequest(second, { method: 'POST', path: '/session', body: code });
    expect(spent.status).toBe(204);
    const late = await browser.newContext();
    const latePage = await late.newPage();
    await latePage.goto(second.url);
    await expect.poll(() => state(latePage), { timeout: 5000 }).toBe('link-spent');
    expect(await latePage.getByTestId('connection-banner').textContent()).toMatch(/link was used already/);
    await shot(latePage, 'connection-04-link-spent');
    await late.close();
  }, 120_000);
});
