import { app, BrowserWindow, dialog, ipcMain, powerMonitor, session, shell, type WebContents } from 'electron';
import Store from 'electron-store';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { lingeringKills } from '../pty/processGroupKiller.js';
import { PROJECT_ROOT } from '../host/cliShim.js';
import { electronDevRuntime, packagedRuntime, useNodeRuntime } from '../base/nodeRuntime.js';
import { claimDataFolder } from '../base/dataFolderClaim.js';
import { outliveClosedStdio } from '../base/closedStdio.js';
import { ThreadManager } from '../host/threadManager.js';
import { WindowRouter } from '../host/windowRouter.js';
import { ptyHostIdleMs } from '../ptyhost/ptyHostLauncher.js';
import { openAppPtyHost, PtyHostKeptError } from './ptyHostStart.js';
import { askQuitChoice, type QuitChoice } from './quitChoice.js';
import { isSafeExternal, isTrustedSender, registerWindowIpc } from './ipcBridge.js';
import { routePush } from './pushRouting.js';
import { applyPermissionPolicy } from './permissionPolicy.js';
import { THREAD_PARAM } from '../../src-shared/protocol/windowApi.js';

/**
 * The Electron shell: windows, IPC, notifications, window state. Everything else is the same host `serve`
 * runs; nothing outside this folder imports Electron.
 */

const PAGE = join(PROJECT_ROOT, 'dist-renderer', 'index.html');
const PAGE_URL = pathToFileURL(PAGE).href;
const PRELOAD = join(PROJECT_ROOT, 'dist-main', 'src-main', 'electron', 'preload.cjs');
// The pty host and the agents' CLI run as Node: in a package, the Node shipped beside the app (its
// runAsNode fuse is off); in development, Electron's own binary as Node (nodeRuntime.ts).
useNodeRuntime(app.isPackaged ? packagedRuntime(process.resourcesPath) : electronDevRuntime());

interface Bounds {
  x?: number;
  y?: number;
  width: number;
  height: number;
}
const store = new Store<{ windows: Record<string, Bounds> }>({ defaults: { windows: {} } });
// Started from a terminal that is closed later, the app's warnings have no reader left.
outliveClosedStdio();

