import * as net from 'node:net';
import { dirname } from 'node:path';
import { Emitter } from '../../src-shared/lifecycle/emitter.js';
import type { PaneIdentity, PaneSession, PtyFactory } from '../pty/paneSession.js';
import type { PtySpawnOptions } from '../pty/ptySessionTypes.js';
import { controlFrame, dataFrame, FrameDecoder } from './frames.js';
import { PTY_HOST_PROTOCOL, type HostMessage, type PaneListing, type PtyHostMethod, type PtyHostMethods } from './protocol.js';
import { RemotePty, type RemoteLink } from './remotePty.js';
import { checkSocket } from './socketChecks.js';

export const PtyHostClientConstants = {
  /** A pty host that does not answer hello within this is not one we can use. */
  helloTimeoutMs: 5000,
} as const;

/** A frame from the pty host waiting to be handled: a control message, or a pane's output. */
type Inbound = { m: HostMessage } | { pane: number; data: string };

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
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private closedFlag = false;
  private leaving = false;
  /** Fired once when the connection ends; `lost` when we did not end it. */
  readonly onClose = new Emitter<{ lost: boolean }>();
  hostPid = 0;

  /** Frames read and not yet handled, in order (see drain). */
  private readonly inbox: Inbound[] = [];
  private drainLater: ReturnType<typeof setImmediate> | null = null;

  private constructor(private readonly sock: net.Socket) {
    const decoder = new FrameDecoder({
      control: (m) => this.inbox.push({ m: m as HostMessage }),
      data: (pane, data) => this.inbox.push({ pane, data }),
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
      if ('m' in next && next.m.t === 'res' && this.inbox.length > 0) {
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
  static async connect(socketPath: string, version: string): Promise<PtyHostClient> {
    checkSocket(dirname(socketPath), socketPath);
    const sock = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.createConnection(socketPath);
      s.once('connect', () => resolve(s));
      s.once('error', reject);
    });
    const client = new PtyHostClient(sock);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const hello = await Promise.race([
      client.request('hello', { version, protocol: PTY_HOST_PROTOCOL }),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the pty host at ${socketPath} did not answer`)), PtyHostClientConstants.helloTimeoutMs))),
    ]).finally(() => clearTimeout(timer)).catch((err: Error) => {
      client.leave();
      throw err;
    });
    if (hello.version !== version || hello.protocol !== PTY_HOST_PROTOCOL) {
      client.leave();
      throw new PtyHostVersionError(hello, version);
    }
    client.hostPid = hello.pid;
    return client;
  }

  get isClosed(): boolean {
    return this.closedFlag;
  }

  request<M extends PtyHostMethod>(m: M, p: PtyHostMethods[M]['params']): Promise<PtyHostMethods[M]['result']> {
    return this.requestThen(m, p, (v) => v);
  }

  /**
   * A request whose answer is turned into `then`'s value as the answer frame is read, before the frames after
   * it: a pane's first output can come in the same read as the answer that names it, and must find its
   * RemotePty already there (an `await` would see it only after that output was handed out and lost).
   */
  private requestThen<M extends PtyHostMethod, T>(m: M, p: PtyHostMethods[M]['params'], then: (v: PtyHostMethods[M]['result']) => T): Promise<T> {
    if (this.closedFlag) return Promise.reject(new Error('the pty host is gone'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve: (v) => resolve(then(v as PtyHostMethods[M]['result'])), reject });
      this.sock.write(controlFrame({ t: 'req', id, m, p }));
    });
  }

  sendData(pane: number, data: string): void {
    if (!this.closedFlag) this.sock.write(dataFrame(pane, data));
  }

  sendAck(pane: number, consumer: string, chars: number): void {
    if (!this.closedFlag) this.sock.write(controlFrame({ t: 'ack', pane, consumer, chars }));
  }

  spawn(command: string, args: readonly string[], o: PtySpawnOptions, who: PaneIdentity): Promise<PaneSession> {
    const params = { command, args: [...args], cwd: o.cwd, env: o.env, cols: o.cols, rows: o.rows, meta: { ...who, cwd: o.cwd } };
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

  private handle(next: Inbound): void {
    if ('m' in next) this.onMessage(next.m);
    else this.remotes.get(next.pane)?.deliver(next.data);
  }

  private onMessage(m: HostMessage): void {
    switch (m.t) {
      case 'res': {
        const w = this.waiting.get(m.id);
        this.waiting.delete(m.id);
        if (m.ok) w?.resolve(m.v);
        else w?.reject(new Error(m.error));
        return;
      }
      case 'death':
        return this.remotes.get(m.pane)?.died();
      case 'exit':
        return this.remotes.get(m.pane)?.exitedWith(m.exit);
      case 'paste-mode':
        return this.remotes.get(m.pane)?.setPasteMode(m.on);
    }
  }

  private closed(): void {
    if (this.closedFlag) return;
    // What the pty host said before it went (a pane's exit, say) is heard before its going.
    if (this.drainLater) clearImmediate(this.drainLater);
    this.drainLater = null;
    for (let next = this.inbox.shift(); next; next = this.inbox.shift()) this.handle(next);
    this.closedFlag = true;
    for (const w of this.waiting.values()) w.reject(new Error('the pty host is gone'));
    this.waiting.clear();
    const lost = !this.leaving;
    // Every pane ends now, in one go: the board releases their claims as the pty host's agents' exits.
    if (lost) for (const r of this.remotes.values()) r.lostWithHost();
    this.onClose.fire({ lost });
    this.onClose.dispose();
  }
}
