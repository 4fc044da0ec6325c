/** The page's permission to raise OS notifications. */
export type NotifyPermission = 'default' | 'granted' | 'denied' | 'unsupported';

/** The browser's Notification permission, or `unsupported` where there is no Notification API. */
export function notificationPermission(): NotifyPermission {
  return typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;
}

/** Ask for permission. Browsers only allow this from a user gesture (the bell button). */
export async function requestNotificationPermission(): Promise<NotifyPermission> {
  if (typeof Notification === 'undefined') return 'unsupported';
  try {
    return await Notification.requestPermission();
  } catch {
    return Notification.permission;
  }
}

/** The OS notifications this page raised and the OS still shows, by tag (a host notice's id). */
const shown = new Map<string, Notification>();

/**
 * A system notification whose click brings the page forward and runs `onClick`; false when not permitted (the
 * caller shows an in-page toast). `tag` is the host notice's id: the OS shows one per tag.
 */
export function systemNotify(title: string, body: string, tag: string, onClick: () => void): boolean {
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return false;
  try {
    const n = new Notification(title, { body, tag });
    shown.set(tag, n);
    n.onclose = () => {
      if (shown.get(tag) === n) shown.delete(tag);
    };
    n.onclick = () => {
      window.focus();
      onClick();
      n.close();
    };
    return true;
  } catch {
    // Some contexts (e.g. Chrome on Android) allow only service-worker notifications.
    return false;
  }
}

/** The notice is no longer true (the host withdrew it): its OS notification, if this page raised it, goes. */
export function closeSystemNotification(tag: string): void {
  shown.get(tag)?.close();
  shown.delete(tag);
}
