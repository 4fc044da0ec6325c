import WebSocket from 'ws';
import { readPaneFrame } from '../src-shared/protocol/paneFrame.js';
import type { WindowMethod, WindowParams, WindowPush, WindowResult, WsServerMessage } from '../src-shared/protocol/windowApi.js';
import type { Served } from './harness.js';

export interface WindowClient {
  call<M extends WindowMethod>(method: M, params: WindowParams<M>): Promise<WindowResult<M>>;
  /** As call, with where its answer came in the stream: how many pushes arrived before it. Pushes and answers
   *  share one ordered channel, and several can be read from one chunk before an awaited answer resumes. */
  callPlaced<M extends WindowMethod>(method: M, params: WindowParams<M>): Promise<{ value: WindowResult<M>; pushesBefore: number }>;
  /** Every push since connecting, in order. */
  readonly pushes: WindowPush[];
  /** Called with each push as it arrives. */
  onPush(fn: (p: WindowPush) => void): () => void;
  close(): void;
}

/** A WebSocket to the served host, authenticated as the page's is: its cookie, the server's Host and its Origin. */
export function windowSocket(s: Pick<Served, 'port' | 'host' | 'cookie'>): WebSocket {
  return new WebSocket(`ws://127.0.0.1:${s.port}/ws`, { headers: { Host: `${s.host}:${s.port}`, Origin: `http://${s.host}:${s.port}`, Cookie: s.cookie } });
}

/** A binary message from the host as the `pane-data` push it carries, read as the page reads it. */
export function paneDataOf(raw: Buffer): WindowPush {
  const head = readPaneFrame(raw);
  if ('error' in head) throw new Error(head.error);
  return { type: 'pane-data', key: head.key, agentId: head.agentId, data: raw.toString('utf8', head.textAt) };
}

/**
 * A window on a served host without a browser: the same WebSocket protocol, token and Origin the page uses.
 * For tests and benchmarks that drive the host as a window would and time what comes back.
 */
export async function windowOn(s: Pick<Served, 'port' | 'host' | 'cookie'>): Promise<WindowClient> {
  const ws = windowSocket(s);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let n = 0;
  const pushes: WindowPush[] = [];
  const listeners = new Set<(p: WindowPush) => void>();
  const waiting = new Map<number, (m: WsServerMessage) => void>();
  ws.on('message', (raw, isBinary) => {
    const m = isBinary ? { push: paneDataOf(raw as Buffer) } : (JSON.parse(raw.toString()) as WsServerMessage);
    if ('id' in m) {
      waiting.get(m.id)?.(m);
      waiting.delete(m.id);
    } else {
      pushes.push(m.push);
      for (const fn of listeners) fn(m.push);
    }
  });
  const callPlaced = <M extends WindowMethod>(method: M, params: WindowParams<M>) =>
    new Promise<{ value: WindowResult<M>; pushesBefore: number }>((resolve, reject) => {
      const id = ++n;
      waiting.set(id, (m) => ('ok' in m && m.ok ? resolve({ value: m.value as WindowResult<M>, pushesBefore: pushes.length }) : reject(new Error(JSON.stringify(m)))));
      ws.send(JSON.stringify({ id, method, params }));
    });
  return {
    pushes,
    call: async (method, params) => (await callPlaced(method, params)).value,
    callPlaced,
    onPush(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    close: () => ws.close(),
  };
}
