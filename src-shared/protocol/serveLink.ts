/**
 * How a browser gets into `serve`, shared by the host and the page. The printed link carries a one-time code
 * in its fragment (`/#code=…`): a fragment is never sent in a request, so no request URL, cache entry or
 * server log holds it. The page takes it out of its address, then trades it once, in a POST body, for the
 * window's credential as an HttpOnly cookie that its WebSocket then carries. The page's scripts never see the
 * credential, and no address the browser keeps opens the window again: the code is spent.
 */

/** The fragment parameter of the printed link. */
export const LINK_CODE_PARAM = 'code';

/** Where the page trades the code (the request body, as text) for the cookie. 204 if it was the live code. */
export const SESSION_PATH = '/session';

/** Where a page asks whether its cookie is let in (a GET, no body). */
export const SESSION_PROBE_PATH = '/session-check';

/** What `GET` on SESSION_PROBE_PATH answers, for a page whose socket closed or was refused, to say why (a browser's
 *  WebSocket never sees the refusal's status): its cookie is let in, it is not, or the host is starting or stopping. */
export const SessionProbe = { admitted: 204, refused: 401, unavailable: 503 } as const;

/** The WebSocket close code a stopping host sends every window (4000–4999 are the application's own). */
export const STOPPING_CLOSE_CODE = 4001;
