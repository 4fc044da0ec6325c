import type { WindowPush } from '../../src-shared/protocol/windowApi.js';
import { PUSH_CHANNEL } from './ipcBridge.js';

/** A window's way in: what of Electron's WebContents routing needs. */
export interface PushTarget {
  send(channel: string, push: WindowPush): void;
}

/**
 * Every push goes to the window of its Thread, notices included, as `serve` sends them to the sockets that
 * have the Thread open. The main process raises no notification of its own: the page shows each notice and
 * raises the one OS notification (Electron's renderer has the Notification API), so a lapse is told once.
 */
export function routePush(push: WindowPush, windowOf: (threadKey: string) => PushTarget | null): void {
  windowOf(push.key)?.send(PUSH_CHANNEL, push);
}
