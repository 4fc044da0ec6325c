import * as net from 'node:net';
import type { AgentMethod } from '../../src-shared/protocol/agentMethods.js';
import type { AgentOutput } from '../../src-shared/protocol/agentSchemas.js';
import { LineSplitter, type RpcError, type RpcResponse } from '../../src-shared/protocol/jsonrpc.js';
import { RequestTable } from '../../src-shared/protocol/requestTable.js';

/** Longer than any board call takes (the slowest, a claim that adds a git worktree, takes seconds; `done`
 *  answers before its verify command runs), short enough that a stuck host does not hang an agent's turn. */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

/**
 * How long a call waits for a board host that is down (its socket refuses, or is gone) before it gives up.
 * A board host restarting (an app update, `serve` restarted after a crash) is listening again within a few
 * seconds, while its agents keep running in the pty host; 10 s covers that with room, and is short enough
 * that an agent whose board is gone for good hears so within one turn.
 */
export const DEFAULT_BOARD_WAIT_MS = 10_000;
/** Between tries: a restarted host is seen within a fifth of a second, at 50 connects in the whole wait. */
const RETRY_MS = 200;

/** What a refused or missing socket says: nobody listens there now (a host down, or not yet up). */
const DOWN_CODES = new Set(['ECONNREFUSED', 'ENOENT']);

export class Unreachable extends Error {
  constructor(
    message: string,
    /** The socket's error code when the connect itself failed (ECONNREFUSED, ENOENT…). */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'Unreachable';
  }
}

export interface ReachOptions {
  connectTimeoutMs?: number;
  callTimeoutMs?: number;
  /** How long to keep trying while nobody listens on the socket. */
  downWaitMs?: number;
  /** Said once, when the first try finds the board down, so a person sees why the command waits. */
  onWaiting?: (message: string) => void;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * A small JSON-RPC client for the agents' socket. One connection, requests answered in order. Kept to
 * node:net and the shared framing so the CLI starts about as fast as a bare `node`.
 */
export class RpcClient {
  /** No frame limit on this side: the answers come from the host, and a board of thousands of tasks can be
   *  larger than a request may be. The splitter still scans each chunk once, however big the answer. */
  private readonly lines = new LineSplitter(Number.POSITIVE_INFINITY);
  private readonly requests: RequestTable<AgentMethod>;

