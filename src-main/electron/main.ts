import { takeBoardUrlFromEnv } from '../board/pg/boardUrlSource.js';
import { app, BrowserWindow, dialog, ipcMain, powerMonitor, session, shell, type WebContents } from 'electron';
import Store from 'electron-store';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../thread/cliShim.js';
import { electronDevRuntime, packagedRuntime, useNodeRuntime } from '../base/nodeRuntime.js';
import { outliveClosedStdio } from '../base/closedStdio.js';
import { HostProcess } from '../process/hostProcess.js';
import { moveFromEnv, type BoardMove } from '../window/boardMove.js';
import { ptyHostIdleMs } from '../ptyhost/ptyHostLauncher.js';
import { openAppPtyHost, PtyHostKeptError } from './ptyHostStart.js';
import { askQuitChoice, type QuitChoice } from './quitChoice.js';
import { consumerOf, isSafeExternal, isTrustedSender, PUSH_CHANNEL, registerWindowIpc } from './ipcBridge.js';
import { applyPermissionPolicy } from './permissionPolicy.js';
import { THREAD_PARAM } from '../../src-shared/protocol/windowApi.js';

/**
 * The Electron shell: windows, IPC, window state and the questions to the person (a pty host of another
 * version, quitting with agents running). Everything else is the host process `serve` runs too
 * (src-main/process/hostProcess.ts); nothing outside this folder imports Electron.
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

const warn = (m: string) => process.stderr.write(`${m}\n`);
// Electron's own lock covers a second app only; the data folder's lock also covers `serve` beside the app.
// A shared board for every Thread the app opens (docs/shared-board.md), from the environment:
// read once and removed from it here, before any child starts, so the pty host, panes and hooks never inherit it.
const boardUrl = takeBoardUrlFromEnv(process.env);
const sharedBoard = boardUrl ? { url: boardUrl } : undefined;
// With it, what happens to a Thread's local board that has tasks (boardMove.ts): the app has no flags.
let move: BoardMove | undefined;
try {
  move = moveFromEnv(process.env);
} catch (err) {
  warn(`Forkbench: ${(err as Error).message}; a Thread with tasks on this computer asks for it before it opens on the shared board`);
}
const claim = app.requestSingleInstanceLock() ? HostProcess.claim({ dataRoot: app.getPath('userData'), kind: 'the Forkbench app', name: 'Forkbench', warn, sharedBoard, move }) : null;
if (claim && !claim.ok) {
  process.stderr.write(`Forkbench: ${claim.message}\n`);
  dialog.showErrorBox('Forkbench is already running', claim.message);
  app.exit(1);
} else if (!claim) {
  app.quit();
} else {
  const host = claim.host;
  const dataRoot = app.getPath('userData');
  // Agents run in the data folder's pty host, so a crash or an update of the app does not end them; the
  // next start takes them back. FORKBENCH_PTY_HOST=0 keeps them as the app's children instead.
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
          void host.abandon();
          app.exit(1);
          throw err;
        });
  ptyHost?.catch(() => undefined);
  host.usePtyHost(ptyHost);
  /** The window of each Thread, to focus it when the Thread is opened again. */
  const windows = new Map<string, BrowserWindow>();
  const ours = (wc: WebContents) => [...windows.values()].some((w) => !w.isDestroyed() && w.webContents.id === wc.id);

  registerWindowIpc(ipcMain, host.windows, (e) => isTrustedSender(e, ours, PAGE_URL));

  /** One window per Thread: opening a Thread that has one focuses it. */
  async function openThread(folder: string): Promise<void> {
    const thread = await host.openThread(folder);
    const existing = windows.get(thread.key);
    if (existing && !existing.isDestroyed()) {
      existing.focus();
      return;
    }
    const bounds = store.get('windows')[thread.key] ?? { width: 1400, height: 900 };
    const win = new BrowserWindow({
      ...bounds,
      title: `Forkbench — ${thread.folder}`,
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
    windows.set(thread.key, win);
    const consumer = consumerOf(win.webContents.id);
    // The window opens on its Thread; what it shows after is the host's windows' to follow.
    const shown = host.windows.add(consumer, (push) => !win.isDestroyed() && win.webContents.send(PUSH_CHANNEL, push), thread.key);
    win.on('close', () => store.set('windows', { ...store.get('windows'), [thread.key]: win.getBounds() }));
    // A closed or crashed window must not hold any pane's output back.
    win.webContents.on('render-process-gone', () => host.windows.lost(consumer));
    win.on('closed', () => {
      shown.dispose();
      windows.delete(thread.key);
    });
    await win.loadFile(PAGE, { query: { [THREAD_PARAM]: thread.key } });
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

  /** Stop or keep the agents, then quit. Kept ones stay in the pty host with their claims, as after
   *  `serve --keep-agents`: the board host leaves without ending a claim and the next start takes them back. */
  const leave = (keep: boolean) =>
    void host
      .stop({ keepAgents: keep })
      .catch((err: Error) => {
        warn(`Forkbench: while quitting: ${err.message}`);
        return host.abandon();
      })
      .finally(() => app.quit());

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
      return leave(ptyHost !== undefined && host.runningAgents() > 0);
    }
    // A second quit while the question is open (another Ctrl+Q, the last window closed) waits for its answer.
    if (asking) return;
    const running = host.runningAgents();
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
        if (![...windows.values()].some((w) => !w.isDestroyed())) for (const t of host.threads.openThreads()) void openThread(t.folder);
        return;
      }
      quitting = true;
      leave(choice === 'keep');
    });
  });
  app.on('window-all-closed', () => app.quit());

  void app.whenReady().then(() => {
    powerMonitor.on('resume', () => void host.resumeGrace());
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
