import * as fs from 'node:fs';
import * as net from 'node:net';
import { dirname, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { SerialQueue } from '../../src-shared/lifecycle/serialQueue.js';
import { FrameTooLarge, LineSplitter, RpcCode, type RpcError, type RpcResponse } from '../../src-shared/protocol/jsonrpc.js';
import type { BoardService } from '../board/boardService.js';
import type { AgentRegistry } from './agentRegistry.js';

/** Who a secret belongs to: the Roster, or a bare registry in tests. */
type Authenticator = Pick<AgentRegistry, 'authenticate'> & Partial<Pick<AgentRegistry, 'deadSecretOf'>>;
import { PERSON_CHECK_METHOD, type PersonCheckResult } from '../../src-shared/protocol/hookMethods.js';
import { callAsAgent, callAsPerson, type AgentCallHooks } from './agentRpc.js';
import type { PeerJudge } from './peerJudge.js';
import { ConnectionBudget, type Limits } from './connectionBudget.js';
import type { Timers } from '../base/timers.js';

/** The socket's budget and clock, for tests that need them small or driven by hand. */
export interface SocketOptions {
  limits?: Limits;
  timers?: Timers;
}

/** What the socket knows about one connection. */
interface Conn {
  readonly socket: net.Socket;
  /** Bytes received before the connection authenticated, against the budget's limit for that. */
  unauthenticatedBytes: number;
}

/** Where a Thread's socket lives. Unix sockets have a ~104-byte path limit (macOS), so the name is short. */
export function socketPathFor(dir: string, threadKey: string, platform = process.platform): string {
  const name = threadSocketName(threadKey);
  // In a folder of its own: an agent's sandbox binds that folder, not the socket file, so a board host that
  // starts again (and makes a new socket file there) is reached by the agents that outlived the last one.
  return platform === 'win32' ? `\\\\.\\pipe\\forkbench-${name}` : join(dir, name, 'agents.sock');
}

/** The Thread's name in the runtime folder: its socket's folder, and its host lock (`<name>.lock`). */
export const threadSocketName = (threadKey: string) => `fb-${threadKey.replace(/[^A-Za-z0-9]/g, '').slice(0, 12)}`;

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
 * A secret works only from its agent's own pane: the kernel names the connecting process (SO_PEERCRED), and
 * the host knows which pane it runs in, so a secret read from another agent's environment is refused.
 * Anything malformed gets a JSON-RPC error; a frame over 1 MiB gets an error and the connection is closed.
 * Until a connection authenticates it may send only a small request, within a short deadline, in a small
 * pool whose oldest member goes first (connectionBudget.ts). No input can take the host down.
 */
export class AgentSocket {
  private readonly conns = new Set<net.Socket>();

  private constructor(
    readonly path: string,
    private readonly server: net.Server,
    readonly budget: ConnectionBudget,
  ) {}

  static async listen(path: string, registry: Authenticator, board: BoardService, hooks: AgentCallHooks = {}, judge?: PeerJudge, opts: SocketOptions = {}): Promise<AgentSocket> {
    // The socket's own folder (socketPathFor), private as the runtime folder it lies in.
    if (process.platform !== 'win32') fs.mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    if (process.platform !== 'win32' && fs.existsSync(path)) {
      // A socket file left by a host that died. Anything else at that path is not ours to delete.
      if (!fs.lstatSync(path).isSocket()) throw new Error(`${path} exists and is not a socket`);
      // Only a refused connection means stale: a socket another live host listens on is never deleted.
      if (await socketAnswers(path)) throw new Error(`another Forkbench host is listening on ${path}; this Thread is open there`);
      fs.rmSync(path, { force: true });
    }
    const server = net.createServer();
    const refuse = (c: net.Socket, why: string) => {
      // One short line, then the descriptor goes at once: a client that never reads holds nothing here.
      if (!c.destroyed) c.end(`${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: RpcCode.unauthorized, message: why, data: { reason: 'connection-limit' } } })}\n`);
      c.destroy();
    };
    const sock = new AgentSocket(path, server, new ConnectionBudget(refuse, opts.limits, opts.timers));
    server.on('connection', (c) => {
      if (!sock.budget.admit(c)) return refuse(c, `the agents' socket holds ${sock.budget.limits.maxConnections} connections already`);
      sock.serve(c, registry, board, hooks, judge);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
    // An accept that fails (EMFILE: the process is out of descriptors) is the server's 'error' event; with
    // no listener that is an uncaught exception, which stops the host and ends every agent. The connection
    // it could not take is simply not served (libuv closes it); the next accept may succeed.
    server.on('error', () => undefined);
    if (process.platform !== 'win32') fs.chmodSync(path, 0o600);
    return sock;
  }

  private serve(c: net.Socket, registry: Authenticator, board: BoardService, hooks: AgentCallHooks, judge: PeerJudge | undefined): void {
    this.conns.add(c);
    const conn: Conn = { socket: c, unauthenticatedBytes: 0 };
    c.on('close', () => {
      this.conns.delete(c);
      this.budget.drop(c);
    });
    c.on('error', () => c.destroy());
    // A client that does not read its answers: stop reading its requests until it does.
    c.on('drain', () => c.resume());
    const decoder = new StringDecoder('utf8');
    const lines = new LineSplitter();
    // Requests on one connection are answered in order, one at a time.
    const requests = new SerialQueue();
    const send = (r: RpcResponse) => {
      if (c.destroyed) return;
      c.write(`${JSON.stringify(r)}\n`);
      if (c.writableLength > this.budget.limits.maxQueuedAnswerBytes) c.pause();
    };
    const fail = (id: Id, error: RpcError) => send({ jsonrpc: '2.0', id, error });
    c.on('data', (chunk: Buffer) => {
      if (!this.budget.isAuthenticated(c)) {
        conn.unauthenticatedBytes += chunk.length;
        if (conn.unauthenticatedBytes > this.budget.limits.unauthenticatedBytes) {
          fail(null, { code: RpcCode.invalidRequest, message: `more than ${this.budget.limits.unauthenticatedBytes} bytes before an authenticated request` });
          // The line is in the client's queue already (a Unix socket's write is): its descriptor goes now.
          c.removeAllListeners('data');
          c.end();
          c.destroy();
          return;
        }
      }
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
        this.budget.setBusy(c, true);
        void requests
          .run(() => this.handle(line, registry, board, hooks, send, fail, conn, judge))
          .catch((err: Error) => fail(null, { code: RpcCode.internalError, message: err.message }))
          .finally(() => this.budget.setBusy(c, false));
      }
    });
  }

  private async handle(
    line: string,
    registry: Authenticator,
    board: BoardService,
    hooks: AgentCallHooks,
    send: (r: RpcResponse) => void,
    fail: (id: Id, e: RpcError) => void,
    conn: Conn,
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
      const caller = await judge.callerOf(conn.socket);
      if (m.method === PERSON_CHECK_METHOD) {
        const result: PersonCheckResult = caller;
        return send({ jsonrpc: '2.0', id, result });
      }
      if (!caller.person) return fail(id, { code: RpcCode.unauthorized, message: `${caller.pane.startsWith('(') ? caller.pane.slice(1, -1) : `a process in the agent pane ${caller.pane}`} is not a person`, data: { reason: 'unauthorized' } });
      const out = await callAsPerson(board, m.method, m.params, hooks);
      return out.ok ? send({ jsonrpc: '2.0', id, result: out.value }) : fail(id, out.error);
    }
    const agent = registry.authenticate(m.auth);
    if (!agent) {
      // A commit that landed after its agent's pane closed (git was inside `git commit` then): its report
      // comes with the dead secret, and the board records nothing of it. The branch is put back at the record,
      // the commit kept aside, as for any move the board refused (issue 49).
      const task = (m.params as { taskId?: unknown } | undefined)?.taskId;
      if (m.method === 'record' && typeof task === 'string' && /^T-\d+$/.test(task) && registry.deadSecretOf?.(m.auth)) hooks.offRecord?.(task);
      return fail(id, { code: RpcCode.unauthorized, message: 'unknown or expired agent secret' });
    }
    // A secret works only where the host's judge says it may (peerJudge.ts: from its own agent's pane).
    const refused = judge ? await judge.refusal(conn.socket, agent) : null;
    if (refused !== null) return fail(id, { code: RpcCode.unauthorized, message: refused, data: { reason: 'not-its-pane' } });
    if (!this.budget.bind(conn.socket, agent.id)) {
      fail(id, { code: RpcCode.unauthorized, message: `${agent.name} holds ${this.budget.limits.maxPerAgent} connections already (or this connection is another agent's)`, data: { reason: 'connection-limit' } });
      conn.socket.end();
      return;
    }
    agent.calledBoard(performance.now());
    // A claim's folder is the host's work: the agent waits on it (Agent.whileHostWorks).
    const grant = hooks.afterGrant;
    const held: AgentCallHooks = grant ? { ...hooks, afterGrant: (taskId, token) => agent.whileHostWorks(() => grant(taskId, token), () => performance.now()) } : hooks;
    const out = await callAsAgent(board, agent.id, m.method, m.params, held);
    if (out.ok) send({ jsonrpc: '2.0', id, result: out.value });
    else fail(id, out.error);
  }

  async close(): Promise<void> {
    this.budget.dispose();
    for (const c of this.conns) c.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    if (process.platform !== 'win32') fs.rmSync(this.path, { force: true });
  }
}
