import * as fs from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { SerialQueue } from '../../src-shared/lifecycle/serialQueue.js';
import { FrameTooLarge, LineSplitter, RpcCode, type RpcError, type RpcResponse } from '../../src-shared/protocol/jsonrpc.js';
import type { BoardService } from '../board/boardService.js';
import type { AgentRegistry } from './agentRegistry.js';
import { PERSON_CHECK_METHOD, type PersonCheckResult } from '../../src-shared/protocol/hookMethods.js';
import { callAsAgent, callAsPerson, type AgentCallHooks } from './agentRpc.js';
import { peerPid, type Caller } from './peerCredentials.js';

/** How the socket tells a person from an agent pane: the host knows its panes; perl reads the peer's pid. */
export interface PeerJudge {
  perl: string | null;
  /** The pane a process runs in (its name), or null for a process in none. */
  callerOf(pid: number | null): Caller;
}

/** Where a Thread's socket lives. Unix sockets have a ~104-byte path limit (macOS), so the name is short. */
export function socketPathFor(dir: string, threadKey: string, platform = process.platform): string {
  const name = `fb-${threadKey.replace(/[^A-Za-z0-9]/g, '').slice(0, 12)}`;
  return platform === 'win32' ? `\\\\.\\pipe\\forkbench-${name}` : join(dir, `${name}.sock`);
}

type Id = number | string | null;

/** Whether something accepts connections on a Unix socket path (ECONNREFUSED/ENOENT: nobody does). */
function socketAnswers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.createConnection(path);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

/**
 * The agents' door to the board: newline-delimited JSON-RPC 2.0 on a Unix socket (0600, in a 0700 folder).
 * Every request carries the agent's secret; it decides who is calling, so one agent cannot act as another.
 * Anything malformed gets a JSON-RPC error; a frame over 1 MiB gets an error and the connection is closed.
 * No input can take the host down.
 */
export class AgentSocket {
  private readonly conns = new Set<net.Socket>();

  private constructor(
    readonly path: string,
    private readonly server: net.Server,
  ) {}

  static async listen(path: string, registry: AgentRegistry, board: BoardService, hooks: AgentCallHooks = {}, judge?: PeerJudge): Promise<AgentSocket> {
    if (process.platform !== 'win32' && fs.existsSync(path)) {
      // A socket file left by a host that died. Anything else at that path is not ours to delete.
      if (!fs.lstatSync(path).isSocket()) throw new Error(`${path} exists and is not a socket`);
      // Only a refused connection means stale: a socket another live host listens on is never deleted.
      if (await socketAnswers(path)) throw new Error(`another Forkbench host is listening on ${path}; this Thread is open there`);
      fs.rmSync(path, { force: true });
    }
    const server = net.createServer();
    const sock = new AgentSocket(path, server);
    server.on('connection', (c) => sock.serve(c, registry, board, hooks, judge));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
    if (process.platform !== 'win32') fs.chmodSync(path, 0o600);
    return sock;
  }

  private serve(c: net.Socket, registry: AgentRegistry, board: BoardService, hooks: AgentCallHooks, judge: PeerJudge | undefined): void {
    this.conns.add(c);
    c.on('close', () => this.conns.delete(c));
    c.on('error', () => c.destroy());
    const decoder = new StringDecoder('utf8');
    const lines = new LineSplitter();
    // Requests on one connection are answered in order, one at a time.
    const requests = new SerialQueue();
    const send = (r: RpcResponse) => {
      if (!c.destroyed) c.write(`${JSON.stringify(r)}\n`);
    };
    const fail = (id: Id, error: RpcError) => send({ jsonrpc: '2.0', id, error });
    c.on('data', (chunk: Buffer) => {
      let got: string[];
      try {
        got = lines.push(decoder.write(chunk));
      } catch (err) {
        if (err instanceof FrameTooLarge) {
          fail(null, { code: RpcCode.invalidRequest, message: err.message });
          c.end();
          c.removeAllListeners('data');
          return;
        }
        throw err;
      }
      for (const line of got) {
        if (!line.trim()) continue;
        void requests.run(() => this.handle(line, registry, board, hooks, send, fail, c, judge)).catch((err: Error) => fail(null, { code: RpcCode.internalError, message: err.message }));
      }
    });
  }

  private async handle(
    line: string,
    registry: AgentRegistry,
    board: BoardService,
    hooks: AgentCallHooks,
    send: (r: RpcResponse) => void,
    fail: (id: Id, e: RpcError) => void,
    conn: net.Socket,
    judge: PeerJudge | undefined,
  ): Promise<void> {
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      return fail(null, { code: RpcCode.parseError, message: 'not JSON' });
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return fail(null, { code: RpcCode.invalidRequest, message: 'a request is a JSON object' });
    const m = msg as Record<string, unknown>;
    const id: Id = typeof m.id === 'number' || typeof m.id === 'string' ? m.id : null;
    if (m.jsonrpc !== '2.0' || typeof m.method !== 'string' || id === null)
      return fail(id, { code: RpcCode.invalidRequest, message: 'need jsonrpc "2.0", a method and an id' });
    if (m.params !== undefined && (typeof m.params !== 'object' || m.params === null || Array.isArray(m.params)))
      return fail(id, { code: RpcCode.invalidParams, message: 'params must be an object' });
    // No secret: a git hook asking for a person. The kernel says who is calling; the host says whether that
    // process is in a pane. Only the person check and a person's record are open this way.
    if (m.auth === undefined && (m.method === PERSON_CHECK_METHOD || m.method === 'record') && judge) {
      const caller = judge.callerOf(await peerPid(conn, judge.perl));
      if (m.method === PERSON_CHECK_METHOD) {
        const result: PersonCheckResult = caller;
        return send({ jsonrpc: '2.0', id, result });
      }
      if (!caller.person) return fail(id, { code: RpcCode.unauthorized, message: `${caller.pane.startsWith('(') ? caller.pane.slice(1, -1) : `a process in the agent pane ${caller.pane}`} is not a person`, data: { reason: 'unauthorized' } });
      const out = await callAsPerson(board, m.method, m.params, hooks);
      return out.ok ? send({ jsonrpc: '2.0', id, result: out.value }) : fail(id, out.error);
    }
    const agent = registry.authenticate(m.auth);
    if (!agent) return fail(id, { code: RpcCode.unauthorized, message: 'unknown or expired agent secret' });
    agent.lastBoardCallAt = performance.now();
    const out = await callAsAgent(board, agent.id, m.method, m.params, hooks);
    if (out.ok) send({ jsonrpc: '2.0', id, result: out.value });
    else fail(id, out.error);
  }

  async close(): Promise<void> {
    for (const c of this.conns) c.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    if (process.platform !== 'win32') fs.rmSync(this.path, { force: true });
  }
}
