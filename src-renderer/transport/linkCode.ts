import { CodeTrade, LINK_CODE_PARAM, SESSION_PATH, SESSION_PROBE_PATH, SESSION_REVOKE_PATH, SessionProbe, type SessionRevoke } from '../../src-shared/protocol/serveLink.js';
import type { ProbeResult } from './types.js';
import { takeFromFragment } from '../address.js';

/**
 * The serve link's one-time code (`#code=…`, src-shared/protocol/serveLink.ts): taken out of the address bar
 * before anything else runs, so a copied address or a screenshot does not carry it, and traded for the
 * window's cookie. The page never holds the credential itself: its WebSocket carries the cookie.
 */
export function takeLinkCode(href: string, replaceUrl: (address: string) => void): string | null {
  const { value, address } = takeFromFragment(href, LINK_CODE_PARAM);
  if (value !== null) replaceUrl(address);
  return value;
}

/** How the trade of a link's code went: the host's answer (CodeTrade), or `failed` when it gave none. */
export type TradeOutcome = 'traded' | 'spent' | 'unknown' | 'failed';

/**
 * Trades `code` for the cookie. Settles either way and never throws: a spent code (a reload of the printed
 * link, a restored tab) is refused, and the cookie the first trade set still lets the socket in; with no
 * cookie the socket is refused and the page says whether the link was spent or never one of this host's.
 */
export async function tradeLinkCode(code: string, post: (path: string, body: string) => Promise<{ ok: boolean; status: number }>): Promise<TradeOutcome> {
  try {
    const res = await post(SESSION_PATH, code);
    if (res.ok) return 'traded';
    if (res.status === CodeTrade.spent) return 'spent';
    return res.status === CodeTrade.unknown ? 'unknown' : 'failed';
  } catch {
    return 'failed';
  }
}

export function wsUrlFor(location: { protocol: string; host: string }): string {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${proto}//${location.host}/ws`;
}

/** Why the socket did not open, as the host says it (`GET /session-check`): a fetch that fails is a host not there. */
export async function probeSession(get: (path: string) => Promise<{ status: number }>): Promise<ProbeResult> {
  try {
    const { status } = await get(SESSION_PROBE_PATH);
    if (status === SessionProbe.admitted) return 'admitted';
    if (status === SessionProbe.refused) return 'refused';
    // 503 while starting or stopping; anything else (a proxy's 502, say) is a host that cannot serve this page now.
    return status === SessionProbe.unavailable ? 'unavailable' : 'unreachable';
  } catch {
    return 'unreachable';
  }
}

/**
 * Ends browser sessions on the serve host: every other browser's (`others`: their windows close at once and
 * need a new link) or this page's own. The number ended, or the host's refusal as an error a person can read.
 */
export async function revokeSessions(
  what: (typeof SessionRevoke)[keyof typeof SessionRevoke],
  post: (path: string, body: string) => Promise<{ ok: boolean; status: number; text(): Promise<string> }>,
): Promise<number> {
  const res = await post(SESSION_REVOKE_PATH, what);
  const text = (await res.text()).trim();
  if (!res.ok) throw new Error(text || `the host answered ${res.status}`);
  return Number(text);
}
