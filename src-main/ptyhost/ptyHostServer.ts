import * as fs from 'node:fs';
import * as net from 'node:net';
import { dirname } from 'node:path';

import { firstIssue } from '../../src-shared/board/schemas.js';
import { callProcedure, type Handlers } from '../base/procedureServer.js';
import { controlFrame, FrameDecoder } from './frames.js';
import { lingeringKills } from '../pty/processGroupKiller.js';
import { HostedPanes } from './hostedPanes.js';
import { sweepPaneRecord } from './paneRecord.js';
import { clientMessage, idOf, ptyHostMethods, type HelloAnswer } from './ptyHostMethods.js';
import { paneRecordBeside, PTY_HOST_PROTOCOL } from './protocol.js';
import { ensurePrivateDir, socketLive } from './socketChecks.js';

export interface PtyHostServerOptions {
  socketPath: string;
  version: string;
  /** With no board host connected for this long, end every agent cleanly and stop. */
  idleMs: number;
  /** The server has nothing left to do (idle, shut down, or empty when its board host left). */
  onStop: (why: string) => void;
  log?: (line: string) => void;
}

export const PtyHostServerConstants = {
  /** With no pane to keep, waiting the full idle time for a board host only leaves a process behind: one
   *  that started us and died before using us, or one of another version that refused us. */
  emptyGraceMs: 10_000,
  /** Bad messages logged per connection: enough to see what a broken board host sends, not a log it can
   *  fill. */
  loggedBadPerConnection: 20,
} as const;

/**
 * The pty host's side: owns the agents' panes (hostedPanes.ts) and serves one board host at a time. A board
 * host that goes away (crash, kill -9, `serve --keep-agents`) leaves the panes running, paced by their
 * mirrors alone; the next one connects, lists them and takes them back. The first board host to greet is
 * the one while its connection lives: a second greeting is refused (`busy`), never allowed to take over,
 * so nothing but the board host in charge can type into a pane or end one.
 */
export class PtyHostServer {
  private readonly panes: HostedPanes;
  private client: net.Socket | null = null;
  /** Connections that asked for more than hello: board hosts that used us. */
  private readonly used = new WeakSet<net.Socket>();
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private stopping = false;
  private readonly handlers: Handlers<typeof ptyHostMethods, void>;

  private constructor(
    private readonly server: net.Server,
    private readonly o: PtyHostServerOptions,
  ) {
    this.panes = new HostedPanes({ send: (frame) => this.send(frame), recordPath: paneRecordBeside(o.socketPath), log: o.log });
    this.handlers = {
      ...this.panes.handlers,
      hello: () => this.hello(),
      shutdown: () => {
        setImmediate(() => void this.stop('the board host stopped its agents'));
        return null;
      },
    };
    server.on('connection', (sock) => this.accept(sock));
    this.armIdle();
  }

