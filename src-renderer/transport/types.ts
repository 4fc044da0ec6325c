import type { WindowApi, WindowError } from '../../src-shared/protocol/windowApi.js';

/**
 * Whether the renderer can reach the host right now. Electron's IPC is always `connected`. Over serve's
 * WebSocket: `connecting` before the first connection, `host-stopped` once a connection was lost or the host
 * cannot be reached (the page keeps retrying), `refused` when the host is up but does not accept this page's
 * cookie (a wrong or old token), `link-spent` when it does not and the link the page was opened with had
 * been used already, `link-unknown` when it does not and that link was never one the host gave out.
 */
export type ConnectionState = 'connecting' | 'connected' | 'host-stopped' | 'refused' | 'link-spent' | 'link-unknown';

/** The browser sessions of a serve host, as a page can end them (transport/linkCode.ts revokeSessions). */
export interface BrowserSessions {
  /** Ends every other browser's session: the number ended. */
  revokeOthers(): Promise<number>;
}

/** What the host said when asked why a socket did not open (serve's `GET /session-check`). */
export type ProbeResult = 'admitted' | 'refused' | 'unavailable' | 'unreachable';

/** A `WindowApi` plus the connection state: the only thing the rest of the renderer sees of a transport. */
export interface Transport extends WindowApi {
  readonly kind: 'electron' | 'websocket';
  readonly state: ConnectionState;
  /** Serve's browser sessions, which this page can end (absent in Electron, which has none). */
  readonly sessions?: BrowserSessions;
  /** Fires on every change of `state`, including every reconnect (a new `connected`). */
  onState(listener: (state: ConnectionState) => void): () => void;
  dispose(): void;
}

/** A refused or failed call. `code` is the board's rejection code, or a transport code such as `disconnected`. */
export class HostCallError extends Error implements WindowError {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'HostCallError';
  }
}

/** Whatever a transport threw, as a `{code, message}` a person can read. Never loses the message. */
export function toWindowError(err: unknown): WindowError {
  if (err && typeof err === 'object') {
    const e = err as { code?: unknown; message?: unknown };
    const message = typeof e.message === 'string' ? e.message : String(err);
    if (typeof e.code === 'string') return { code: e.code, message };
    // Electron wraps errors thrown in the main process as "Error invoking remote method 'x': Error: ...".
    const m = /^Error invoking remote method '[^']+': (?:\w*Error: )?(.*)$/s.exec(message);
    return { code: 'error', message: m?.[1] ?? message };
  }
  return { code: 'error', message: String(err) };
}
