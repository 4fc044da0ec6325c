import type { WindowApi } from '../../src-shared/protocol/windowApi.js';
import { replaceAddress } from '../address.js';
import { probeSession, revokeSessions, takeLinkCode, tradeLinkCode, wsUrlFor } from './linkCode.js';
import { toWindowError, HostCallError, type ConnectionState, type Transport } from './types.js';
import { WsTransport } from './wsTransport.js';

export type { ConnectionState, Transport } from './types.js';
export { HostCallError, toWindowError } from './types.js';

declare global {
  interface Window {
    /** Set by Electron's preload (contextBridge). Absent in a browser. */
    forkbench?: WindowApi;
  }
}

/** Wraps the preload's API so errors always arrive as `{code, message}`, like over the WebSocket. */
class ElectronTransport implements Transport {
  readonly kind = 'electron' as const;
  readonly state: ConnectionState = 'connected';
  constructor(private readonly api: WindowApi) {}
  call: WindowApi['call'] = (method, params) =>
    this.api.call(method, params).catch((err: unknown) => {
      const e = toWindowError(err);
      throw new HostCallError(e.code, e.message);
    });
  subscribe: WindowApi['subscribe'] = (listener) => this.api.subscribe(listener);
  onState(): () => void {
    return () => undefined;
  }
  dispose(): void {}
}

/** Electron's preload if present, else a WebSocket to the serve host this page came from. */
export function chooseTransport(): Transport {
  if (window.forkbench) return new ElectronTransport(window.forkbench);
  const code = takeLinkCode(location.href, replaceAddress);
  const post = (path: string, body: string) => fetch(path, { method: 'POST', body, credentials: 'same-origin' });
  // The socket waits for the trade: its handshake must carry the cookie the trade sets.
  const traded = code === null ? undefined : tradeLinkCode(code, post);
  const get = (path: string) => fetch(path, { credentials: 'same-origin', cache: 'no-store' });
  const sessions = { revokeOthers: () => revokeSessions('others', post) };
  return new WsTransport({ url: wsUrlFor(location), ready: traded, probe: () => probeSession(get), sessions });
}
