import * as net from 'node:net';
import type { AgentMethod, AgentResults } from '../../src-shared/protocol/agentMethods.js';
import { LineSplitter, type RpcError, type RpcResponse } from '../../src-shared/protocol/jsonrpc.js';

/** Longer than any board call takes (the slowest, a claim that adds a git worktree, takes seconds; `done`
 *  answers before its verify command runs), short enough that a stuck host does not hang an agent's turn. */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

export class Unreachable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Unreachable';
  }
}

/**
 * A small JSON-RPC client for the agents' socket. One connection, requests answered in order. Kept to
 * node:net and the shared framing so the CLI starts about as fast as a bare `node`.
 */
export class RpcClient {
  /** No frame limit on this side: the answers come from the host, and a board of thousands of tasks can be
   *  larger than a request may be. The splitter still scans each chunk once, however big the answer. */
  private readonly lines = new LineSplitter(Number.POSITIVE_INFINITY);
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (r: RpcResponse) => void; reject: (e: Error) => void }>();

  private constructor(
    private readonly sock: net.Socket,
    private readonly secret: string,
    private readonly path: string,
    private readonly callTimeoutMs: number,
  ) {
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      for (const line of this.lines.push(d)) {
        let msg: RpcResponse;
        try {
          msg = JSON.parse(line) as RpcResponse;
        } catch {
          continue;
        }
        const w = typeof msg.id === 'number' ? this.waiting.get(msg.id) : undefined;
        if (w) {
          this.waiting.delete(msg.id as number);
          w.resolve(msg);
        } else if ('error' in msg) {
          // an error the host could not tie to a request (e.g. an oversized frame): fail everything pending
          for (const x of this.waiting.values()) x.resolve(msg);
          this.waiting.clear();
        }
      }
    });
    const gone = (why: string) => {
      for (const w of this.waiting.values()) w.reject(new Unreachable(why));
      this.waiting.clear();
    };
    sock.on('close', () => gone('the board closed the connection'));
    sock.on('error', (e) => gone(e.message));
  }

  /** `callTimeoutMs`: how long one call may go unanswered before it fails as Unreachable (a host that
   *  accepts but is stuck must not hang an agent's shell for ever). */
  static connect(path: string, secret: string, timeoutMs = 5000, callTimeoutMs = DEFAULT_CALL_TIMEOUT_MS): Promise<RpcClient> {
    return new Promise((resolve, reject) => {
      const sock = net.createConnection(path);
      const timer = setTimeout(() => {
        sock.destroy();
        reject(new Unreachable(`no answer from the board at ${path} within ${timeoutMs} ms`));
      }, timeoutMs);
      sock.once('connect', () => {
        clearTimeout(timer);
        resolve(new RpcClient(sock, secret, path, callTimeoutMs));
      });
      sock.once('error', (e: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(new Unreachable(`cannot reach the board at ${path}: ${e.code ?? e.message}`));
      });
    });
  }

  /** Resolves with the result, or rejects with an RpcFailure (the board answered no) or Unreachable. The
   *  result's type is the method's entry in the shared table: the host's handler is typed by the same. */
  async call<M extends AgentMethod>(method: M, params: Record<string, unknown> = {}): Promise<AgentResults[M]> {
    const id = this.nextId++;
    let timer: NodeJS.Timeout | undefined;
    const res = await new Promise<RpcResponse>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Unreachable(`the board at ${this.path} did not answer ${method} within ${this.callTimeoutMs} ms`));
      }, this.callTimeoutMs);
      this.sock.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params, auth: this.secret })}\n`);
    }).finally(() => clearTimeout(timer));
    if ('error' in res) throw new RpcFailure(res.error);
    return res.result as AgentResults[M];
  }

  close(): void {
    this.sock.end();
    // a host that never reads would keep the half-closed socket (and the process) alive
    this.sock.destroy();
  }
}

export class RpcFailure extends Error {
  constructor(readonly error: RpcError) {
    super(error.message);
    this.name = 'RpcFailure';
  }
}