// Electron's own lock covers a second app only; the data folder's lock also covers `serve` beside the app.
const claim = app.requestSingleInstanceLock() ? claimDataFolder(app.getPath('userData'), 'the Forkbench app') : null;
if (claim && !claim.ok) {
  process.stderr.write(`Forkbench: ${claim.message}\n`);
  dialog.showErrorBox('Forkbench is already running', claim.message);
  app.exit(1);
} else if (!claim) {
  app.quit();
} else {
  const dataRoot = app.getPath('userData');
  // Agents run in the data folder's pty host, so a crash or an update of the app does not end them; the
  // next start takes them back. FORKBENCH_PTY_HOST=0 keeps them as the app's children instead.
  const warn = (m: string) => process.stderr.write(`${m}\n`);
  const ptyHost =
    process.env.FORKBENCH_PTY_HOST === '0'
      ? undefined
      : (async () => openAppPtyHost(dataRoot, { idleMs: ptyHostIdleMs(), warn, dialog, ready: () => app.whenReady() }))().catch((err: Error) => {
          if (err instanceof PtyHostKeptError) {
            warn('Forkbench: the agents of another Forkbench version were left running, as asked; quitting');
          } else {
            const message = `Forkbench cannot use its pty host: ${err.message}`;
            warn(message);
            dialog.showErrorBox('Forkbench cannot take back its agents', message);
          }
          claim.lock.release();
          app.exit(1);
          throw err;
        });
  ptyHost?.catch(() => undefined);
  const threads = new ThreadManager({ dataRoot, ptyHost });
  const router = new WindowRouter(threads);
  const windows = new Map<string, BrowserWindow>();
  const ours = (wc: WebContents) => [...windows.values()].some((w) => !w.isDestroyed() && w.webContents.id === wc.id);

  registerWindowIpc(ipcMain, router, (e) => isTrustedSender(e, ours, PAGE_URL));

  threads.onPush.event((push) =>
    routePush(push, (key) => {
      const w = windows.get(key);
      return w && !w.isDestroyed() ? w.webContents : null;
    }),
  );

  /** One window per Thread: opening a Thread that has one focuses it. */
  async function openThread(folder: string): Promise<void> {
    const host = await threads.open(folder);
    const existing = windows.get(host.key);
    if (existing && !existing.isDestroyed()) {
      existing.focus();
      return;
    }
    const bounds = store.get('windows')[host.key] ?? { width: 1400, height: 900 };
    const win = new BrowserWindow({
      ...bounds,
      title: `Forkbench — ${host.folder}`,
      backgroundColor: '#14161a',
      webPreferences: {
        preload: PRELOAD,
        contextIsolation: true,
        sandbox: true,
        nodeIntegration: false,
        webSecurity: true,
        spellcheck: false,
        // A packaged app has no DevTools: they would give anyone at the keyboard (or a page that can send
        // keystrokes) a console in the renderer that holds the window API. Development builds keep them.
        devTools: !app.isPackaged,
        // A middle click fires `auxclick`, which pages can use to open windows past the click handlers;
        // the window-open handler denies every new window anyway, this keeps the event from existing.
        disableBlinkFeatures: 'Auxclick',
      },
    });
    windows.set(host.key, win);
    const consumer = `ipc-${win.webContents.id}`;
    win.on('close', () => store.set('windows', { ...store.get('windows'), [host.key]: win.getBounds() }));
    // A closed or crashed window must not hold any pane's output back.
    win.webContents.on('render-process-gone', () => router.detachAll(consumer));
    win.on('closed', () => {
      router.detachAll(consumer);
      windows.delete(host.key);
    });
    await win.loadFile(PAGE, { query: { [THREAD_PARAM]: host.key } });
  }

  app.on('web-contents-created', (_e, contents) => {
    // The window shows our page and nothing else; links go to the system browser after a check.
    contents.on('will-navigate', (e, url) => {
      if (url !== PAGE_URL && !url.startsWith(`${PAGE_URL}?`)) e.preventDefault();
    });
    contents.setWindowOpenHandler(({ url }) => {
      if (isSafeExternal(url)) void shell.openExternal(url);
      return { action: 'deny' };
    });
    contents.on('will-attach-webview', (e) => e.preventDefault());
  });

  app.on('second-instance', (_e, argv, cwd) => void openThread(folderFromArgs(argv.slice(1), cwd)));

  /** Agents whose processes still run, in every open Thread. */
  const runningAgents = () => threads.openHosts().reduce((n, h) => n + h.roster.agents().filter((a) => a.status !== 'exited').length, 0);
  /** Stop or keep the agents, then quit. Kept ones stay in the pty host with their claims, as after
   *  `serve --keep-agents`: the board host leaves without ending a claim and the next start takes them back. */
  const leave = (keep: boolean) =>
    void threads
      .dispose({ keepAgents: keep })
      .then(async () => {
        const link = await ptyHost?.catch(() => undefined);
        const others = (await link?.quit(keep)) ?? 0;
        if (others > 0) warn(`Forkbench: ${others} agent(s) of Threads not open now keep running in the pty host (pid ${link?.hostPid})`);
        // Agents that ran as this process's children (no pty host) get their TERM and KILL before it quits.
        await lingeringKills();
      })
      .catch((err: Error) => warn(`Forkbench: while quitting: ${err.message}`))
      .finally(() => {
        claim.lock.release();
        app.quit();
      });

  let quitting = false;
  let asking: Promise<QuitChoice> | null = null;
  /** A quit nobody is there to answer: the system shutting down or logging out, or a signal (a package
   *  manager's update, `kill`). A question would hold the quit until the session kills us anyway, so the
   *  answer is the one that loses nothing: keep the agents in the pty host (which ends them itself after its
   *  idle time), or stop them cleanly where there is no pty host. */
  let unattended = false;
  const quitUnattended = (e?: { preventDefault(): void }) => {
    // powerMonitor's shutdown: asking the system to wait is how Electron gets the time to leave cleanly.
    e?.preventDefault();
    unattended = true;
    app.quit();
  };
  for (const sig of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) process.once(sig, () => quitUnattended());
  app.on('before-quit', (e) => {
    if (quitting) return;
    e.preventDefault();
    if (unattended) {
      quitting = true;
      return leave(ptyHost !== undefined && runningAgents() > 0);
    }
    // A second quit while the question is open (another Ctrl+Q, the last window closed) waits for its answer.
    if (asking) return;
    const running = runningAgents();
    if (running === 0) {
      quitting = true;
      return leave(false);
    }
    const parent = [...windows.values()].find((w) => !w.isDestroyed()) ?? null;
    asking = askQuitChoice(dialog, parent, { running, canKeep: ptyHost !== undefined, idleMs: ptyHost ? ptyHostIdleMs() : 0 }).catch(() => 'cancel' as const);
    void asking.then((choice) => {
      asking = null;
      // Answered after an unattended quit already left (the system shut down while the question was open).
      if (quitting) return;
      if (choice === 'cancel') {
        // The quit came from closing the last window: the person stays, so their Threads come back.
        if (![...windows.values()].some((w) => !w.isDestroyed())) for (const h of threads.openHosts()) void openThread(h.folder);
        return;
      }
      quitting = true;
      leave(choice === 'keep');
    });
  });
  app.on('window-all-closed', () => app.quit());

  void app.whenReady().then(() => {
    powerMonitor.on('resume', () => void threads.resumeGrace());
    powerMonitor.on('shutdown', (e?: { preventDefault(): void }) => quitUnattended(e));
  });
  void app.whenReady().then(() => {
    // Before the first window: Electron grants every permission a page asks for unless told otherwise.
    applyPermissionPolicy(session.defaultSession, PAGE_URL);
    // A Thread that cannot open (its pty host refused above, say) is reported, not left as an unhandled rejection.
    return openThread(folderFromArgs(process.argv.slice(1), process.cwd())).catch((err: Error) => warn(`Forkbench: cannot open the Thread: ${err.message}`));
  });
}

/** The first argument that names a folder, else the current folder. */
function folderFromArgs(args: string[], cwd: string): string {
  for (const a of args) {
    if (a.startsWith('-')) continue;
    const p = resolve(cwd, a);
    if (existsSync(p) && statSync(p).isDirectory() && p !== PROJECT_ROOT) return p;
  }
  return cwd;
}
