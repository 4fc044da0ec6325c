import type { StoreApi } from 'zustand/vanilla';
import { addressWith } from '../address.js';
import { THREAD_PARAM } from '../../src-shared/protocol/windowApi.js';

/**
 * The Thread a window shows, kept in its address as `?thread=KEY` (every other parameter left as it is):
 * a reloaded tab then knows which Thread to fetch before the host has listed them, and a copied address
 * opens the same Thread. Electron's windows are opened with it already.
 */
export function urlWithThread(href: string, key: string | null): string {
  return addressWith(href, THREAD_PARAM, key || null);
}

/** Keep the address in step with the Thread the store shows; returns the unsubscribe. */
export function followShownThread(
  store: Pick<StoreApi<{ activeKey: string | null }>, 'subscribe'>,
  location: { href: string },
  replaceUrl: (url: string) => void,
): () => void {
  return store.subscribe((now, before) => {
    if (now.activeKey !== before.activeKey) replaceUrl(urlWithThread(location.href, now.activeKey));
  });
}
