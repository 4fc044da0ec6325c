import * as http from 'node:http';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { firstIssue } from '../../src-shared/board/schemas.js';
import { serializedBoardJson } from '../../src-shared/board/serialized.js';
import { globalTimers, type TimerSource } from '../../src-shared/lifecycle/disposableStore.js';
import {
  LINK_CODE_PARAM,
  CodeTrade,
  SESSION_ENDED_CLOSE_CODE,
  SESSION_PATH,
  SESSION_PROBE_PATH,
  SESSION_REVOKE_PATH,
  SessionProbe,
  SessionRevoke,
  STOPPING_CLOSE_CODE,
} from '../../src-shared/protocol/serveLink.js';
import { paneFrameHead } from '../../src-shared/protocol/paneFrame.js';
import { WsRequestSchema, type ThreadSnapshot, type WindowPush, type WsServerMessage } from '../../src-shared/protocol/windowApi.js';
import type { HostWindows } from '../process/hostWindows.js';
import { credentialsIn, ServeSessions, sessionCookie, type SavedSession, type Session } from './serveSession.js';
import { newServeHost } from './serveState.js';
import { listenOnLoopback } from './loopbackListen.js';
import { staticFiles } from './staticFiles.js';

export const ServeConstants = {
  /** Largest WebSocket message accepted: a pasted 1 MiB of input plus JSON framing. */
  maxPayloadBytes: 2 * 1024 * 1024,
  /** A window that stops reading (a frozen tab) has this much queued before it is cut off, so one bad
   *  tab cannot grow the host's memory; flow control keeps a healthy window far below it. */
  maxBufferedBytes: 8 * 1024 * 1024,
  /** Largest body the code trade (and a revoke) reads: a code is 43 characters; anything near this is not one. */
  maxCodeBodyBytes: 1024,
  /** How often sessions past their time are looked for, to close their windows: a minute late on a lifetime
   *  of a week changes nothing, and the check is a walk over at most SessionConstants.maxSessions. */
  expirySweepMs: 60_000,
} as const;

export interface ServeOptions {
  /** The host process's windows: each socket is one, and they say which Thread it shows. */
  windows: HostWindows;
  /** The built renderer (vite's output). */
  staticDir: string;
  /** 0 = a random free port. */
  port?: number;
  /** The host name the window is served under (serveState's `forkbench-….localhost`); a new one otherwise. */
  host?: string;
  /** The sessions a run before gave out, and the port they were for: on another port they open nothing
   *  (the page's address, and so its origin, was the other port's). */
  sessions?: { port: number | null; saved: readonly SavedSession[]; codes?: readonly string[] };
  /** The sessions changed (a trade, a use, a revoke, an expiry): what to keep for the next run, with the hashes
   *  of the codes given out (ServeSessions.codes), so a spent link is told from a made-up one after a restart. */
  onSessionsChanged?: (saved: SavedSession[], codes: string[]) => void;
  /** Wall-clock ms, for the sessions' expiry (injected by tests). */
  now?: () => number;
  /** Timers for the expiry sweep (injected by tests). */
  timers?: TimerSource;
  /** Windows are turned away (503, as while stopping) until `admit()`: a host that listens before its
   *  Thread is open would otherwise answer a reconnecting page's snapshot with no-such-thread. */
  holdWindows?: boolean;
  /** A browser spent the link's code: `url` is the link for the next browser. */
  onLinkUsed?: (url: string) => void;
  /** Where a request that failed in an unforeseen way is reported (it is also answered, with a 500 or an error). */
  warn?: (message: string) => void;
}

export interface ServeHandle {
  /** The link to open now: its code is live until a browser spends it (then `onLinkUsed` has the next). */
  readonly url: string;
  port: number;
  /** The host name the window is served under: the only one its Host and Origin may name. */
  host: string;
  /** `http://host:port`: the page's origin. */
  origin: string;
  /** The host is stopping: every window is told so and let go at once (its page shows the host stopped
   *  while claims are released and agents end), and new windows are turned away until close(). */
  stopping(): void;
  /** Let windows in (after `holdWindows`). */
  admit(): void;
  close(): Promise<void>;
}

