import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { firstIssue } from '../../src-shared/board/schemas.js';
import { serializedBoardJson } from '../../src-shared/board/serialized.js';
import { LINK_CODE_PARAM, SESSION_PATH, SESSION_PROBE_PATH, SessionProbe, STOPPING_CLOSE_CODE } from '../../src-shared/protocol/serveLink.js';
import { paneFrameHead } from '../../src-shared/protocol/paneFrame.js';
import { WsRequestSchema, type ThreadSnapshot, type WindowPush, type WsServerMessage } from '../../src-shared/protocol/windowApi.js';
import type { ThreadManager } from '../host/threadManager.js';
import { WindowRouter } from '../host/windowRouter.js';
import { ServeSession } from './serveSession.js';
import { staticFiles } from './staticFiles.js';

export const ServeConstants = {
  /** Largest WebSocket message accepted: a pasted 1 MiB of input plus JSON framing. */
  maxPayloadBytes: 2 * 1024 * 1024,
  /** A window that stops reading (a frozen tab) has this much queued before it is cut off, so one bad
   *  tab cannot grow the host's memory; flow control keeps a healthy window far below it. */
  maxBufferedBytes: 8 * 1024 * 1024,
  /** Largest body the code trade reads: a code is 43 characters; anything near this is not one. */
  maxCodeBodyBytes: 1024,
} as const;

export interface ServeOptions {
  threads: ThreadManager;
  /** The built renderer (vite's output). */
  staticDir: string;
  /** 0 = a random free port. */
  port?: number;
  /** Fixed token for tests; random otherwise. */
  token?: string;
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
  /** The window's credential, as its cookie carries it. */
  token: string;
  /** A Cookie header with the credential, for windows that are not browsers (tests, benchmarks). */
  cookie: string;
  /** The host is stopping: every window is told so and let go at once (its page shows the host stopped
   *  while claims are released and agents end), and new windows are turned away until close(). */
  stopping(): void;
  /** Let windows in (after `holdWindows`). */
  admit(): void;
  close(): Promise<void>;
}

/**
 * Browser mode: the built renderer over HTTP and the window API over a WebSocket, on 127.0.0.1 only.
 * A random token guards the socket (another local user cannot guess it): the browser gets it as an HttpOnly
 * cookie in trade for the printed link's one-time code (ServeSession), so it is never in an address. The
 * Origin must be this server's own (another site open in the browser cannot drive it), and the Host header
 * must be a loopback name (a DNS-rebinding page cannot either).
 */
