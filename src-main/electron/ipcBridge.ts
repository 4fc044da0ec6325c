import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';
import type { HostWindows } from '../process/hostWindows.js';

export const CALL_CHANNEL = 'forkbench:call';
export const PUSH_CHANNEL = 'forkbench:push';

/**
 * Whether an IPC message comes from one of our own windows, showing our own page in its main frame. A
 * frame that navigated elsewhere, an iframe, or a webContents we did not create is refused, so a page that
 * somehow got a renderer cannot drive the host.
 */
export function isTrustedSender(event: Pick<IpcMainInvokeEvent, 'sender' | 'senderFrame'>, ours: (wc: WebContents) => boolean, pageUrl: string): boolean {
  const frame = event.senderFrame;
  if (!frame || !ours(event.sender)) return false;
  if (frame.parent !== null) return false;
  return isOurPageUrl(frame.url, pageUrl);
}

/** Whether `url` is our page (whatever its query, e.g. `?thread=…`): same scheme, host and path. */
export function isOurPageUrl(url: string, pageUrl: string): boolean {
  try {
    const u = new URL(url);
    const page = new URL(pageUrl);
    return u.protocol === page.protocol && u.host === page.host && u.pathname === page.pathname;
  } catch {
    return false;
  }
}

/** A window's name for flow control and for the host's windows: one per webContents. */
export const consumerOf = (webContentsId: number) => `ipc-${webContentsId}`;

/** Route every window call through the host's windows (and so the one router); refuse foreign senders before anything runs. */
export function registerWindowIpc(ipc: Pick<IpcMain, 'handle'>, windows: Pick<HostWindows, 'call'>, trusted: (e: IpcMainInvokeEvent) => boolean): void {
  ipc.handle(CALL_CHANNEL, async (event, method: unknown, params: unknown) => {
    if (!trusted(event)) return { ok: false, error: { code: 'forbidden', message: 'this window may not use the Forkbench API' } };
    return windows.call(method, params, consumerOf(event.sender.id));
  });
}

/** http(s) only, with a host and no credentials: no file:, javascript: or custom schemes that run things. */
export function isSafeExternal(url: string): boolean {
  try {
    const u = new URL(url);
    return (u.protocol === 'https:' || u.protocol === 'http:') && u.hostname.length > 0 && !u.username && !u.password;
  } catch {
    return false;
  }
}
