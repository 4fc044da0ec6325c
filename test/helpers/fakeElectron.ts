/**
 * A fake `electron` module (and the host parts main.ts starts) for loading src-main/electron/main.ts in a
 * test: the Electron binary cannot be downloaded here. One fake per test file (vitest gives each file its own
 * modules); a test file wires it in with
 *
 *   vi.mock('electron', async () => (await import('./fakeElectron.js')).fake.electron);
 *   vi.mock('electron-store', async () => (await import('./fakeElectron.js')).fakeStore);
 *   vi.mock('../../../src-main/window/threadManager.js', async () => (await import('./fakeElectron.js')).fakeThreadManager);
 *   vi.mock('../../../src-main/window/windowRouter.js', async () => (await import('./fakeElectron.js')).fakeWindowRouter);
 *
 * (vi.mock is hoisted per file, so the calls themselves cannot live here) and reads what main did from `fake`.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vi } from 'vitest';

/**
 * The fake app says it is packaged, so main.ts runs its helpers on a package's resources: here the shipped
 * Node is this Node and app.asar.unpacked is this checkout (test/packaging checks the real layout).
 */
function fakeResources(): string {
  const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-fake-resources-'));
  fs.mkdirSync(join(dir, 'node', 'bin'), { recursive: true });
  fs.symlinkSync(process.execPath, join(dir, 'node', 'bin', 'node'));
  fs.symlinkSync(join(import.meta.dirname, '..', '..'), join(dir, 'app.asar.unpacked'));
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}
const withResources = process as NodeJS.Process & { resourcesPath?: string };
withResources.resourcesPath ??= fakeResources();

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
  /** The message boxes main showed, and the button labels a test gives as their answers, in order. */
  const messageBoxes: Array<{ type?: string; message: string; detail?: string; buttons: string[]; defaultId?: number; cancelId?: number }> = [];
  const answers: string[] = [];
  /** Whether the app went all the way through a quit (no before-quit listener prevented it). */
  const quit = { done: false };
  class BrowserWindow {
    readonly id = windows.length + 1;
    private readonly handlers = new Map<string, Array<() => void>>();
    private destroyed = false;
    readonly webContents = { id: this.id, on: vi.fn(), send: vi.fn((channel: string, p: unknown) => void sent.push({ window: this.id, channel, push: p })) };
    constructor(readonly options: { webPreferences: Record<string, unknown> }) {
      windows.push(this);
    }
    on(event: string, l: () => void) {
      this.handlers.set(event, [...(this.handlers.get(event) ?? []), l]);
    }
    /** As a person closing the window: 'close', then gone, then 'closed'. */
    close() {
      for (const l of this.handlers.get('close') ?? []) l();
      this.destroyed = true;
      for (const l of this.handlers.get('closed') ?? []) l();
    }
    isDestroyed() {
      return this.destroyed;
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
    messageBoxes,
    answers,
    quit,
    electron: {
      app: {
        isPackaged: true,
        requestSingleInstanceLock: () => true,
        getPath: () => dataDir.path,
        on: (event: string, l: (...a: unknown[]) => unknown) => listeners.set(event, [...(listeners.get(event) ?? []), l]),
        whenReady: () => Promise.resolve(),
        // As Electron's: before-quit first, and a listener that prevents it stops the quit.
        quit: vi.fn(() => {
          const e = { defaultPrevented: false, preventDefault: () => void (e.defaultPrevented = true) };
          for (const l of listeners.get('before-quit') ?? []) l(e);
          if (!e.defaultPrevented) quit.done = true;
        }),
        exit: vi.fn(),
      },
      BrowserWindow,
      dialog: {
        showErrorBox: vi.fn(),
        /** Answers with the button the test named next (a box nobody expected fails the test). */
        showMessageBox: vi.fn(async (...args: unknown[]) => {
          const o = (args.length > 1 ? args[1] : args[0]) as (typeof messageBoxes)[number];
          messageBoxes.push(o);
          const label = answers.shift();
          const response = label === undefined ? -1 : o.buttons.indexOf(label);
          if (response < 0) throw new Error(`the test has no answer '${label}' for the box "${o.message}" (buttons: ${o.buttons.join(', ')})`);
          return { response, checkboxChecked: false };
        }),
      },
      ipcMain: { handle: vi.fn() },
      Notification,
      powerMonitor: { on: vi.fn() },
      session: { defaultSession },
      shell: { openExternal: vi.fn() },
    },
  };
}

export const fake = fakeElectron();

/**
 * Forget everything the last main.ts did, for a test that loads it again (vi.resetModules) as a new start of
 * the app: the mocked `electron` module stays this same object across resets, so it is cleared, not remade.
 */
export function resetFake(): void {
  fake.sent.length = 0;
  fake.osNotifications.length = 0;
  fake.push.fire = null;
  fake.listeners.clear();
  fake.windows.length = 0;
  fake.messageBoxes.length = 0;
  fake.answers.length = 0;
  fake.quit.done = false;
  for (const f of [fake.electron.app.quit, fake.electron.app.exit, fake.electron.ipcMain.handle, fake.electron.powerMonitor.on, fake.electron.dialog.showErrorBox, fake.electron.dialog.showMessageBox]) f.mockClear();
}

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
    openThread = async (folder: string) => ({ key: FAKE_THREAD_KEY, folder });
    usePtyHost() {}
    thread = () => undefined;
    openThreads = () => [];
    openHosts = () => [];
    resumeGrace = async () => undefined;
    dispose = async () => undefined;
  },
};

/** A router that answers every call with nothing. */
export const fakeWindowRouter = {
  WindowRouter: class {
    call = async () => ({ ok: true, value: null });
  },
};