  /** Listen on the socket: owner-only folder, socket 0600. A live pty host already there wins (throws). */
  static async listen(o: PtyHostServerOptions): Promise<PtyHostServer> {
    ensurePrivateDir(dirname(o.socketPath));
    if (fs.existsSync(o.socketPath)) {
      if (await socketLive(o.socketPath)) throw new Error(`another pty host already listens on ${o.socketPath}`);
      fs.rmSync(o.socketPath, { force: true });
    }
    // No pty host listens: one that did is dead, and any of its panes' processes that outlived it (one
    // ignoring SIGHUP) nobody would ever see again.
    const swept = sweepPaneRecord(paneRecordBeside(o.socketPath));
    if (swept.length) o.log?.(`ended ${swept.length} process(es) of the panes of a pty host that died: pids ${swept.join(', ')}`);
    // Bound under a private name, narrowed to 0600, then renamed into place: a board host polling for the
    // socket never sees it with the umask's mode (which it would rightly refuse).
    const bound = `${o.socketPath}.${process.pid}.new`;
    fs.rmSync(bound, { force: true });
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(bound, () => resolve());
    });
    fs.chmodSync(bound, 0o600);
    fs.renameSync(bound, o.socketPath);
    return new PtyHostServer(server, o);
  }

  get paneCount(): number {
    return this.panes.size;
  }

  private accept(sock: net.Socket): void {
    let greeted = false;
    let logged = 0;
    /** What a board host sent that is not ours: logged (a few), answered when it has an id, never acted on. */
    const complain = (why: string, raw?: unknown) => {
      const id = idOf(raw);
      if (id !== null) this.answerTo(sock, { t: 'res', id, ok: false, code: 'invalid-message', error: `not a request of the pty host's: ${why}` });
      if (logged++ < PtyHostServerConstants.loggedBadPerConnection) this.o.log?.(`ignored from the board host: ${why}`);
    };
    const decoder = new FrameDecoder({
      control: (raw) => {
        if (!greeted) {
          if (!this.greet(sock, raw)) return;
          greeted = true;
        }
        if (sock !== this.client) return;
        const msg = clientMessage.safeParse(raw);
        if (!msg.success) return complain(firstIssue(msg.error), raw);
        if (msg.data.t === 'ack') return this.panes.ack(msg.data.pane, msg.data.consumer, msg.data.chars);
        this.request(sock, msg.data.id, msg.data.m, msg.data.p);
      },
      data: (pane, data) => {
        if (sock === this.client) this.panes.write(pane, data);
      },
      malformed: (why) => {
        // Before its hello a connection is nobody's: it goes. The board host's is kept, the frame skipped.
        if (sock === this.client) complain(why);
        else sock.destroy();
      },
    });
    sock.on('data', (chunk) => {
      try {
        decoder.push(chunk);
      } catch (err) {
        this.o.log?.(`dropping a connection: ${(err as Error).message}`);
        sock.destroy();
      }
    });
    sock.on('error', () => undefined);
    sock.on('close', () => this.dropped(sock));
  }

  /**
   * A connection's first frame: it must be a hello of ours. One of another version only hears who we are
   * (it refuses us); one that comes while a board host is served is refused as busy. Either way it is ended
   * and never takes over the connection of the board host we serve. Whether to go on with the connection.
   */
  private greet(sock: net.Socket, raw: unknown): boolean {
    const msg = clientMessage.safeParse(raw);
    const hi = msg.success && msg.data.t === 'req' && msg.data.m === 'hello' ? ptyHostMethods.hello.input.safeParse(msg.data.p) : null;
    if (!msg.success || msg.data.t !== 'req' || !hi?.success) {
      sock.destroy();
      return false;
    }
    const id = msg.data.id;
    if (hi.data.version !== this.o.version || hi.data.protocol !== PTY_HOST_PROTOCOL) {
      sock.end(controlFrame({ t: 'res', id, ok: true, v: this.hello() }));
      return false;
    }
    const current = this.client;
    // A connection whose end we have read is a board host that left: its close may not have come yet.
    if (current && current !== sock && !current.destroyed && !current.readableEnded) {
      this.o.log?.('refused a second board host: one is connected');
      const error = `the pty host (pid ${process.pid}) already serves a board host of this data folder, and serves one at a time`;
      sock.end(controlFrame({ t: 'res', id, ok: false, code: 'busy', error }));
      return false;
    }
    this.adopt(sock);
    return true;
  }

  /** The board host that greeted us while none was (or the one before has ended its connection): from now
   *  on its requests and input are served. */
  private adopt(sock: net.Socket): void {
    if (this.client && this.client !== sock) {
      this.panes.detachConsumers();
      this.client.destroy();
    }
    this.client = sock;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  private dropped(sock: net.Socket): void {
    if (sock !== this.client) return;
    this.client = null;
    this.panes.detachConsumers();
    if (this.stopping) return;
    // Nothing to keep: no agent left and its board host gone. (A board host that only said hello, one of
    // another version that refused us, leaves us as we were, for the empty grace.)
    if (this.panes.size === 0 && this.servedSince(sock)) return void this.stop('no panes and no board host');
    this.o.log?.(`board host gone; keeping ${this.panes.size} pane(s) for ${Math.round(this.o.idleMs / 1000)} s`);
    this.armIdle();
  }

  private hello(): HelloAnswer {
    return { version: this.o.version, protocol: PTY_HOST_PROTOCOL, pid: process.pid };
  }

  private servedSince(sock: net.Socket): boolean {
    return this.used.has(sock);
  }

  private armIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const ms = this.panes.size === 0 ? Math.min(this.o.idleMs, PtyHostServerConstants.emptyGraceMs) : this.o.idleMs;
    this.idleTimer = setTimeout(() => void this.stop(`no board host for ${Math.round(ms / 1000)} s`), ms);
  }

  /** Pane output and events: to the board host we serve, if any. */
  private send(frame: Buffer): void {
    if (this.client && !this.client.destroyed) this.client.write(frame);
  }

  /** An answer goes to the connection that asked, and only while it is still the one we serve. */
  private answerTo(sock: net.Socket, message: unknown): void {
    if (sock === this.client && !sock.destroyed) sock.write(controlFrame(message));
  }

  /** One request, through the one procedure edge: the method looked up, its params validated, its handler
   *  run on the validated value, and its value or a typed error answered. */
  private request(sock: net.Socket, id: number, m: unknown, p: unknown): void {
    if (m !== 'hello') this.used.add(sock);
    const name = typeof m === 'string' ? m.slice(0, 64) : typeof m;
    callProcedure(ptyHostMethods, this.handlers, m, p, undefined)
      // A fault of the edge itself is this request's failure, never the process's (every agent's) end.
      .catch((err: Error) => ({ ok: false as const, error: { at: 'handler' as const, code: 'failed', message: err.message } }))
      .then((r) => {
        if (r.ok) return this.answerTo(sock, { t: 'res', id, ok: true, v: r.value });
        const where = r.error.at === 'method' ? '' : `${name}: `;
        if (r.error.code === 'failed') this.o.log?.(`${name} failed: ${r.error.message}`);
        this.answerTo(sock, { t: 'res', id, ok: false, code: r.error.code, error: `${where}${r.error.message}` });
      })
      .catch((err: Error) => this.o.log?.(`could not answer ${name}: ${err.message}`));
  }

  /** End every agent cleanly (SIGHUP, then TERM, then KILL to each process group) and stop serving. */
  async stop(why: string): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.o.log?.(`stopping: ${why}`);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    await this.panes.endAll();
    // The roots are gone; what they started still gets its TERM and KILL before this process exits.
    await lingeringKills();
    this.client?.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    fs.rmSync(this.o.socketPath, { force: true });
    fs.rmSync(paneRecordBeside(this.o.socketPath), { force: true });
    this.o.onStop(why);
  }
}
