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
