import type {
  WindowMethod,
  WindowParams,
  WindowPush,
  WindowResult,
  WsClientMessage,
  WsServerMessage,
} from '../../src-shared/protocol/windowApi.js';
import { readPaneFrame } from '../../src-shared/protocol/paneFrame.js';
import { HostCallError, type BrowserSessions, type ConnectionState, type ProbeResult, type Transport } from './types.js';
import { Emitter } from '../../src-shared/lifecycle/emitter.js';
import { DisposableStore } from '../../src-shared/lifecycle/disposableStore.js';
import { RequestTable } from '../../src-shared/protocol/requestTable.js';

/** Reconnect delays. Fast first retries cover a host restart; the cap keeps a dead host from being hammered. */
export const ReconnectConstants = {
  /** First retry: a restarting `serve` is usually back within a few hundred ms. */
  initialDelayMs: 250,
  /** Each failed attempt doubles the delay... */
  factor: 2,
  /** ...up to this, so a host that comes back is found within about a second (issue 20 asks for the page
   *  live again within 2 s); a refused connection to 127.0.0.1 a second costs the machine nothing. */
  maxDelayMs: 1_000,
  /** ± this fraction of random jitter, so several windows do not retry in lockstep. */
  jitter: 0.2,
} as const;

/**
 * How long after its connection went a board write whose answer was lost is still sent again (with its key,
 * so the host answers it with its first outcome if it had taken it). A restarted `serve` is back within a
 * couple of seconds and the page reconnects at least once a second (above); 15 s covers a slow start on a
 * loaded machine, while the person who made the action is still looking for its answer. Later, it fails
 * `disconnected` as any call does, and the board on screen (re-fetched on reconnect) shows whether it landed.
 */
export const LOST_ANSWER_RESEND_MS = 15_000;

export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(ReconnectConstants.maxDelayMs, ReconnectConstants.initialDelayMs * ReconnectConstants.factor ** attempt);
  const j = 1 + ReconnectConstants.jitter * (random() * 2 - 1);
  return Math.round(base * j);
}

/** The subset of the browser WebSocket this transport uses, so tests can hand it a fake. */
export interface SocketLike {
  readonly readyState: number;
  /** Binary messages (pane output) arrive as ArrayBuffers, read without a copy into a Blob first. */
  binaryType?: string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
}

export interface WsTransportOptions {
  url: string;
  /** The first connection waits until this settles (serve's code trade, which sets the socket's cookie);
   *  `false` means the trade was refused (a spent link). */
  ready?: Promise<unknown>;
  /** Asks the host why a socket did not open (the browser hides the refusal's status). Without it a socket
   *  that never opens leaves the state as it was. */
  probe?: () => Promise<ProbeResult>;
  /** The host's browser sessions, as this page can end them. */
  sessions?: BrowserSessions;
  createSocket?: (url: string) => SocketLike;
  setTimeout?: (f: () => void, ms: number) => unknown;
  clearTimeout?: (handle: unknown) => void;
  random?: () => number;
}

const OPEN = 1;

/**
 * The serve-mode transport: one WebSocket, requests answered by id, pushes as `{push}`. On close it
 * reconnects with backoff; listeners of `onState` see `connected` again and re-fetch what they show
 * (pushes sent while disconnected are gone). A call made while disconnected fails at once with
 * `disconnected` rather than being queued: replaying keystrokes or drags later would surprise a person. Only
 * a board write already sent, whose answer the closed connection lost, is sent again with its key (`call`).
 */
export class WsTransport implements Transport {
  readonly kind = 'websocket' as const;
  private socket: SocketLike | null = null;
  private _state: ConnectionState = 'connecting';
  /** Calls waiting for their answer. None is given up on by time: a call may run a merge, and every one
   *  fails as `disconnected` when the connection goes. */
  private readonly pending = new RequestTable<WindowMethod>({ timeoutMs: null });
  private readonly pushes = new Emitter<WindowPush>();
  /** Not `stream`: the host sends each message's text whole, never a character split across two. */
  private readonly utf8 = new TextDecoder();
  private readonly states = new Emitter<ConnectionState>();
  /** Fires once, as the window closes: a write waiting to be sent again gives up. */
  private readonly closing = new Emitter<void>();
  private attempt = 0;
  private retryTimer: unknown = null;
  private disposed = false;
  /** The link's code was refused by the host: a refused socket then says the link was spent, or never this host's. */
  private linkRefused: 'link-spent' | 'link-unknown' | null = null;
  /** Counts attempts, so a probe's late answer about an earlier attempt changes nothing. */
  private generation = 0;
  private readonly createSocket: (url: string) => SocketLike;
  private readonly setTimer: (f: () => void, ms: number) => unknown;
  private readonly clearTimer: (handle: unknown) => void;

