import * as fs from 'node:fs';
import * as net from 'node:net';
import { dirname } from 'node:path';

import { PtySession } from '../pty/ptySession.js';
import type { PtyExit } from '../pty/ptySessionTypes.js';
import { controlFrame, dataFrame, FrameDecoder } from './frames.js';
import { PTY_HOST_PROTOCOL, type ClientMessage, type PaneListing, type PaneMeta, type PtyHostMethods, type SpawnParams } from './protocol.js';
import { ensurePrivateDir, socketLive } from './socketChecks.js';

interface HostedPane {
  pane: number;
  session: PtySession;
  meta: PaneMeta;
  cols: number;
  rows: number;
  dead: boolean;
  exit: PtyExit | null;
  pasteMode: boolean;
  /** Window consumers the connected board host attached, so they go when it does. */
  consumers: Set<string>;
}

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
} as const;

/** A consumer id of the board host's, as the session knows it: never the mirror's. */
const consumerKey = (c: string) => `w:${c}`;

/**
 * The pty host's side: owns the agents' PtySessions (pty, mirror, exit watcher) and serves one board host
 * at a time. A board host that goes away (crash, kill -9, `serve --keep-agents`) leaves the panes running,
 * paced by their mirrors alone; the next one connects, lists them and takes them back.
 */
export class PtyHostServer {
  private readonly panes = new Map<number, HostedPane>();

  private nextPane = 1;
  private client: net.Socket | null = null;
  /** Connections that asked for more than hello: board hosts that used us. */
  private readonly used = new WeakSet<net.Socket>();
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private stopping = false;

  private constructor(
    private readonly server: net.Server,
    private readonly o: PtyHostServerOptions,
  ) {
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
    const decoder = new FrameDecoder({
      control: (m) => {
        const msg = m as ClientMessage;
        if (!greeted) {
          if (msg.t !== 'req' || msg.m !== 'hello') return sock.destroy();
          greeted = true;
          const hi = msg.p as Partial<PtyHostMethods['hello']['params']> | null;
          // A board host of another version only hears who we are (it refuses us); it never takes over the
          // connection of the board host we serve.
          if (hi?.version !== this.o.version || hi?.protocol !== PTY_HOST_PROTOCOL) {
            sock.end(controlFrame({ t: 'res', id: msg.id, ok: true, v: this.hello() }));
            return;
          }
          this.adopt(sock);
        }
        this.onControl(sock, msg);
      },
      data: (pane, data) => {
        if (sock === this.client) this.panes.get(pane)?.session.write(data);
      },
    });
    sock.on('data', (chunk) => {
      try {
        decoder.push(chunk);
      } catch (err) {
        this.o.log?.(`dropping a board host connection: ${(err as Error).message}`);
        sock.destroy();
      }
    });
    sock.on('error', () => undefined);
    sock.on('close', () => this.dropped(sock));
  }

  /** A greeted board host is the one: one board host per data folder, so an older connection is stale. */
  private adopt(sock: net.Socket): void {
    const old = this.client;
    if (old && old !== sock) {
      this.detachConsumers();
      old.destroy();
    }
    this.client = sock;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  private dropped(sock: net.Socket): void {
    if (sock !== this.client) return;
    this.client = null;
    this.detachConsumers();
    if (this.stopping) return;
    // Nothing to keep: no agent left and its board host gone. (A board host that only said hello, one of
    // another version that refused us, leaves us as we were, for the empty grace.)
    if (this.panes.size === 0 && this.servedSince(sock)) return void this.stop('no panes and no board host');
    this.o.log?.(`board host gone; keeping ${this.panes.size} pane(s) for ${Math.round(this.o.idleMs / 1000)} s`);
    this.armIdle();
  }

  private hello(): PtyHostMethods['hello']['result'] {
    return { version: this.o.version, protocol: PTY_HOST_PROTOCOL, pid: process.pid };
  }

  private servedSince(sock: net.Socket): boolean {
    return this.used.has(sock);
  }

  /** Windows of a board host that is gone must not hold any pty paused. */
  private detachConsumers(): void {
    for (const p of this.panes.values()) {
      for (const c of p.consumers) p.session.detach(consumerKey(c));
      p.consumers.clear();
    }
  }

  private armIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const ms = this.panes.size === 0 ? Math.min(this.o.idleMs, PtyHostServerConstants.emptyGraceMs) : this.o.idleMs;
    this.idleTimer = setTimeout(() => void this.stop(`no board host for ${Math.round(ms / 1000)} s`), ms);
  }

  private send(message: unknown): void {
    if (this.client && !this.client.destroyed) this.client.write(controlFrame(message));
  }

