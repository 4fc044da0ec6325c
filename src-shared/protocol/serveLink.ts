/**
 * How a browser gets into `serve`, shared by the host and the page. The printed link names the server's own
 * host (`http://forkbench-<random>.localhost:PORT/`) and carries a one-time code in its fragment (`#code=…`):
 * a fragment is never sent in a request, so no request URL, cache entry or server log holds it. The page
 * takes it out of its address, then trades it once, in a POST body, for a credential of this browser's own
 * as an HttpOnly cookie of that host name, which its WebSocket then carries. The page's scripts never see the
 * credential, no other server is ever sent it (a cookie goes to its host name only, and no other server has
 * this one), and no address the browser keeps opens the window again: the code is spent.
 */

/** The fragment parameter of the printed link. */
export const LINK_CODE_PARAM = 'code';

/** Where the page trades the code (the request body, as text) for the cookie. 204 if it was the live code. */
export const SESSION_PATH = '/session';

/** What SESSION_PATH answers a code: traded for a cookie; refused as one this host gave out and that is spent
 *  (used by a browser, or the live code of an earlier run of the host); or refused as one it never gave out (a
 *  mistyped or made-up link). Telling the last two apart gives nothing away: a code is 256 random bits, and a
 *  spent one opens nothing. */
export const CodeTrade = { traded: 204, spent: 410, unknown: 403 } as const;

/** Where a page asks whether its cookie is let in (a GET, no body). */
export const SESSION_PROBE_PATH = '/session-check';

/** What `GET` on SESSION_PROBE_PATH answers, for a page whose socket closed or was refused, to say why (a browser's
 *  WebSocket never sees the refusal's status): its cookie is let in, it is not, or the host is starting or stopping. */
export const SessionProbe = { admitted: 204, refused: 401, unavailable: 503 } as const;

/** Where a page ends browser sessions (a POST; its body one of SessionRevoke). 200, the number ended, as text. */
export const SESSION_REVOKE_PATH = '/session-revoke';

/** What SESSION_REVOKE_PATH ends: every other browser's session, or this page's own. */
export const SessionRevoke = { others: 'others', own: 'own' } as const;

/** The close code of a window whose session was revoked or expired: it needs a new link. */
export const SESSION_ENDED_CLOSE_CODE = 4003;

/** The WebSocket close code a stopping host sends every window (4000–4999 are the application's own). */
export const STOPPING_CLOSE_CODE = 4001;
