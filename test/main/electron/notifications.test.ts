/**
 * One OS notification per lapse in Electron: the main process forwards the host's notice to its Thread's
 * window and raises none itself; the page (Electron's renderer has the Notification API) raises the one. The
 * main process is loaded against a fake `electron` module (the binary cannot be downloaded here) whose
 * Notification counts what is made; the page is the real controller fed what the window was sent.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { lapseNotice } from '../../../src-shared/notices/notices.js';
import type { WindowPush } from '../../../src-shared/protocol/windowApi.js';
import { AppController } from '../../../src-renderer/state/controller.js';
import { fake, FAKE_THREAD_KEY as KEY } from '../../helpers/fakeElectron.js';
import { agent, engineWith, FakeTransport, settle, snapshotOf } from '../../helpers/renderer.js';

vi.mock('electron', async () => (await import('../../helpers/fakeElectron.js')).fake.electron);
vi.mock('electron-store', async () => (await import('../../helpers/fakeElectron.js')).fakeStore);
vi.mock('../../../src-main/window/threadManager.js', async () => (await import('../../helpers/fakeElectron.js')).fakeThreadManager);
vi.mock('../../../src-main/window/windowRouter.js', async () => (await import('../../helpers/fakeElectron.js')).fakeWindowRouter);

const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-electron-notices-'));
fake.dataDir.path = root;
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('Electron’s notices', () => {
  it('a lapse gives one OS notification: main forwards the notice to its Thread’s window and raises none; the page raises it', async () => {
    await import('../../../src-main/electron/main.js');
    await vi.waitFor(() => expect(fake.push.fire).not.toBeNull());
    const notice: WindowPush = { type: 'notify', key: KEY, ...lapseNotice('T-1', 'shell 1', 'parse', 'open') };
    // The window of the Thread is open once main has started.
    await vi.waitFor(() => {
      fake.push.fire?.({ type: 'agents', key: KEY, agents: [] });
      expect(fake.sent.length).toBeGreaterThan(0);
    });
    fake.sent.length = 0;
    fake.push.fire?.(notice);
    fake.push.fire?.({ ...notice, key: 'fedcba9876543210' });
    expect(fake.osNotifications).toEqual([]);
    expect(fake.sent).toEqual([{ window: 1, channel: 'forkbench:push', push: notice }]);

    // The page that window shows: the real controller, fed what the window was sent.
    const host = engineWith(['parse']);
    const t = new FakeTransport();
    t.on('threads.list', () => [{ key: KEY, open: true, folder: '/p', goal: '' }]);
    t.on('thread.snapshot', () => snapshotOf(host.engine, { agents: [agent('a1', { name: 'shell 1' })], log: host.events.slice() }));
    // The one window asks the host for the notice's claim and gets it.
    t.on('notice.claim', () => true);
    const page = new AppController(t, { systemNotify: (title) => (fake.osNotifications.push(title), true), notifyPermission: () => 'granted' });
    page.start();
    await settle();
    for (const s of fake.sent) t.push(s.push as WindowPush);
    await settle();
    expect(fake.osNotifications).toEqual(['Claim lapsed: T-1']);
    page.dispose();
  });
});