/**
 * Browser mode: the built renderer over HTTP and the window API over a WebSocket, on loopback only (127.0.0.1
 * and [::1], the same port: loopbackListen.ts), under a host name of its own (`forkbench-<random>.localhost`,
 * which browsers resolve to loopback themselves).
 * Each browser gets a credential of its own as an HttpOnly cookie of that name, in trade for the printed
 * link's one-time code (ServeSessions), so it is never in an address, and no other server is ever sent it:
 * browsers keep cookies per host name (not per port), and no other server has this name. It expires, and a
 * window can revoke the others. The Host must be that name (a DNS-rebinding page cannot drive the window,
 * and a page at 127.0.0.1 or localhost gets no cookie another port would see) and the Origin this server's
 * own (another site open in the browser cannot drive it either).
 */
export async function startServe(o: ServeOptions): Promise<ServeHandle> {
  const now = o.now ?? Date.now;
  const timers = o.timers ?? globalTimers;
  const sessions = new ServeSessions({ now, saved: o.sessions?.saved, pastCodes: o.sessions?.codes, onChange: (saved, codes) => o.onSessionsChanged?.(saved, codes) });
  const warn = o.warn ?? ((m: string) => process.stderr.write(`${m}\n`));
  const statics = staticFiles(o.staticDir, warn);
  const host = o.host ?? newServeHost();
  let port = 0;
  const allowedHosts = () => [`${host}:${port}`];
  const ownOrigin = (origin: string | undefined) => origin === `http://${host}:${port}`;
  const ownHost = (req: http.IncomingMessage) => allowedHosts().includes(req.headers.host ?? '');
  const link = () => `http://${host}:${port}/#${LINK_CODE_PARAM}=${sessions.linkCode}`;
  /** The session a request's cookie opens, if any. */
  const sessionOf = (req: http.IncomingMessage) => {
    for (const c of credentialsIn(req.headers.cookie)) {
      const s = sessions.find(c);
      if (s) return s;
    }
    return null;
  };
  /** Each session's open windows, closed when it is revoked or expires. */
  const windowsOf = new Map<Session, Set<WebSocket>>();
  const endWindows = (ended: readonly Session[], why: string) => {
    for (const s of ended) for (const ws of windowsOf.get(s) ?? []) ws.close(SESSION_ENDED_CLOSE_CODE, why);
  };
  let stopping = false;
  let holding = o.holdWindows ?? false;
  const failed = (req: http.IncomingMessage, res: http.ServerResponse, what: string) => (err: unknown) => {
    // A client that went away in mid-body is no fault of the host's: nothing to report, no one to answer.
    if (req.destroyed || (err as NodeJS.ErrnoException)?.code === 'ECONNRESET') return void res.destroy();
    warn(`forkbench serve: ${what} failed: ${(err as Error)?.message}`);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  };
  const server = http.createServer((req, res) => {
    // Every answer, the page itself included, only under the server's own name: a page served at 127.0.0.1
    // or localhost would have its cookie there, where every other local server is sent it.
    if (!ownHost(req)) return void res.writeHead(403, { 'Content-Type': 'text/plain; charset=utf-8' }).end('forbidden host: open the link `forkbench serve` printed\n');
    if (req.url === SESSION_PROBE_PATH) return sessionProbe(req, res, { session: sessionOf(req), ownOrigin, unavailable: stopping ? 'stopping' : holding ? 'starting' : null });
    if (req.url === SESSION_PATH) {
      const trade = { sessions, previous: sessionOf(req), endWindows, ownOrigin, onLinkUsed: () => o.onLinkUsed?.(link()) };
      tradeCode(req, res, trade).catch(failed(req, res, 'the code trade'));
      return;
    }
    if (req.url === SESSION_REVOKE_PATH) {
      revokeSessions(req, res, { sessions, session: sessionOf(req), ownOrigin, endWindows }).catch(failed(req, res, 'a revoke'));
      return;
    }
    void statics(req, res);
  });
  // Sessions past their time have their windows closed (a new window is refused by `find` at once).
  let sweep: unknown = null;
  const armSweep = () => {
    sweep = timers.setTimeout(() => {
      endWindows(sessions.expire(), 'this browser session expired: open the newest link `forkbench serve` printed');
      armSweep();
    }, ServeConstants.expirySweepMs);
    timers.unref?.(sweep);
  };
  const wss = new WebSocketServer({ noServer: true, maxPayload: ServeConstants.maxPayloadBytes });
  const paneMessage = paneMessages();

  server.on('upgrade', (req, socket, head) => {
    // A client that resets the connection while it is refused must not take the process with it.
    socket.on('error', () => socket.destroy());
    const refuse = (status: number, why: string) => {
      socket.write(`HTTP/1.1 ${status} ${why}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      socket.destroy();
    };
    try {
      let url: URL;
      try {
        url = new URL(req.url ?? '/', 'http://127.0.0.1');
      } catch {
        return refuse(400, 'Bad Request');
      }
      if (url.pathname !== '/ws') return refuse(404, 'Not Found');
      if (!ownHost(req)) return refuse(403, 'Forbidden host');
      if (!ownOrigin(req.headers.origin)) return refuse(403, 'Forbidden origin');
      const session = sessionOf(req);
      if (!session) return refuse(401, 'Unauthorized');
      if (stopping || holding) return refuse(503, stopping ? 'Stopping' : 'Starting');
      wss.handleUpgrade(req, socket, head, (ws) => {
        const open = windowsOf.get(session) ?? new Set<WebSocket>();
        windowsOf.set(session, open.add(ws));
        sessions.opened(session);
        ws.once('close', () => {
          open.delete(ws);
          if (open.size === 0) windowsOf.delete(session);
          sessions.closed(session);
        });
        serveWindow(ws, o.windows, warn, paneMessage);
      });
    } catch (err) {
      warn(`forkbench serve: WebSocket upgrade failed: ${(err as Error).message}`);
      refuse(500, 'Internal Server Error');
    }
  });

  const listening = await listenOnLoopback(server, o.port ?? 0);
  port = listening.port;
  const v6 = listening.v6;
  v6?.on('error', (err) => warn(`forkbench serve: [::1]: ${err.message}`));
  // The sessions a run before gave out were for the page at its port: on another port no page has them.
  if (o.sessions && o.sessions.port !== port) sessions.clear();
  // Kept before any link is printed: the next run then knows this run's live code as given out.
  sessions.changed();
  armSweep();
  // Listening, an error no request owns (the listening socket failing) is reported, not thrown.
  server.on('error', (err) => warn(`forkbench serve: ${err.message}`));
  return {
    get url() {
      return link();
    },
    port,
    host,
    origin: `http://${host}:${port}`,
    admit: () => {
      holding = false;
    },
    stopping: () => {
      stopping = true;
      for (const c of wss.clients) c.close(STOPPING_CLOSE_CODE, 'the Forkbench host is stopping');
    },
    close: async () => {
      timers.clearTimeout(sweep);
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.closeAllConnections();
      const closing = (s: { close(done: () => void): unknown } | null) => new Promise<void>((resolve) => (s ? s.close(() => resolve()) : resolve()));
      await Promise.all([closing(server), closing(v6)]);
    },
  };
}

interface Trade {
  sessions: ServeSessions;
  /** The session the trading browser had (its cookie), which the new one replaces. */
  previous: Session | null;
  endWindows: (ended: readonly Session[], why: string) => void;
  ownOrigin: (origin: string | undefined) => boolean;
  onLinkUsed: () => void;
}

const plain = (res: http.ServerResponse, status: number, text = '', headers: http.OutgoingHttpHeaders = {}) =>
  void res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...headers }).end(text);

/** A small request body as text, or null when it is over ServeConstants.maxCodeBodyBytes (answered 413). */
async function smallBody(req: http.IncomingMessage, res: http.ServerResponse): Promise<string | null> {
  let body = '';
  for await (const chunk of req) {
    body += String(chunk);
    if (body.length > ServeConstants.maxCodeBodyBytes) {
      plain(res, 413);
      req.destroy();
      return null;
    }
  }
  return body;
}

/**
 * `POST /session` with the link's code as its body: the live code is spent and answered with a new
 * credential for this browser, as its cookie. The browser's previous credential, if it sent one, is ended:
 * a copy of it opens nothing from now on (the browser's own windows reconnect with the new cookie). Only the
 * page this server sent may trade (the server's Host, already checked, and its Origin), so another site
 * cannot plant its own session in the browser either.
 */
async function tradeCode(req: http.IncomingMessage, res: http.ServerResponse, t: Trade): Promise<void> {
  if (req.method !== 'POST') return plain(res, 405);
  if (!t.ownOrigin(req.headers.origin)) return plain(res, 403, 'forbidden\n');
  const body = await smallBody(req, res);
  if (body === null) return;
  const code = body.trim();
  const credential = t.sessions.redeem(code);
  if (!credential) {
    if (t.sessions.wasSpent(code)) return plain(res, CodeTrade.spent, 'this link was used already: open the newest link `forkbench serve` printed\n');
    return plain(res, CodeTrade.unknown, 'this host never gave out this link (mistyped, cut short, or for another data folder): open the newest link `forkbench serve` printed\n');
  }
  if (t.previous) {
    t.sessions.revoke(t.previous);
    t.endWindows([t.previous], 'this browser opened a new link: reconnect with its new session');
  }
  res.writeHead(204, { 'Set-Cookie': sessionCookie(credential), 'Cache-Control': 'no-store' }).end();
  t.onLinkUsed();
}

/**
 * `POST /session-revoke` from a page with a session: ends every other browser's session (`others`), their
 * windows closed at once, or the page's own (`own`). Answers how many were ended. Origin as for the trade.
 */
async function revokeSessions(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  r: { sessions: ServeSessions; session: Session | null; ownOrigin: (origin: string | undefined) => boolean; endWindows: (ended: readonly Session[], why: string) => void },
): Promise<void> {
  if (req.method !== 'POST') return plain(res, 405);
  if (!r.ownOrigin(req.headers.origin)) return plain(res, 403, 'forbidden\n');
  const body = await smallBody(req, res);
  if (body === null) return;
  if (!r.session) return plain(res, SessionProbe.refused, 'this page has no session on this host\n');
  const what = body.trim();
  if (what === SessionRevoke.others) {
    const ended = r.sessions.revokeOthers(r.session);
    r.endWindows(ended, 'signed out from another window: open the newest link `forkbench serve` printed');
    return plain(res, 200, String(ended.length));
  }
  if (what === SessionRevoke.own) {
    r.sessions.revoke(r.session);
    r.endWindows([r.session], 'signed out: open the newest link `forkbench serve` printed');
    return plain(res, 200, '1');
  }
  return plain(res, 400, `say ${SessionRevoke.others} or ${SessionRevoke.own}\n`);
}

/**
 * `GET /session-check`: whether the request's cookie would let a socket in, as a status (SessionProbe) and a line
 * a person can read (503 while starting or stopping). The Origin is checked as for the socket when one is sent
 * (a same-origin GET from the page need not send one); it says nothing but yes or no about the cookie.
 */
function sessionProbe(req: http.IncomingMessage, res: http.ServerResponse, p: { session: Session | null; ownOrigin: (origin: string | undefined) => boolean; unavailable: 'stopping' | 'starting' | null }): void {
  if (req.method !== 'GET') return plain(res, 405);
  if (req.headers.origin !== undefined && !p.ownOrigin(req.headers.origin)) return plain(res, 403, 'forbidden\n');
  if (p.unavailable) return plain(res, SessionProbe.unavailable, `the Forkbench host is ${p.unavailable}\n`);
  if (!p.session) return plain(res, SessionProbe.refused, 'this page has no session on this host (none, expired or signed out): open the newest link `forkbench serve` printed\n');
  res.writeHead(SessionProbe.admitted, { 'Cache-Control': 'no-store' }).end();
}

type PaneData = Extract<WindowPush, { type: 'pane-data' }>;

/**
 * Pane output as the binary message the page reads (src-shared/protocol/paneFrame.ts): the text's UTF-8
 * written once straight behind its header, and the same bytes sent to every window of its Thread.
 */
function paneMessages(): (push: PaneData) => Buffer {
  let last: { push: PaneData; message: Buffer } | null = null;
  return (push) => {
    if (last?.push === push) return last.message;
    const head = paneFrameHead(push.key, push.agentId);
    const message = Buffer.allocUnsafe(head.length + Buffer.byteLength(push.data, 'utf8'));
    message.set(head, 0);
    message.write(push.data, head.length, 'utf8');
    last = { push, message };
    return message;
  };
}

/** Sockets served so far: each gets its own flow-control name. */
let sockets = 0;

function serveWindow(ws: WebSocket, windows: HostWindows, warn: (message: string) => void, paneMessage: (push: PaneData) => Buffer): void {
  const consumer = `ws-${++sockets}`;
  const sendMessage = (message: string | Buffer) => {
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > ServeConstants.maxBufferedBytes) {
      ws.terminate();
      return;
    }
    ws.send(message, { binary: typeof message !== 'string' });
  };
  const send = (m: WsServerMessage) => sendMessage(JSON.stringify(m));
  // Which pushes reach this window (its Threads', pane output only of the one it shows) is HostWindows' rule.
  const window = windows.add(consumer, (push) => (push.type === 'pane-data' ? sendMessage(paneMessage(push)) : send({ push })));
  const answer = async (raw: RawData, isBinary: boolean): Promise<void> => {
    const frame = readFrame(raw, isBinary);
    if (!frame.ok) return send({ id: frame.id, ok: false, error: { code: 'bad-message', message: frame.message } });
    const { id, method, params } = frame.request;
    try {
      const out = await windows.call(method, params, consumer);
      if (out.ok && method === 'thread.snapshot') sendMessage(snapshotAnswer(id, out.value as ThreadSnapshot));
      else send({ id, ...out });
    } catch (err) {
      // The router answers every refusal itself; this is a fault of the host's own (a snapshot too large to
      // write, say), answered under the request's own id so the page is not left waiting for it.
      warn(`forkbench serve: a window request (${method}) failed: ${(err as Error)?.stack ?? String(err)}`);
      send({ id, ok: false, error: { code: 'failed', message: `the host failed on ${method}: ${(err as Error)?.message ?? String(err)}; see its log` } });
    }
  };
  ws.on('message', (raw, isBinary) => {
    answer(raw, isBinary).catch((err: unknown) => warn(`forkbench serve: a window message failed: ${(err as Error)?.stack ?? String(err)}`));
  });
  ws.on('close', () => window.dispose());
  ws.on('error', () => ws.terminate());
}

