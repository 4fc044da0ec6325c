/**
 * Issue 16 (Electron, static findings): every web permission but notifications is denied, a middle click
 * cannot open windows, and a packaged build has no DevTools. The policy is tested as the pure function it
 * is; main.ts itself is loaded against a fake `electron` module (the binary cannot be downloaded here) to
 * show that its real window setup installs the policy and those settings.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { PROJECT_ROOT } from '../../../src-main/thread/cliShim.js';
import { applyPermissionPolicy, isPermissionAllowed } from '../../../src-main/electron/permissionPolicy.js';
import { fake } from '../../helpers/fakeElectron.js';

const PAGE_URL = pathToFileURL(join(PROJECT_ROOT, 'dist-renderer', 'index.html')).href;
const ours = `${PAGE_URL}?thread=0123456789abcdef`;

/** Every permission Electron 45 can ask about (its typings), so a new one is seen denied too. */
const PERMISSIONS = [
  'ar', 'automatic-fullscreen', 'background-fetch', 'background-sync', 'captured-surface-control', 'clipboard-read',
  'clipboard-sanitized-write', 'deprecated-sync-clipboard-read', 'display-capture', 'fileSystem', 'fullscreen',
  'geolocation', 'hand-tracking', 'hid', 'idle-detection', 'keyboardLock', 'local-fonts', 'media', 'mediaKeySystem',
  'midi', 'midiSysex', 'nfc', 'notifications', 'openExternal', 'payment-handler', 'periodic-background-sync',
  'persistent-storage', 'pointerLock', 'screen-wake-lock', 'sensors', 'serial', 'speaker-selection', 'storage-access',
  'system-wake-lock', 'top-level-storage-access', 'usb', 'vr', 'window-management', 'unknown',
];

describe('permission policy', () => {
  it('grants notifications to our page and nothing else to anyone', () => {
    const granted = PERMISSIONS.filter((permission) => isPermissionAllowed({ permission, requestingUrl: ours, isMainFrame: true }, PAGE_URL));
    expect(granted).toEqual(['notifications']);
    for (const requestingUrl of ['https://evil.example/', 'file:///tmp/other.html', undefined]) {
      expect(isPermissionAllowed({ permission: 'notifications', requestingUrl, isMainFrame: true }, PAGE_URL), String(requestingUrl)).toBe(false);
    }
    expect(isPermissionAllowed({ permission: 'notifications', requestingUrl: ours, isMainFrame: false }, PAGE_URL)).toBe(false);
  });

  it('answers both requests and checks', () => {
    const ses = { setPermissionRequestHandler: vi.fn(), setPermissionCheckHandler: vi.fn() };
    applyPermissionPolicy(ses as never, PAGE_URL);
    const request = ses.setPermissionRequestHandler.mock.calls[0]?.[0] as (wc: unknown, p: string, cb: (ok: boolean) => void, d: unknown) => void;
    const check = ses.setPermissionCheckHandler.mock.calls[0]?.[0] as (wc: unknown, p: string, origin: string, d: unknown) => boolean;
    const wc = { getURL: () => ours };
    const answers: boolean[] = [];
    request(wc, 'media', (ok) => answers.push(ok), { requestingUrl: ours, isMainFrame: true });
    request(wc, 'notifications', (ok) => answers.push(ok), { requestingUrl: ours, isMainFrame: true });
    request({ getURL: () => 'https://evil.example/' }, 'notifications', (ok) => answers.push(ok), { requestingUrl: '', isMainFrame: true });
    expect(answers).toEqual([false, true, false]);
    expect(check(wc, 'clipboard-read', 'file://', { requestingUrl: ours, isMainFrame: true })).toBe(false);
    expect(check(null, 'notifications', 'file://', { requestingUrl: ours, isMainFrame: true })).toBe(true);
    expect(check(null, 'notifications', 'file://', { isMainFrame: true })).toBe(false);
  });
});

// ---- main.ts against a fake Electron ----------------------------------------------------------------

vi.mock('electron', async () => (await import('../../helpers/fakeElectron.js')).fake.electron);
vi.mock('electron-store', async () => (await import('../../helpers/fakeElectron.js')).fakeStore);
vi.mock('../../../src-main/window/threadManager.js', async () => (await import('../../helpers/fakeElectron.js')).fakeThreadManager);
vi.mock('../../../src-main/window/windowRouter.js', async () => (await import('../../helpers/fakeElectron.js')).fakeWindowRouter);

describe('main.ts window setup', () => {
  it('installs the permission policy before the first window, and a packaged window has no DevTools and no auxclick', async () => {
    await import('../../../src-main/electron/main.js');
    await vi.waitFor(() => expect(fake.windows.length).toBe(1));
    expect(fake.defaultSession.setPermissionRequestHandler).toHaveBeenCalledTimes(1);
    expect(fake.defaultSession.setPermissionCheckHandler).toHaveBeenCalledTimes(1);
    const request = fake.defaultSession.setPermissionRequestHandler.mock.calls[0]?.[0] as (wc: unknown, p: string, cb: (ok: boolean) => void, d: unknown) => void;
    const answers: boolean[] = [];
    request({ getURL: () => ours }, 'media', (ok) => answers.push(ok), { requestingUrl: ours, isMainFrame: true });
    request({ getURL: () => ours }, 'notifications', (ok) => answers.push(ok), { requestingUrl: ours, isMainFrame: true });
    expect(answers).toEqual([false, true]);

    const prefs = fake.windows[0]?.options.webPreferences ?? {};
    expect(prefs).toMatchObject({ devTools: false, contextIsolation: true, sandbox: true, nodeIntegration: false });
    expect(String(prefs.disableBlinkFeatures).split(',')).toContain('Auxclick');

    // Every webContents (windows, and anything else that gets created) denies new windows and foreign pages.
    const created = fake.listeners.get('web-contents-created')?.[0];
    const contents = { on: vi.fn(), setWindowOpenHandler: vi.fn() };
    created?.({}, contents);
    const onEvents = contents.on.mock.calls.map((c) => c[0]);
    expect(onEvents).toEqual(expect.arrayContaining(['will-navigate', 'will-attach-webview']));
    const openHandler = contents.setWindowOpenHandler.mock.calls[0]?.[0] as (d: { url: string }) => { action: string };
    expect(openHandler({ url: 'https://example.com/' })).toEqual({ action: 'deny' });
  });
});
