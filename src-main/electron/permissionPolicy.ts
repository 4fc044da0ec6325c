import type { Session } from 'electron';
import { isOurPageUrl } from './ipcBridge.js';

/**
 * Which web permissions the window gets. Electron grants every permission a page asks for unless the app
 * says otherwise (its security checklist, item "Handle session permission requests"), so a page that got
 * script into the renderer could use the camera, the microphone, the clipboard, HID/serial/USB devices or
 * open external apps. The window needs one: notifications (a lease about to lapse, a task waiting for
 * review), asked for by src-renderer/notifications.ts. Everything else is denied.
 */
export const ALLOWED_PERMISSIONS: ReadonlySet<string> = new Set(['notifications']);

export interface PermissionAsk {
  permission: string;
  /** The URL of the frame asking (Electron's `details.requestingUrl`, else the webContents' URL). */
  requestingUrl: string | undefined;
  /** False for a subframe; our page has none, so only the main frame may hold a permission. */
  isMainFrame: boolean | undefined;
}

/** Granted only for an allowed permission, asked for by our own page in its main frame. */
export function isPermissionAllowed(ask: PermissionAsk, pageUrl: string): boolean {
  if (!ALLOWED_PERMISSIONS.has(ask.permission)) return false;
  if (ask.isMainFrame === false) return false;
  return ask.requestingUrl !== undefined && isOurPageUrl(ask.requestingUrl, pageUrl);
}

/** The session calls the policy needs (a fake in tests). */
export type PermissionSession = Pick<Session, 'setPermissionRequestHandler' | 'setPermissionCheckHandler'>;

/** Puts the policy on a session, for requests (a page asks) and checks (a page looks at what it has). */
export function applyPermissionPolicy(ses: PermissionSession, pageUrl: string): void {
  ses.setPermissionRequestHandler((wc, permission, callback, details) => {
    callback(isPermissionAllowed({ permission, requestingUrl: details.requestingUrl || wc.getURL(), isMainFrame: details.isMainFrame }, pageUrl));
  });
  ses.setPermissionCheckHandler((wc, permission, _origin, details) =>
    isPermissionAllowed({ permission, requestingUrl: details.requestingUrl || wc?.getURL(), isMainFrame: details.isMainFrame }, pageUrl),
  );
}
