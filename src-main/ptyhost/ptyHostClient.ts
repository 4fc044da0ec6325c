import * as net from 'node:net';
import { dirname } from 'node:path';
import { firstIssue } from '../../src-shared/board/schemas.js';
import type { TimerSource } from '../../src-shared/lifecycle/disposableStore.js';
import { RequestTable } from '../../src-shared/protocol/requestTable.js';
import { Emitter } from '../../src-shared/lifecycle/emitter.js';
import type { PaneIdentity, PaneSession, PtyFactory } from '../pty/paneSession.js';
import type { PtySpawnOptions } from '../pty/paneSession.js';
import { controlFrame, dataFrame, FrameDecoder } from './frames.js';
import { sweepPaneRecord } from './paneRecord.js';
import { hostMessage, idOf, ptyHostMethods, type HostMessage } from './ptyHostMethods.js';
import { paneRecordBeside, PTY_HOST_PROTOCOL, type PaneListing, type PtyHostMethod, type PtyHostMethods } from './protocol.js';
import { RemotePty, type RemoteLink } from './remotePty.js';
import { proofFor } from './adoptionKey.js';
import { checkSocket } from './socketChecks.js';

export const PtyHostClientConstants = {
  /** A pty host that does not answer hello within this is not one we can use. */
  helloTimeoutMs: 5000,
  /** Any other request: the slowest a working pty host is, is a kill (its SIGKILL step comes 2 s after the
   *  SIGHUP) or the screen of a flooded pane (its mirror drains first), both well inside 10 s on a loaded
   *  2-core machine. Past that it is stopped (SIGSTOP, a debugger) or wedged, and the caller is told so
   *  rather than waiting for ever. */
  requestTimeoutMs: 10_000,
  /** Problems reported per connection (bad messages, late answers): enough to diagnose, not a flood. */
  reportedProblems: 20,
} as const;

export interface PtyHostClientOptions {
  requestTimeoutMs?: number;
  timers?: TimerSource;
  /** The adoption key this board host started the pty host with (adoptionKey.ts), if it did. */
  key?: Buffer;
}

/** The pty host refused a request, with its code (`invalid-input`, `no-such-pane`, `busy`...). */
export class PtyHostRequestError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The pty host did not answer in time; its connection (and every agent) is kept. */
export class PtyHostTimeoutError extends Error {
  readonly code = 'pty-host-timeout';
  constructor(method: string, ms: number, hostPid: number) {
    super(`the pty host (pid ${hostPid}) did not answer ${method} within ${ms / 1000} s; it may be stopped or overloaded, and its agents are left as they are`);
  }
}

/** A frame from the pty host waiting to be handled: a control message (not yet checked), or a pane's output. */
type Inbound = { m: unknown } | { pane: number; data: string };

/** A pty host of another Forkbench (or protocol) holds this data folder's agents. */
export class PtyHostVersionError extends Error {
  constructor(
    readonly theirs: { version: string; protocol: number; pid: number },
    ours: string,
  ) {
    super(
      `a pty host of Forkbench ${theirs.version} (protocol ${theirs.protocol}, pid ${theirs.pid}) holds this data folder's agents, ` +
        `and this is Forkbench ${ours} (protocol ${PTY_HOST_PROTOCOL}); refusing to use it. To stop it and its agents and start this ` +
        `version's: \`forkbench serve --replace-pty-host\`, or "Stop it and its agents" in the app`,
    );
  }
}

/**
 * The board host's connection to its pty host: requests with answers, pty data both ways as binary frames,
 * and the panes as RemotePty. The pty host's death (the socket closes without our asking) ends every pane
 * at once, reported as lost.
 */
export class PtyHostClient implements RemoteLink, PtyFactory {
  private readonly remotes = new Map<number, RemotePty>();
  /** Requests waiting, by id; those given up on (timed out) are kept so a late answer is recognised: a late
   *  spawn's pane is ended. */
  private readonly requests: RequestTable<PtyHostMethod>;
  private problems = 0;
  /** The pty host's record of its panes' processes (set by connect), swept if it is lost. */
  private recordPath: string | null = null;
  private closedFlag = false;
  private leaving = false;
  /** Fired once when the connection ends; `lost` when we did not end it. */
  readonly onClose = new Emitter<{ lost: boolean }>();
  /** What went wrong without ending the connection (a message that is not ours, an answer too late), for
   *  the board host's log. */
  readonly onProblem = new Emitter<string>();
  hostPid = 0;

  /** Frames read and not yet handled, in order (see drain). */
  private readonly inbox: Inbound[] = [];
  private drainLater: ReturnType<typeof setImmediate> | null = null;