type Frame = { ok: true; request: { id: number; method: string; params?: unknown } } | { ok: false; id: number; message: string };

/** One WebSocket message as a request, checked against the shared frame schema before any field is used. A
 *  refused frame is answered under its id when that much of it is readable, so its caller is not left waiting. */
function readFrame(raw: RawData, isBinary: boolean): Frame {
  if (isBinary) return { ok: false, id: -1, message: 'binary frames are not part of the protocol; send JSON text' };
  let value: unknown;
  try {
    value = JSON.parse(raw.toString());
  } catch {
    return { ok: false, id: -1, message: 'not JSON' };
  }
  const parsed = WsRequestSchema.safeParse(value);
  if (parsed.success) return { ok: true, request: parsed.data };
  const id = WsRequestSchema.shape.id.safeParse((value as { id?: unknown } | null)?.id);
  return { ok: false, id: id.success ? id.data : -1, message: firstIssue(parsed.error) };
}

/** `{id, ok: true, value: snapshot}` as text, the board's tasks from their kept JSON (serializedBoardJson). */
export function snapshotAnswer(id: number, snapshot: ThreadSnapshot): string {
  const { board, ...rest } = snapshot;
  // `board` last, as a stand-in: the text ends `"board":0}}`, and the board goes where the 0 was.
  const head = JSON.stringify({ id, ok: true, value: { ...rest, board: 0 } } satisfies WsServerMessage);
  return `${head.slice(0, -3)}${serializedBoardJson(board)}}}`;
}