  private constructor(
    private readonly sock: net.Socket,
    private readonly secret: string,
    path: string,
    callTimeoutMs: number,
  ) {
    this.requests = new RequestTable<AgentMethod>({
      timeoutMs: callTimeoutMs,
      timedOut: (method, ms) => new Unreachable(`the board at ${path} did not answer ${method} within ${ms} ms`),
    });
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      for (const line of this.lines.push(d)) {
        let msg: RpcResponse;
        try {
          msg = JSON.parse(line) as RpcResponse;
        } catch {
          continue;
        }
        const w = typeof msg.id === 'number' ? this.requests.take(msg.id) : undefined;
        if (w) {
          if ('error' in msg) w.reject(new RpcFailure(msg.error));
          else w.resolve(msg.result);
        } else if ('error' in msg) {
          // an error the host could not tie to a request (e.g. an oversized frame): fail everything pending
          this.requests.failAll(new RpcFailure(msg.error));
        }
      }
    });
    const gone = (why: string) => this.requests.failAll(new Unreachable(why));
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
        reject(new Unreachable(`cannot reach the board at ${path}: ${e.code ?? e.message}`, e.code));
      });
    });
  }

  /**
   * Connect, waiting out a board host that is down (restarting) for up to `downWaitMs`: only a socket that
   * refuses or is missing is retried. A host that accepts and then does not answer is not down but stuck,
   * and fails at once as it does for `connect`. Only connecting is retried here; a write whose answer was
   * lost is sent again by its caller, with its idempotency key (callWrite), never without one.
   */
  static async reach(path: string, secret: string, o: ReachOptions = {}): Promise<RpcClient> {
    const waitMs = o.downWaitMs ?? DEFAULT_BOARD_WAIT_MS;
    const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    const started = performance.now();
    for (let said = false; ; ) {
      try {
        return await RpcClient.connect(path, secret, o.connectTimeoutMs, o.callTimeoutMs);
      } catch (err) {
        const waited = performance.now() - started;
        if (!(err instanceof Unreachable) || !DOWN_CODES.has(err.code ?? '') || waited + RETRY_MS > waitMs) {
          if (waited > 0 && said && err instanceof Unreachable) throw new Unreachable(`${err.message} (waited ${(waited / 1000).toFixed(1)} s for it to come back)`, err.code);
          throw err;
        }
        if (!said) o.onWaiting?.(`the board at ${path} is not answering (${err.code}); waiting up to ${(waitMs / 1000).toFixed(0)} s for it to come back…`);
        said = true;
        await sleep(RETRY_MS);
      }
    }
  }

  /** Resolves with the result, or rejects with an RpcFailure (the board answered no) or Unreachable. The
   *  result's type is the method's entry in the shared table: the host's handler is typed by the same. */
  call<M extends AgentMethod>(method: M, params: Record<string, unknown> = {}, timeoutMs?: number): Promise<AgentOutput<M>> {
    return this.requests.request(
      method,
      (id) => this.sock.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params, auth: this.secret })}\n`),
      // The host's answer, typed by the method's entry in the shared table (its handler is typed by the same).
      (result) => result as AgentOutput<M>,
      timeoutMs,
    );
  }

  close(): void {
    this.sock.end();
    // a host that never reads would keep the half-closed socket (and the process) alive
    this.sock.destroy();
  }
}

/**
 * Tries of one write, and each one's share of the call timeout: a third, so an answer lost to a stuck or
 * restarted host leaves time for two more tries within the caller's timeout. Three at most, also when answers
 * are lost at once (a connection reset each time): a lost answer is rare, and a host that loses every one
 * is not helped by more. Never under MIN_TRY_MS, which is more than the board takes for any write but a claim
 * that makes a worktree.
 */
export const WRITE_TRIES = 3;
const MIN_TRY_MS = 1000;

export interface WriteRetry {
  /** The caller's whole timeout for the write, tries and waits for a restarting host included. */
  timeoutMs: number;
  reach: Omit<ReachOptions, 'callTimeoutMs' | 'downWaitMs'> & { downWaitMs: number };
  /** Said on each retry, so a person (or an agent reading stderr) knows the write was sent again. */
  onRetry(message: string): void;
}

/**
 * Send a keyed write, and send it again with the same key while its answer is lost (the connection closed
 * or was reset after it was sent, or no answer came within the try's share of the timeout) and the timeout
 * allows: the board answers a retry with the first try's outcome, so a write that did land lands once. The
 * first try may go on `client` (already connected); a retry connects again. A refusal is an answer: never
 * retried.
 */
export async function callWrite<M extends AgentMethod>(client: RpcClient, path: string, secret: string, method: M, params: Record<string, unknown> & { key: string }, o: WriteRetry): Promise<AgentOutput<M>> {
  const started = performance.now();
  const left = () => o.timeoutMs - (performance.now() - started);
  const tryMs = () => Math.max(1, Math.min(left(), Math.max(MIN_TRY_MS, Math.ceil(o.timeoutMs / WRITE_TRIES))));
  // Once an answer is lost the write may have landed: whoever gives up then says how to learn its outcome.
  const maybeLanded = (err: Unreachable) => new Unreachable(`${err.message}; the ${method} may have landed: send it again with --key ${params.key} to be told its outcome`, err.code);
  let c: RpcClient = client;
  let waits = 0;
  for (let attempt = 1; ; attempt++) {
    let keep = false;
    try {
      return await c.call(method, params, tryMs());
    } catch (err) {
      if (err instanceof RpcFailure && isUnavailable(err)) {
        // The host answered: its shared board's database did not, and nothing was done. The same request
        // with its key goes again on this connection once the database may be back, within the timeout.
        const wait = Math.min(UNAVAILABLE_WAIT_MAX_MS, UNAVAILABLE_WAIT_MS * 2 ** waits++);
        if (left() <= wait) throw err;
        o.onRetry(`the board is unavailable (${err.message}); sending the ${method} again with its key ${params.key} in ${(wait / 1000).toFixed(1)} s`);
        keep = true;
        attempt--;
        await new Promise((r) => setTimeout(r, wait));
        continue;
      }
      if (!(err instanceof Unreachable)) throw err;
      if (left() <= 0 || attempt >= WRITE_TRIES) throw maybeLanded(err);
      o.onRetry(`the answer to ${method} was lost (${err.message}); sending it again with its key ${params.key} (try ${attempt + 1}), so it lands once`);
    } finally {
      // The caller closes the client it gave; a retry's own connection is closed here, whatever happened.
      if (c !== client && !keep) c.close();
    }
    try {
      // A host that went away is waited for as at the start (a restart), within what is left of the timeout;
      // one that stays down ends the retries: reach has waited already.
      c = await RpcClient.reach(path, secret, { ...o.reach, downWaitMs: Math.min(o.reach.downWaitMs, Math.max(0, left())), callTimeoutMs: tryMs() });
    } catch (err) {
      throw err instanceof Unreachable ? maybeLanded(err) : err;
    }
  }
}

/**
 * Waits before sending a write again while the shared board's database is unavailable: from half a second,
 * doubling to 4 s, so a database that restarts (about a second) is caught at once and one that stays down is
 * not hammered by every agent at once.
 */
const UNAVAILABLE_WAIT_MS = 500;
const UNAVAILABLE_WAIT_MAX_MS = 4_000;

const isUnavailable = (err: RpcFailure): boolean => (err.error.data as { reason?: string } | undefined)?.reason === 'board-unavailable';

export class RpcFailure extends Error {
  constructor(readonly error: RpcError) {
    super(error.message);
    this.name = 'RpcFailure';
  }
}