  private onControl(sock: net.Socket, msg: ClientMessage): void {
    if (sock !== this.client) return;
    if (msg.t === 'ack') {
      const p = this.panes.get(msg.pane);
      if (p && Number.isFinite(msg.chars)) p.session.ack(msg.chars, consumerKey(msg.consumer));
      return;
    }
    if (msg.t !== 'req') return;
    if (msg.m !== 'hello') this.used.add(sock);
    void this.answer(msg.m, msg.p).then(
      (v) => this.send({ t: 'res', id: msg.id, ok: true, v }),
      (err: Error) => this.send({ t: 'res', id: msg.id, ok: false, error: err.message }),
    );
  }

  private async answer(m: string, p: unknown): Promise<unknown> {
    const pane = (q: unknown) => {
      const hosted = this.panes.get((q as { pane: number }).pane);
      if (!hosted) throw new Error(`no pane ${(q as { pane: number }).pane}`);
      return hosted;
    };
    switch (m) {
      case 'hello':
        return this.hello();
      case 'spawn':
        return this.spawn(p as SpawnParams);
      case 'list':
        return [...this.panes.values()].map((h) => this.listing(h));
      case 'resize': {
        const q = p as PtyHostMethods['resize']['params'];
        const h = pane(q);
        h.session.resize(q.cols, q.rows);
        h.cols = q.cols;
        h.rows = q.rows;
        return null;
      }
      case 'attach': {
        const q = p as PtyHostMethods['attach']['params'];
        const h = pane(q);
        h.session.attach(consumerKey(q.consumer));
        h.consumers.add(q.consumer);
        return null;
      }
      case 'detach': {
        const q = p as PtyHostMethods['detach']['params'];
        const h = pane(q);
        h.session.detach(consumerKey(q.consumer));
        h.consumers.delete(q.consumer);
        return null;
      }
      case 'screen': {
        const h = pane(p);
        await h.session.flushMirror();
        return { text: h.session.serialize(), bracketedPaste: h.session.asPaste('') !== '' };
      }
      case 'kill':
        return pane(p).session.kill();
      case 'stats':
        return pane(p).session.flowStats;
      case 'dispose': {
        const h = this.panes.get((p as { pane: number }).pane);
        if (h) this.forget(h);
        return null;
      }
      case 'shutdown':
        setImmediate(() => void this.stop('the board host stopped its agents'));
        return null;
      default:
        throw new Error(`unknown method ${m}`);
    }
  }

  private spawn(p: SpawnParams): PtyHostMethods['spawn']['result'] {
    const session = PtySession.spawn(p.command, p.args, { cwd: p.cwd, env: p.env, cols: p.cols, rows: p.rows });
    const pane = this.nextPane++;
    const h: HostedPane = { pane, session, meta: p.meta, cols: p.cols, rows: p.rows, dead: false, exit: null, pasteMode: false, consumers: new Set() };
    this.panes.set(pane, h);
    session.onData((data) => {
      if (this.client && !this.client.destroyed) this.client.write(dataFrame(pane, data));
      // The typist wraps its messages in bracketed paste when the program asked for it: tell the board host
      // when that changes (rarely: a TUI's start and end), not per chunk.
      const on = session.asPaste('') !== '';
      if (on !== h.pasteMode) {
        h.pasteMode = on;
        this.send({ t: 'paste-mode', pane, on });
      }
    });
    session.onDeath(() => {
      h.dead = true;
      this.send({ t: 'death', pane });
    });
    session.onExit((exit) => {
      h.dead = true;
      h.exit = exit;
      this.send({ t: 'exit', pane, exit });
    });
    return { pane, pid: session.pid };
  }

  private listing(h: HostedPane): PaneListing {
    return {
      pane: h.pane,
      pid: h.session.pid,
      meta: h.meta,
      cols: h.cols,
      rows: h.rows,
      dead: h.dead,
      exit: h.exit,
      quietForMs: Math.max(0, performance.now() - h.session.lastOutputAt),
      bracketedPaste: h.pasteMode,
    };
  }

  private forget(h: HostedPane): void {
    this.panes.delete(h.pane);
    h.session.dispose();
  }

  /** End every agent cleanly (SIGHUP, then TERM, then KILL to each process group) and stop serving. */
  async stop(why: string): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.o.log?.(`stopping: ${why}`);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    await Promise.all([...this.panes.values()].map((h) => h.session.kill().catch(() => undefined)));
    for (const h of [...this.panes.values()]) this.forget(h);

    this.client?.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    fs.rmSync(this.o.socketPath, { force: true });
    this.o.onStop(why);
  }
}
