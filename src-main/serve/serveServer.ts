import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { serializedBoardJson } from '../../src-shared/board/serialized.js';
import type { ThreadSnapshot, WsClientMessage, WsServerMessage } from '../../src-shared/protocol/windowApi.js';
import type { ThreadManager } from '../host/threadManager.js';
import { WindowRouter } from '../host/windowRouter.js';

export const ServeConstants = {
  /** Largest WebSocket message accepted: a pasted 1 MiB of input plus JSON framing. */
  maxPayloadBytes: 2 * 1024 * 1024,
  /** A window that stops reading (a frozen tab) has this much queued before it is cut off, so one bad
   *  tab cannot grow the host's memory; flow control keeps a healthy window far below it. */
  maxBufferedBytes: 8 * 1024 * 1024,
} as const;

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

export interface ServeOptions {
  threads: ThreadManager;
  /** The built renderer (vite's output). */
  staticDir: string;
  /** 0 = a random free port. */
  port?: number;
  /** Fixed token for tests; random otherwise. */
  token?: string;
}

export interface ServeHandle {
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

/**
 * Browser mode: the built renderer over HTTP and the window API over a WebSocket, on 127.0.0.1 only.
 * A random token in the URL guards the socket (another local user cannot guess it), the Origin must be
 * this server's own (another site open in the browser cannot drive it), and the Host header must be a
 * loopback name (a DNS-rebinding page cannot either).
 */
export async function startServe(o: ServeOptions): Promise<ServeHandle> {
  const token = o.token ?? randomBytes(32).toString('base64url');
  const router = new WindowRouter(o.threads);
  const server = http.createServer((req, res) => serveStatic(o.staticDir, req, res));
  const wss = new WebSocketServer({ noServer: true, maxPayload: ServeConstants.maxPayloadBytes });
  let port = 0;
  const allowedHosts = () => [`127.0.0.1:${port}`, `localhost:${port}`];

  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const refuse = (status: number, why: string) => {
      socket.write(`HTTP/1.1 ${status} ${why}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      socket.destroy();
    };
    if (url.pathname !== '/ws') return refuse(404, 'Not Found');
    if (!allowedHosts().includes(req.headers.host ?? '')) return refuse(403, 'Forbidden host');
    const origin = req.headers.origin;
    if (!origin || !allowedHosts().map((h) => `http://${h}`).includes(origin)) return refuse(403, 'Forbidden origin');
    if (!sameSecret(url.searchParams.get('token') ?? '', token)) return refuse(401, 'Unauthorized');
    wss.handleUpgrade(req, socket, head, (ws) => serveWindow(ws, router, o.threads));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function sameSecret(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

let windows = 0;

function serveWindow(ws: WebSocket, router: WindowRouter, threads: ThreadManager): void {
  const consumer = `ws-${++windows}`;
  const sendText = (text: string) => {
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > ServeConstants.maxBufferedBytes) {
      ws.terminate();
      return;
    }
    ws.send(text);
  };
  const send = (m: WsServerMessage) => sendText(JSON.stringify(m));
  const sub = threads.onPush.event((push) => send({ push }));
  ws.on('message', async (raw) => {
    let msg: WsClientMessage;
    try {
      msg = JSON.parse(raw.toString()) as WsClientMessage;
    } catch {
      return send({ id: -1, ok: false, error: { code: 'bad-message', message: 'not JSON' } });
    }
    const id = typeof msg?.id === 'number' ? msg.id : -1;
    const out = await router.call(msg?.method, msg?.params, consumer);
    if (out.ok && msg?.method === 'thread.snapshot') sendText(snapshotAnswer(id, out.result as ThreadSnapshot));
    else send(out.ok ? { id, ok: true, result: out.result } : { id, ok: false, error: out.error });
  });
  ws.on('close', () => {
    sub.dispose();
    router.detachAll(consumer);
  });
  ws.on('error', () => ws.terminate());
}

/** `{id, ok: true, result: snapshot}` as text, the board's tasks from their kept JSON (serializedBoardJson). */
export function snapshotAnswer(id: number, snapshot: ThreadSnapshot): string {
  const { board, ...rest } = snapshot;
  // `board` last, as a stand-in: the text ends `"board":0}}`, and the board goes where the 0 was.
  const head = JSON.stringify({ id, ok: true, result: { ...rest, board: 0 } } satisfies WsServerMessage);
  return `${head.slice(0, -3)}${serializedBoardJson(board)}}}`;
}

function serveStatic(root: string, req: http.IncomingMessage, res: http.ServerResponse): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405).end();
    return;
  }
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  let rel = decodeURIComponent(url.pathname);
  if (rel === '/' || !extname(rel)) rel = '/index.html';
  const file = normalize(join(root, rel));
  if (!file.startsWith(root + sep)) {
    res.writeHead(403).end();
    return;
  }
  fs.readFile(file, (err, data) => {
    if (err) {
      const missing = rel === '/index.html';
      res.writeHead(missing ? 500 : 404, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(missing ? 'The window is not built: run `npm run build`.\n' : 'not found\n');
      return;
    }
    res.writeHead(200, {
      'Content-Type': MIME[extname(file)] ?? 'application/octet-stream',
      'Cache-Control': 'no-cache',
      'X-Content-Type-Options': 'nosniff',
      // The page's CSP is also in its <meta>; the header covers every response.
      'Content-Security-Policy': "default-src 'self'; connect-src 'self' ws://127.0.0.1:* ws://localhost:*; style-src 'self' 'unsafe-inline'; img-src 'self' data:; script-src 'self'",
    });
    res.end(req.method === 'HEAD' ? undefined : data);
  });
}
