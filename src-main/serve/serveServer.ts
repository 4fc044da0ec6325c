import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { firstIssue } from '../../src-shared/board/schemas.js';
import { serializedBoardJson } from '../../src-shared/board/serialized.js';
import { WsRequestSchema, type ThreadSnapshot, type WsServerMessage } from '../../src-shared/protocol/windowApi.js';
import type { ThreadManager } from '../host/threadManager.js';
import { WindowRouter } from '../host/windowRouter.js';
import { staticFiles } from './staticFiles.js';

export const ServeConstants = {
  /** Largest WebSocket message accepted: a pasted 1 MiB of input plus JSON framing. */
  maxPayloadBytes: 2 * 1024 * 1024,
  /** A window that stops reading (a frozen tab) has this much queued before it is cut off, so one bad
   *  tab cannot grow the host's memory; flow control keeps a healthy window far below it. */
  maxBufferedBytes: 8 * 1024 * 1024,
} as const;

export interface ServeOptions {
  threads: ThreadManager;
  /** The built renderer (vite's output). */
  staticDir: string;
  /** 0 = a random free port. */
  port?: number;
  /** Fixed token for tests; random otherwise. */
  token?: string;
  /** Where a request that failed in an unforeseen way is reported (it is also answered, with a 500 or an error). */
  warn?: (message: string) => void;
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
  const warn = o.warn ?? ((m: string) => process.stderr.write(`${m}\n`));
  const server = http.createServer(staticFiles(o.staticDir, warn));
  const wss = new WebSocketServer({ noServer: true, maxPayload: ServeConstants.maxPayloadBytes });
  let port = 0;
  const allowedHosts = () => [`127.0.0.1:${port}`, `localhost:${port}`];

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
      const origin = req.headers.origin;
      if (!origin || !allowedHosts().map((h) => `http://${h}`).includes(origin)) return refuse(403, 'Forbidden origin');
      if (!sameSecret(url.searchParams.get('token') ?? '', token)) return refuse(401, 'Unauthorized');
      wss.handleUpgrade(req, socket, head, (ws) => serveWindow(ws, router, o.threads, warn));
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

function serveWindow(ws: WebSocket, router: WindowRouter, threads: ThreadManager, warn: (message: string) => void): void {
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
  const answer = async (raw: RawData, isBinary: boolean): Promise<void> => {
    const frame = readFrame(raw, isBinary);
    if (!frame.ok) return send({ id: frame.id, ok: false, error: { code: 'bad-message', message: frame.message } });
    const { id, method, params } = frame.request;
    const out = await router.call(method, params, consumer);
    if (out.ok && method === 'thread.snapshot') sendText(snapshotAnswer(id, out.result as ThreadSnapshot));
    else send(out.ok ? { id, ok: true, result: out.result } : { id, ok: false, error: out.error });
  };
  ws.on('message', (raw, isBinary) => {
    answer(raw, isBinary).catch((err: unknown) => {
      // The router answers every refusal itself; this is a fault of the host's own, so it is reported too.
      warn(`forkbench serve: a window request failed: ${(err as Error)?.stack ?? String(err)}`);
      send({ id: -1, ok: false, error: { code: 'failed', message: 'the host failed on this request; see its log' } });
    });
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

/** `{id, ok: true, result: snapshot}` as text, the board's tasks from their kept JSON (serializedBoardJson). */
export function snapshotAnswer(id: number, snapshot: ThreadSnapshot): string {
  const { board, ...rest } = snapshot;
  // `board` last, as a stand-in: the text ends `"board":0}}`, and the board goes where the 0 was.
  const head = JSON.stringify({ id, ok: true, result: { ...rest, board: 0 } } satisfies WsServerMessage);
  return `${head.slice(0, -3)}${serializedBoardJson(board)}}}`;
}
