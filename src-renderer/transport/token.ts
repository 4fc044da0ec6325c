import { addressWith } from '../address.js';

/**
 * The serve-mode token: `?token=` in the page URL the host printed. It is kept in sessionStorage so a reload
 * keeps working, and removed from the address bar (only that parameter; everything else, e.g. `debug=1`,
 * stays) so it does not end up in history, screenshots or a copied link.
 */
export const TOKEN_STORAGE_KEY = 'forkbench.token';

export interface TokenEnv {
  href: string;
  storage: Pick<Storage, 'getItem' | 'setItem'> | null;
  /** Replaces the address bar URL without a reload (history.replaceState). */
  replaceUrl: ((url: string) => void) | null;
}

export function takeToken(env: TokenEnv): string | null {
  const url = new URL(env.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl) {
    try {
      env.storage?.setItem(TOKEN_STORAGE_KEY, fromUrl);
      // Only strip it once it is safely stored: otherwise a reload would lose it.
      env.replaceUrl?.(addressWith(env.href, 'token', null));
    } catch {
      /* storage unavailable (private mode): keep the token in the URL so a reload still works */
    }
    return fromUrl;
  }
  try {
    return env.storage?.getItem(TOKEN_STORAGE_KEY) ?? null;
  } catch {
    return null;
  }
}

export function wsUrlFor(location: { protocol: string; host: string }, token: string | null): string {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${proto}//${location.host}/ws${token ? `?token=${encodeURIComponent(token)}` : ''}`;
}