  private constructor(
    private readonly sock: net.Socket,
    o: PtyHostClientOptions = {},
  ) {
    this.requests = new RequestTable<PtyHostMethod>({
      timers: o.timers,
      timeoutMs: o.requestTimeoutMs ?? PtyHostClientConstants.requestTimeoutMs,
      timedOut: (m, ms) => new PtyHostTimeoutError(m, ms, this.hostPid),
      keepAbandoned: true,
    });
    const decoder = new FrameDecoder({
      control: (m) => this.inbox.push({ m }),
      data: (pane, data) => this.inbox.push({ pane, data }),
      malformed: (why) => this.problem(`skipped a frame from the pty host: ${why}`),
    });
    sock.on('data', (chunk) => {
      try {
        decoder.push(chunk);
      } catch {
        sock.destroy();
      }
      this.drain();
    });
    sock.on('error', () => undefined);
    sock.on('close', () => this.closed());
  }

  /**
   * Handles the frames read so far, in order; after an answer, the frames behind it wait for a later turn
   * of the event loop. An answer's awaiting code (promise callbacks) runs only once the current read is
   * handled, and one read often holds an answer and the pane output the pty host sent after it: delivered
   * at once, that output would overtake the answer. The window's screen restore relies on the order: a
   * screen (`screen`, answered before the output that follows it) reaches the window before that output,
   * or the window drops the output as already in the screen (src-renderer/terminal/paneFeed.ts).
   */
  private drain(): void {
    if (this.drainLater) return;
    for (let next = this.inbox.shift(); next; next = this.inbox.shift()) {
      this.handle(next);
      if ('m' in next && (next.m as { t?: unknown } | null)?.t === 'res' && this.inbox.length > 0) {
        this.drainLater = setImmediate(() => {
          this.drainLater = null;
          this.drain();
        });
        return;
      }
    }
  }

