import * as fs from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { SHOTS, type WindowSession, withQuery } from './harness.js';
import { VIEWPORT, windowForFile } from './windowForFile.js';
import { launchFromMenu, screenText, typeIn } from './pageActions.js';

/**
 * Every notice from the host (issue 30, finding 7), end to end: `forkbench serve`, Chromium, real ptys. A shell
 * agent reports through the real `forkbench status` that it waits for the person while two windows show its
 * Thread: the host's one notice is raised as ONE OS notification between them (each window's Notification
 * constructions are counted, and its claims of notices from the host recorded), and a window opened after the
 * agent started waiting shows the notice too.
 */
let w: WindowSession;
let context: BrowserContext;

/** What one window did: the OS notifications it made and closed, and the host's answers to its notice claims. */
interface Seen {
  notes: Array<{ title: string; tag: string }>;
  closed: string[];
  claims: boolean[];
}

const win = windowForFile();

beforeAll(async () => {
  w = win.session;
  // A context of its own: the harness's page is in one that makes no second page.
  context = await win.newContext({ viewport: VIEWPORT });
  await context.addInitScript(() => {
    const seen: Seen = { notes: [], closed: [], claims: [] };
    (window as unknown as { __seen: Seen }).__seen = seen;
    class Recorded {
      static permission = 'granted';
      static requestPermission = async () => 'granted';
      onclick: null | (() => void) = null;
      onclose: null | (() => void) = null;
      private readonly tag: string;
      constructor(title: string, o: { tag?: string } = {}) {
        this.tag = o.tag ?? '';
        seen.notes.push({ title, tag: this.tag });
      }
      close() {
        seen.closed.push(this.tag);
        this.onclose?.();
      }
    }
    (window as unknown as { Notification: unknown }).Notification = Recorded;
    // The host's answer to each `notice.claim` this window sent, read off its socket before the page reads it.
    const claimIds = new Set<number>();
    const Native = window.WebSocket;
    class Watched extends Native {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, protocols);
        this.addEventListener('message', (e) => {
          if (typeof e.data !== 'string') return;
          const m = JSON.parse(e.data) as { id?: number; ok?: boolean; value?: unknown };
          if (m.id !== undefined && claimIds.delete(m.id)) seen.claims.push(m.ok === true && m.value === true);
        });
      }
      override send(data: string | ArrayBufferLike | Blob | ArrayBufferView): void {
        if (typeof data === 'string' && data.includes('"notice.claim"')) claimIds.add((JSON.parse(data) as { id: number }).id);
        super.send(data);
      }
    }
    window.WebSocket = Watched as typeof WebSocket;
  });
}, 60_000);

const seen = (p: Page) => p.evaluate(() => (window as unknown as { __seen: Seen }).__seen);
const connected = (p: Page) => expect.poll(() => p.getByTestId('connection-status').getAttribute('data-state'), { timeout: 15_000 }).toBe('connected');

describe('notices from the host', () => {
  it('two windows on one Thread raise one OS notification for one agent starting to wait; a window opened later shows it', async () => {
    const a = await context.newPage();
    await a.goto(withQuery(w.served.url, 'debug=1'));
    await connected(a);
    // The page's own address, its one-time code spent: further windows of this browser open it with the cookie.
    const address = withQuery(new URL(a.url()).origin + '/', 'debug=1');
    await a.getByTestId('add-task-title').fill('Deploy the site');
    await a.getByTestId('add-task-submit').click();
    const asking = await launchFromMenu(a, 'exec sh -i');
    const other = await launchFromMenu(a, 'exec sh -i');
    await a.getByTestId('notify-agents').click();
    await expect.poll(() => a.getByTestId('notify-agents').isChecked()).toBe(true);
    await a.getByTestId(`agent-tab-${asking}`).click();
    await expect.poll(() => screenText(a, asking), { timeout: 45_000 }).toMatch(/[#$]\s*$/);

    const b = await context.newPage();
    await b.goto(address);
    await connected(b);
    await expect.poll(() => b.getByTestId(`agent-tab-${other}`).count(), { timeout: 15_000 }).toBe(1);

    // The agent claims T-1 and asks once the test says go: by then both windows look at the other tab, so
    // neither leaves the notice out as one about the tab the person is looking at.
    // The signal lies in the Thread folder: the agent's sandbox has a private /tmp, where a file of the test's is not.
    const go = join(w.served.folder, 'go');
    await typeIn(a, asking, `forkbench claim T-1 && while [ ! -e ${go} ]; do sleep 0.05; done && forkbench status needs-input --text 'Deploy now?'`);
    await expect.poll(() => a.getByTestId('card-T-1').getAttribute('data-holder'), { timeout: 30_000 }).toBe(asking);
    for (const p of [a, b]) {
      await p.getByTestId(`agent-tab-${other}`).click();
      await expect.poll(() => p.getByTestId(`agent-tab-${other}`).getAttribute('aria-selected')).toBe('true');
    }
    fs.writeFileSync(go, '');

    // Both windows were told (the notice stands in each) and both asked the host to raise it: one was let.
    for (const p of [a, b]) {
      await expect.poll(() => p.getByTestId('host-notice').count(), { timeout: 15_000 }).toBe(1);
      await expect.poll(async () => (await seen(p)).claims.length, { timeout: 10_000 }).toBe(1);
    }
    const both = [await seen(a), await seen(b)];
    expect(both.flatMap((s) => s.claims).sort()).toEqual([false, true]);
    await expect.poll(async () => (await seen(a)).notes.length + (await seen(b)).notes.length).toBe(1);
    const [note] = [...(await seen(a)).notes, ...(await seen(b)).notes];
    expect(note!.title).toMatch(/is waiting for you$/);
    expect(note!.tag).toMatch(new RegExp(`^waiting:${asking}@\\d+$`));
    expect(await a.getByTestId('host-notice').getAttribute('data-notice-id')).toBe(note!.tag);

    // A window opened after the agent started waiting is given the notice with its snapshot and shows it (on
    // the waiting agent's tab, its first); the OS notification was raised already, and it raises none.
    const c = await context.newPage();
    await c.goto(address);
    await connected(c);
    await expect.poll(() => c.getByTestId('host-notice').count(), { timeout: 15_000 }).toBe(1);
    expect(await c.getByTestId('host-notice').getAttribute('data-notice-id')).toBe(note!.tag);
    expect(await c.getByTestId('host-notice').innerText()).toContain('Deploy now?');
    expect((await seen(c)).notes).toEqual([]);
    await c.screenshot({ path: join(SHOTS, 'host-notices-01-later-window.png') });

    // The agent goes on working: the notice is no longer true, every window drops it, and the window that
    // raised its OS notification closes it.
    await typeIn(a, asking, 'forkbench status working');
    for (const p of [a, b, c]) await expect.poll(() => p.getByTestId('host-notice').count(), { timeout: 10_000 }).toBe(0);
    await expect.poll(async () => [...(await seen(a)).closed, ...(await seen(b)).closed]).toEqual([note!.tag]);
  }, 120_000);
});
