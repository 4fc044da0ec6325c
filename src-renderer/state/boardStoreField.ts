import type { BoardStoreView } from '../../src-shared/protocol/windowApi.js';

/**
 * The Thread's board store as the settings panel says it and its URL field as the panel checks it before the
 * host does. The panel never holds a URL longer than it takes to send it (the host keeps it; the page gets
 * only "host/database" and the board's name back), so nothing here shows or stores one.
 */

/** One line for where the board is. */
export function describeStore(store: BoardStoreView | null): string {
  if (store === null || store.kind === 'journal') return 'this computer only (journal)';
  return `${store.where}, board ${store.name}`;
}

export type UrlField = { ok: true; url: string; name?: string } | { ok: false; error: string; field: 'url' | 'name' };

/**
 * The URL field and the optional name field, as typed. Only the shape is checked here (the host checks the
 * rest and connects); a mistake is said without repeating what was typed, which may be a password.
 */
export function readUrlField(url: string, name: string): UrlField {
  const u = url.trim();
  if (!u) return { ok: false, field: 'url', error: 'Enter the board’s PostgreSQL URL: postgres://user:password@host/database' };
  if (!/^postgres(ql)?:\/\//i.test(u)) return { ok: false, field: 'url', error: 'The board must be a PostgreSQL URL, starting postgres:// or postgresql://' };
  const n = name.trim();
  return n ? { ok: true, url: u, name: n } : { ok: true, url: u };
}
