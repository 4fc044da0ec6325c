/**
 * A fake `electron` module (and the host parts main.ts starts) for loading src-main/electron/main.ts in a
 * test: the Electron binary cannot be downloaded here. One fake per test file (vitest gives each file its own
 * modules); a test file wires it in with
 *
 *   vi.mock('electron', async () => (await import('./fakeElectron.js')).fake.electron);
 *   vi.mock('electron-store', async () => (await import('./fakeElectron.js')).fakeStore);
 *   vi.mock('../../../src-main/host/threadManager.js', async () => (await import('./fakeElectron.js')).fakeThreadManager);
 *   vi.mock('../../../src-main/host/windowRouter.js', async () => (await import('./fakeElectron.js')).fakeWindowRouter);
 *
 * (vi.mock is hoisted per file, so the calls themselves cannot live here) and reads what main did from `fake`.
 */
import { vi } from 'vitest';

function fakeElectron() {
  /** What windows were sent, in order. */
  const sent: Array<{ window: number; channel: string; push: unknown }> = [];
  /** Titles of the OS notifications made in the main process. */
  const osNotifications: string[] = [];
  /** The host's push listener main subscribed, once it has. */
  const push: { fire: ((p: unknown) => void) | null } = { fire: null };
  /** app.on listeners by event. */
  const listeners = new Map<string, Array<(...a: unknown[]) => unknown>>();
  const windows: BrowserWindow[] = [];
  const defaultSession = { setPermissionRequestHandler: vi.fn(), setPermissionCheckHandler: vi.fn() };
  /** app.getPath's answer. */
  const dataDir = { path: '/nonexistent-forkbench-test' };
  class BrowserWindow {
    readonly id = windows.length + 1;
    readonly webContents = { id: this.id, on: vi.fn(), send: vi.fn((channel: string, p: unknown) => void sent.push({ window: this.id, channel, push: p })) };
    constructor(readonly options: { webPreferences: Record<string, unknown> }) {
      windows.push(this);
    }
    on() {}
    isDestroyed() {
      return false;
    }
    focus() {}
    getBounds() {
      return { width: 1, height: 1 };
    }
    loadFile() {
      return Promise.resolve();
    }
  }
  class Notification {
    static isSupported = () => true;
    constructor(readonly o: { title: string }) {
      osNotifications.push(o.title);
    }
    show() {}
  }
  return {
    sent,
    osNotifications,
    push,
    listeners,
    windows,
    defaultSession,
    dataDir,
    electron: {
      app: {
        isPackaged: true,
        requestSingleInstanceLock: () => true,
        getPath: () => dataDir.path,
        on: (event: string, l: (...a: unknown[]) => unknown) => listeners.set(event, [...(listeners.get(event) ?? []), l]),
        whenReady: () => Promise.resolve(),
        quit: vi.fn(),
        exit: vi.fn(),
      },
      BrowserWindow,
      dialog: { showErrorBox: vi.fn() },
      ipcMain: { handle: vi.fn() },
      Notification,
      powerMonitor: { on: vi.fn() },
      session: { defaultSession },
      shell: { openExternal: vi.fn() },
    },
  };
}

export const fake = fakeElectron();

export const fakeStore = {
  default: class {
    get() {
      return {};
    }
    set() {}
  },
};

/** The key of the Thread the fake host opens. */
export const FAKE_THREAD_KEY = '0123456789abcdef';

/** The host is not what these tests look at: a Thread that opens at once, whose pushes the test fires. */
export const fakeThreadManager = {
  ThreadManager: class {
    onPush = {
      event: (l: (p: unknown) => void) => {
        fake.push.fire = l;
        return { dispose() {} };
      },
    };
    open = async (folder: string) => ({ key: FAKE_THREAD_KEY, folder });
    resumeGrace = async () => undefined;
    dispose = async () => undefined;
  },
};

/** A router that answers every call with nothing. */
export const fakeWindowRouter = {
  WindowRouter: class {
    call = async () => ({ ok: true, value: null });
    detachAll() {}
  },
};