  /** Connect to the pty host at `socketPath` after checking the socket is ours and private, and greet it;
   *  a pty host of another version is refused (PtyHostVersionError) and left running. */
  static async connect(socketPath: string, version: string, o: PtyHostClientOptions = {}): Promise<PtyHostClient> {
    checkSocket(dirname(socketPath), socketPath);
    const sock = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.createConnection(socketPath);
      s.once('connect', () => resolve(s));
      s.once('error', reject);
    });
    const client = new PtyHostClient(sock, o);
    client.recordPath = paneRecordBeside(socketPath);
    const hello = await client.request('hello', { version, protocol: PTY_HOST_PROTOCOL }, PtyHostClientConstants.helloTimeoutMs).catch((err: Error) => {
      client.leave();
      // Not yet greeted, it has no pid to name: said by its socket instead.
      throw err instanceof PtyHostTimeoutError ? new Error(`the pty host at ${socketPath} did not answer`) : err;
    });
    if (hello.version !== version || hello.protocol !== PTY_HOST_PROTOCOL) {
      client.leave();
      throw new PtyHostVersionError(hello, version);
    }
    client.hostPid = hello.pid;
    if (!hello.adopted) {
      // The pty host could not tell who we are from the kernel: only the key it was started with settles it.
      if (!o.key || !hello.challenge) {
        client.leave();
        throw new PtyHostRequestError('refused', `the pty host (pid ${hello.pid}) cannot tell this process from one of its agents, and this board host did not start it (it holds no key for it)`);
      }
      await client.request('prove', { proof: proofFor(o.key, hello.challenge) }).catch((err: Error) => {
        client.leave();
        throw err;
      });
    }
    return client;
  }

  get isClosed(): boolean {
    return this.closedFlag;
  }

  /** A request and its answer, checked against the method's answer schema; refused (PtyHostRequestError),
   *  or given up after the bound (PtyHostTimeoutError) with the connection kept. */
  request<M extends PtyHostMethod>(m: M, p: PtyHostMethods[M]['params'], timeoutMs?: number): Promise<PtyHostMethods[M]['result']> {
    return this.requestThen(m, p, (v) => v, timeoutMs);
  }

  /**
   * A request whose answer is turned into `then`'s value as the answer frame is read, before the frames after
   * it: a pane's first output can come in the same read as the answer that names it, and must find its
   * RemotePty already there (an `await` would see it only after that output was handed out and lost).
   */
  private requestThen<M extends PtyHostMethod, T>(
    m: M,
    p: PtyHostMethods[M]['params'],
    then: (v: PtyHostMethods[M]['result']) => T,
    timeoutMs?: number,
  ): Promise<T> {
    if (this.closedFlag) return Promise.reject(new Error('the pty host is gone'));
    // The answer was checked against this method's output schema before it is settled (onMessage).
    return this.requests.request(m, (id) => this.sock.write(controlFrame({ t: 'req', id, m, p })), (v) => then(v as PtyHostMethods[M]['result']), timeoutMs);
  }

  sendData(pane: number, data: string): void {
    if (!this.closedFlag) this.sock.write(dataFrame(pane, data));
  }

  sendAck(pane: number, consumer: string, chars: number): void {
    if (!this.closedFlag) this.sock.write(controlFrame({ t: 'ack', pane, consumer, chars }));
  }

  spawn(command: string, args: readonly string[], o: PtySpawnOptions, who: PaneIdentity): Promise<PaneSession> {
    const params = { command, args: [...args], cwd: o.cwd, env: o.env, cols: o.cols, rows: o.rows, meta: { ...who, cwd: o.cwd }, contained: o.contained };
    return this.requestThen('spawn', params, ({ pane, pid }) => {
      const r = new RemotePty(this, pane, pid, { holdEarly: true });
      this.remotes.set(pane, r);
      return r;
    });
  }

  /** The pty host's panes, each as a RemotePty that already hears its pane's events. */
  list(): Promise<Array<{ listing: PaneListing; pty: RemotePty }>> {
    return this.requestThen('list', {}, (all) =>
      all.map((listing) => {
        let pty = this.remotes.get(listing.pane);
        if (!pty) {
          pty = new RemotePty(this, listing.pane, listing.pid, listing);
          this.remotes.set(listing.pane, pty);
        }
        return { listing, pty };
      }),
    );
  }

  /** Ask the pty host to end every pane and exit (the board host stops with its agents). */
  async shutdown(): Promise<void> {
    await this.request('shutdown', {}).catch(() => undefined);
    this.leave();
  }

  /** Disconnect and leave the panes running (the board host goes; the agents stay). */
  leave(): void {
    this.leaving = true;
    for (const r of this.remotes.values()) r.release();
    this.sock.destroy();
  }

  /** One frame's handling: a fault in it (a listener's bug) is reported, and the link, which every agent
   *  depends on, goes on. */
  private handle(next: Inbound): void {
    try {
      if ('m' in next) this.onMessage(next.m);
      else this.remotes.get(next.pane)?.deliver(next.data);
    } catch (err) {
      this.problem(`a pty host message could not be handled: ${(err as Error).stack ?? (err as Error).message}`);
    }
  }

  private problem(what: string): void {
    if (this.problems++ < PtyHostClientConstants.reportedProblems) this.onProblem.fire(`forkbench: pty host link: ${what}`);
  }

  private onMessage(raw: unknown): void {
    const parsed = hostMessage.safeParse(raw);
    if (!parsed.success) {
      const why = firstIssue(parsed.error);
      // A request waiting on it fails now, saying why, rather than at its timeout.
      const id = idOf(raw);
      const w = id === null ? undefined : this.requests.take(id);
      w?.reject(new Error(`the pty host's answer to ${w.tag} is not an answer (${why})`));
      return this.problem(`ignored a message that is not one of ours (${why}): ${JSON.stringify(raw).slice(0, 200)}`);
    }
    const m: HostMessage = parsed.data;
    switch (m.t) {
      case 'res': {
        const w = this.requests.take(m.id);
        if (!w) return this.late(m.id, m.ok ? m.v : undefined);
        if (!m.ok) return w.reject(new PtyHostRequestError(m.code ?? 'failed', m.error));
        const v = ptyHostMethods[w.tag].output.safeParse(m.v);
        if (v.success) return w.resolve(v.data);
        const why = `the pty host answered ${w.tag} with something else (${firstIssue(v.error)})`;
        this.problem(why);
        return w.reject(new Error(why));
      }
      case 'death':
        return this.remotes.get(m.pane)?.died();
      case 'exit':
        return this.remotes.get(m.pane)?.exitedWith(m.exit);
      case 'paste-mode':
        return this.remotes.get(m.pane)?.setPasteMode(m.on);
      case 'signal':
        return this.remotes.get(m.pane)?.signalled(m.sig);
    }
  }

  /** An answer to a request given up on. A spawn's caller was told the launch failed (its agent shows as
   *  exited): the pane made meanwhile is nobody's agent, so it is ended rather than left running unseen. */
  private late(id: number, v: unknown): void {
    const m = this.requests.late(id);
    if (m === undefined) return this.problem(`an answer to request ${id}, which was never asked`);
    const made = m === 'spawn' ? ptyHostMethods.spawn.output.safeParse(v) : null;
    if (!made?.success) return;
    this.problem(`the pty host started pane ${made.data.pane} (pid ${made.data.pid}) after its spawn was given up; ending it`);
    this.request('dispose', { pane: made.data.pane }).catch(() => undefined);
  }

  private closed(): void {
    if (this.closedFlag) return;
    // What the pty host said before it went (a pane's exit, say) is heard before its going.
    if (this.drainLater) clearImmediate(this.drainLater);
    this.drainLater = null;
    for (let next = this.inbox.shift(); next; next = this.inbox.shift()) this.handle(next);
    this.closedFlag = true;
    this.requests.failAll(new Error('the pty host is gone'));
    const lost = !this.leaving;
    // Every pane ends now, in one go: the board releases their claims as the pty host's agents' exits.
    const ended = new Set(lost ? [...this.remotes.values()].filter((r) => r.lostWithHost()).map((r) => r.pid) : []);
    // And those it never told us of (it died before answering our list): ended as well, not left unseen.
    const known = new Set([...this.remotes.values()].map((r) => r.pid));
    const unseen = lost && this.recordPath ? sweepPaneRecord(this.recordPath, ended).filter((pid) => !known.has(pid)) : [];
    if (unseen.length) this.problem(`ended ${unseen.length} agent process(es) of the lost pty host it had not listed yet: pids ${unseen.join(', ')}`);
    this.onClose.fire({ lost });
    this.onClose.dispose();
    this.onProblem.dispose();
  }
}