export async function startServe(o: ServeOptions): Promise<ServeHandle> {
  const session = new ServeSession(o.token);
  const router = new WindowRouter(o.threads);
  const warn = o.warn ?? ((m: string) => process.stderr.write(`${m}\n`));
  const statics = staticFiles(o.staticDir, warn);
  let port = 0;
  const allowedHosts = () => [`127.0.0.1:${port}`, `localhost:${port}`];
  const ownOrigin = (origin: string | undefined) => !!origin && allowedHosts().map((h) => `http://${h}`).includes(origin);
  const link = () => `http://127.0.0.1:${port}/#${LINK_CODE_PARAM}=${session.linkCode}`;
  let stopping = false;
  let holding = o.holdWindows ?? false;
  const server = http.createServer((req, res) => {
    if (req.url === SESSION_PROBE_PATH) return sessionProbe(req, res, { session, port, allowedHosts: allowedHosts(), unavailable: stopping ? 'stopping' : holding ? 'starting' : null });
    if (req.url === SESSION_PATH) {
      const trade = { session, port, allowedHosts: allowedHosts(), ownOrigin, onLinkUsed: () => o.onLinkUsed?.(link()) };
      tradeCode(req, res, trade).catch((err: unknown) => {
        // A client that went away in mid-body is no fault of the host's: nothing to report, no one to answer.
        if (req.destroyed || (err as NodeJS.ErrnoException)?.code === 'ECONNRESET') return void res.destroy();
        warn(`forkbench serve: the code trade failed: ${(err as Error)?.message}`);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
      return;
    }
    void statics(req, res);
  });
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
      if (!allowedHosts().includes(req.headers.host ?? '')) return refuse(403, 'Forbidden host');
      if (!ownOrigin(req.headers.origin)) return refuse(403, 'Forbidden origin');
      if (!session.admits(req.headers.cookie, port)) return refuse(401, 'Unauthorized');
      if (stopping || holding) return refuse(503, stopping ? 'Stopping' : 'Starting');
      wss.handleUpgrade(req, socket, head, (ws) => serveWindow(ws, router, o.threads, warn, paneMessage));
    } catch (err) {
      warn(`forkbench serve: WebSocket upgrade failed: ${(err as Error).message}`);
      refuse(500, 'Internal Server Error');
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  // Listening, an error no request owns (the listening socket failing) is reported, not thrown.
  server.on('error', (err) => warn(`forkbench serve: ${err.message}`));
  return {
    get url() {
      return link();
    },
    port,
    token: session.token,
    cookie: `${ServeSession.cookieName(port)}=${session.token}`,
    admit: () => {
      holding = false;
    },
    stopping: () => {
      stopping = true;
      for (const c of wss.clients) c.close(STOPPING_CLOSE_CODE, 'the Forkbench host is stopping');
    },
    close: async () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Trade {
  session: ServeSession;
  port: number;
  allowedHosts: string[];
  ownOrigin: (origin: string | undefined) => boolean;
  onLinkUsed: () => void;
}

/**
 * `POST /session` with the link's code as its body: the live code is spent and answered with the window's
 * cookie. Only the page this server sent may trade (Host and Origin as for the socket), so another site
 * cannot plant its own session in the browser either.
 */
async function tradeCode(req: http.IncomingMessage, res: http.ServerResponse, t: Trade): Promise<void> {
  const answer = (status: number, text = '') =>
    void res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' }).end(text);
  if (req.method !== 'POST') return answer(405);
  if (!t.allowedHosts.includes(req.headers.host ?? '') || !t.ownOrigin(req.headers.origin)) return answer(403, 'forbidden\n');
  let body = '';
  for await (const chunk of req) {
    body += String(chunk);
    if (body.length > ServeConstants.maxCodeBodyBytes) {
      answer(413);
      req.destroy();
      return;
    }
  }
  if (!t.session.redeem(body.trim())) return answer(403, 'this link was used already: open the newest link `forkbench serve` printed\n');
  res.writeHead(204, { 'Set-Cookie': t.session.setCookie(t.port), 'Cache-Control': 'no-store' }).end();
  t.onLinkUsed();
}

/**
 * `GET /session-check`: whether the request's cookie would let a socket in, as a status (SessionProbe) and a line
 * a person can read (503 while starting or stopping). Host and Origin are checked as for the socket, when an
 * Origin is sent (a same-origin GET from the page need not send one); it says nothing but yes or no about the
 * cookie.
 */
function sessionProbe(req: http.IncomingMessage, res: http.ServerResponse, p: { session: ServeSession; port: number; allowedHosts: string[]; unavailable: 'stopping' | 'starting' | null }): void {
  const answer = (status: number, text: string) =>
    void res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' }).end(text);
  if (req.method !== 'GET') return answer(405, '');
  const origin = req.headers.origin;
  if (!p.allowedHosts.includes(req.headers.host ?? '') || (origin !== undefined && !p.allowedHosts.map((h) => `http://${h}`).includes(origin))) {
    return answer(403, 'forbidden\n');
  }
  if (p.unavailable) return answer(SessionProbe.unavailable, `the Forkbench host is ${p.unavailable}\n`);
  if (!p.session.admits(req.headers.cookie, p.port)) return answer(SessionProbe.refused, 'this page has no session on this host: open the newest link `forkbench serve` printed\n');
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

let windows = 0;

function serveWindow(ws: WebSocket, router: WindowRouter, threads: ThreadManager, warn: (message: string) => void, paneMessage: (push: PaneData) => Buffer): void {
  const consumer = `ws-${++windows}`;
  const sendMessage = (message: string | Buffer) => {
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > ServeConstants.maxBufferedBytes) {
      ws.terminate();
      return;
    }
    ws.send(message, { binary: typeof message !== 'string' });
  };
  const send = (m: WsServerMessage) => sendMessage(JSON.stringify(m));
  // Pushes go to the windows that have the Thread open, as Electron sends each to its Thread's window.
  const opened = new Set<string>();
  const sub = threads.onPush.event((push) => {
    if (!opened.has(push.key)) return;
    if (push.type === 'pane-data') sendMessage(paneMessage(push));
    else send({ push });
  });
  const answer = async (raw: RawData, isBinary: boolean): Promise<void> => {
    const frame = readFrame(raw, isBinary);
    if (!frame.ok) return send({ id: frame.id, ok: false, error: { code: 'bad-message', message: frame.message } });
    const { id, method, params } = frame.request;
    try {
      // From its snapshot on, the window hears the Thread's pushes (a few it already has are harmless: the
      // page orders events by sequence).
      const key = (params as { key?: unknown } | undefined)?.key;
      if (method === 'thread.snapshot' && typeof key === 'string') opened.add(key);
      const out = await router.call(method, params, consumer);
      if (out.ok && method === 'threads.open') opened.add((out.value as { key: string }).key);
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
  ws.on('close', () => {
    sub.dispose();
    router.detachAll(consumer);
  });
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