  constructor(private readonly opts: WsTransportOptions) {
    this.createSocket = opts.createSocket ?? ((url) => new WebSocket(url) as unknown as SocketLike);
    this.setTimer = opts.setTimeout ?? ((f, ms) => setTimeout(f, ms));
    this.clearTimer = opts.clearTimeout ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>));
    // Connected once `ready` settles, either way: the host then says for itself whether the socket is let in.
    const connect = () => this.connect();
    if (opts.ready)
      void opts.ready.then((traded) => {
        this.linkRefused = traded === 'spent' ? 'link-spent' : traded === 'unknown' ? 'link-unknown' : null;
        connect();
      }, connect);
    else connect();
  }

  get state(): ConnectionState {
    return this._state;
  }

  get sessions(): BrowserSessions | undefined {
    return this.opts.sessions;
  }

  /**
   * A call carrying an idempotency key (a board write) whose connection went before its answer came is sent
   * again, the same request with the same key, once connected again within LOST_ANSWER_RESEND_MS of the loss:
   * the host may have taken it, and the key makes it land once either way. A call made while disconnected
   * still fails at once, keyed or not.
   */
  async call<M extends WindowMethod>(method: M, params: WindowParams<M>): Promise<WindowResult<M>> {
    if (!hasWriteKey(params) || !this.isOpen()) return this.send(method, params);
    let bound: ResendBound | null = null;
    try {
      for (;;) {
        try {
          return await this.send(method, params);
        } catch (err) {
          if (!(err instanceof HostCallError) || err.code !== 'disconnected' || this.disposed) throw err;
          // The bound runs from the first loss: a connection that drops again does not extend it.
          bound ??= new ResendBound(this.setTimer, this.clearTimer, LOST_ANSWER_RESEND_MS);
          if (!(await this.reconnected(bound))) throw err;
        }
      }
    } finally {
      bound?.dispose();
    }
  }

  /** True once connected again (a new socket open), false if the bound ends or the window closes first. */
  private reconnected(bound: ResendBound): Promise<boolean> {
    return new Promise((resolve) => {
      const subs = new DisposableStore();
      const settle = (v: boolean) => {
        subs.dispose();
        resolve(v);
      };
      if (this.disposed || bound.expired) return settle(false);
      subs.add(this.states.event((s) => s === 'connected' && settle(true)));
      subs.add(bound.onExpire.event(() => settle(false)));
      subs.add(this.closing.event(() => settle(false)));
    });
  }

  private isOpen(): boolean {
    return !this.disposed && this._state === 'connected' && this.socket?.readyState === OPEN;
  }

  private send<M extends WindowMethod>(method: M, params: WindowParams<M>): Promise<WindowResult<M>> {
    const socket = this.socket;
    if (!socket || !this.isOpen()) {
      return Promise.reject(new HostCallError('disconnected', `not connected to the Forkbench host (${method})`));
    }
    const send = (id: number) => {
      const msg: WsClientMessage = { id, method, params };
      try {
        socket.send(JSON.stringify(msg));
      } catch (err) {
        throw new HostCallError('disconnected', `could not send ${method}: ${(err as Error).message}`);
      }
    };
    // The host's answer, typed by the method's entry in the one window table (its handler is typed by it too).
    return this.pending.request(method, send, (value) => value as WindowResult<M>);
  }

  subscribe(listener: (push: WindowPush) => void): () => void {
    const sub = this.pushes.event((push) => {
      try {
        listener(push);
      } catch (err) {
        // One broken listener must not starve the others; surface it where a developer looks.
        console.error('push listener failed', err);
      }
    });
    return () => sub.dispose();
  }

  onState(listener: (state: ConnectionState) => void): () => void {
    const sub = this.states.event(listener);
    return () => sub.dispose();
  }

  dispose(): void {
    this.disposed = true;
    this.closing.fire();
    this.closing.dispose();
    if (this.retryTimer !== null) this.clearTimer(this.retryTimer);
    this.retryTimer = null;
    const s = this.socket;
    this.socket = null;
    if (s) {
      s.onclose = s.onmessage = s.onerror = s.onopen = null;
      s.close(1000, 'window closed');
    }
    this.failPending('the window is closing');
  }

  private connect(): void {
    if (this.disposed) return;
    this.retryTimer = null;
    let socket: SocketLike;
    try {
      socket = this.createSocket(this.opts.url);
    } catch {
      this.scheduleRetry();
      return;
    }
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    const generation = ++this.generation;
    let opened = false;
    socket.onopen = () => {
      if (this.socket !== socket) return;
      opened = true;
      this.attempt = 0;
      this.setState('connected');
    };
    socket.onmessage = (ev) => {
      if (this.socket === socket) this.receive(ev.data);
    };
    socket.onerror = () => {
      /* a close event always follows; reconnecting happens there */
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.failPending('the connection to the Forkbench host closed');
      // A connection that was up is gone: the page says so at once, whatever the cause, since nothing it
      // shows is live any more. One that never opened is asked about, to tell a refusal from a dead host.
      if (opened) this.setState('host-stopped');
      else this.askWhy(generation);
      this.scheduleRetry();
    };
  }

  private askWhy(generation: number): void {
    const probe = this.opts.probe;
    if (!probe) return;
    void probe().then(
      (r) => {
        // Superseded by a later attempt, or connected meanwhile: this answer is about nothing on screen.
        if (this.disposed || generation !== this.generation || this._state === 'connected') return;
        if (r === 'refused') this.setState(this.linkRefused ?? 'refused');
        else if (r !== 'admitted') this.setState('host-stopped');
      },
      () => undefined,
    );
  }

  private scheduleRetry(): void {
    if (this.disposed || this.retryTimer !== null) return;
    const delay = backoffDelay(this.attempt++, this.opts.random);
    this.retryTimer = this.setTimer(() => this.connect(), delay);
  }

  private receive(data: unknown): void {
    if (data instanceof ArrayBuffer) return this.receivePane(new Uint8Array(data));
    if (typeof data !== 'string') return;
    let msg: WsServerMessage;
    try {
      msg = JSON.parse(data) as WsServerMessage;
    } catch {
      return;
    }
    if ('push' in msg) {
      this.pushes.fire(msg.push);
      return;
    }
    const p = this.pending.take(msg.id);
    if (!p) return;
    if (msg.ok) p.resolve(msg.value);
    else p.reject(new HostCallError(msg.error?.code ?? 'error', msg.error?.message ?? 'the host refused the request'));
  }

  /** Pane output: its header read, its text decoded in one call, and pushed as the `pane-data` it stands for. */
  private receivePane(bytes: Uint8Array): void {
    const head = readPaneFrame(bytes);
    if ('error' in head) {
      console.error(`forkbench: dropped a message from the host: ${head.error}`);
      return;
    }
    this.pushes.fire({ type: 'pane-data', key: head.key, agentId: head.agentId, data: this.utf8.decode(bytes.subarray(head.textAt)) });
  }

  private failPending(why: string): void {
    this.pending.failAll(new HostCallError('disconnected', why));
  }

  private setState(state: ConnectionState): void {
    if (this._state === state) return;
    this._state = state;
    this.states.fire(state);
  }
}

/** Whether a call's params carry an idempotency key: only such a call is sent again after a lost answer. */
function hasWriteKey(params: unknown): boolean {
  return typeof params === 'object' && params !== null && typeof (params as { writeKey?: unknown }).writeKey === 'string';
}

/** The time a write whose answer was lost may still be sent again: it ends once, `ms` after it was made. */
class ResendBound {
  expired = false;
  readonly onExpire = new Emitter<void>();
  private timer: unknown;

  constructor(
    setTimer: (f: () => void, ms: number) => unknown,
    private readonly clearTimer: (handle: unknown) => void,
    ms: number,
  ) {
    this.timer = setTimer(() => {
      this.timer = null;
      this.expired = true;
      this.onExpire.fire();
    }, ms);
  }

  dispose(): void {
    if (this.timer !== null) this.clearTimer(this.timer);
    this.timer = null;
    this.onExpire.dispose();
  }
}
