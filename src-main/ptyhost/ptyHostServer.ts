import * as fs from 'node:fs';
import * as net from 'node:net';
import { dirname } from 'node:path';

import { firstIssue } from '../../src-shared/board/schemas.js';
import { MAX_METHOD_NAME_CHARS } from '../../src-shared/protocol/procedure.js';
import { callProcedure, type Handlers } from '../base/procedureServer.js';
import { findOnPath } from '../base/pathLookup.js';
import { peerPidOnce } from '../pty/peerPid.js';
import { readProcStat } from '../base/procStat.js';
import { newChallenge, proofHolds } from './adoptionKey.js';
import { commandLineOf, judgePeer, type OwnProcesses } from './boardHostPeer.js';
import { controlFrame, FrameDecoder, FrameLimits } from './frames.js';
import { lingeringKills } from '../pty/processGroupKiller.js';
import { HostedPanes } from './hostedPanes.js';
import { sweepPaneRecord } from './paneRecord.js';
import { clientMessage, idOf, ptyHostMethods, type HelloAnswer } from './ptyHostMethods.js';
import { PANE_REAPER_NAME, paneRecordBeside, PTY_HOST_PROTOCOL } from './protocol.js';
import { ensurePrivateDir, socketLive } from './socketChecks.js';

export interface PtyHostServerOptions {
  socketPath: string;
  version: string;
  /** With no board host connected for this long, end every agent cleanly and stop. */
  idleMs: number;
  /** The server has nothing left to do (idle, shut down, or empty when its board host left). */
  onStop: (why: string) => void;
  log?: (line: string) => void;
  /** The adoption key the board host that started us handed over (adoptionKey.ts); null when we were
   *  started without one, and then only a greeting outside our panes' ancestry is adopted. */
  key?: Buffer | null;
}

/** A frame of a connection, as read: kept in order while its greeting is judged. */
type Frame = { kind: 'control'; raw: unknown } | { kind: 'data'; pane: number; data: string };

/** Where a connection's greeting stands: waiting for its hello, judged (its peer being read), or owing the
 *  key's proof. */
interface Greeting {
  phase: 'hello' | 'judging' | 'proof';
  queue: Frame[];
  bytes: number;
  challenge: string;
  deadline: ReturnType<typeof setTimeout>;
  peer?: string;
  why?: string;
}

export const PtyHostServerConstants = {
  /** With no pane to keep, waiting the full idle time for a board host only leaves a process behind: one
   *  that started us and died before using us, or one of another version that refused us. */
  emptyGraceMs: 10_000,
  /** Bad messages logged per connection: enough to see what a broken board host sends, not a log it can
   *  fill. */
  loggedBadPerConnection: 20,
  /** A connection not yet adopted is nobody's: a hello and a proof are ~200 bytes each, so 16 KiB in all
   *  and 4 KiB per frame is plenty for a board host and all a stranger gets to make us hold. */
  unadoptedBytes: 16 * 1024,
  unadoptedFrameBytes: 4 * 1024,
  /** A board host greets in one round trip and a peer check (a perl, ~20 ms), and its key's holder in two;
   *  10 s covers that on a loaded 2-core machine (as the board host's own start bound does). */
  unadoptedMs: 10_000,
  /** A real board host is one connection (two while one replaces another): more greeting at once is a
   *  flood, refused at accept. */
  maxUnadopted: 16,
} as const;

/**
 * The pty host's side: owns the agents' panes (hostedPanes.ts) and serves one board host at a time. A board
 * host that goes away (crash, kill -9, `serve --keep-agents`) leaves the panes running, paced by their
 * mirrors alone; the next one connects, lists them and takes them back. Only a process outside its panes
 * (or the holder of the key it was started with) is adopted, so an agent that kills its board host cannot
 * take its place; and the first board host adopted is the one while its connection lives: a second is
 * refused (`busy`), never allowed to take over, so nothing but the board host in charge can type into a pane
 * or end one.
 */
export class PtyHostServer {
  private readonly panes: HostedPanes;
  private client: net.Socket | null = null;
  /** Connections that asked for more than hello: board hosts that used us. */
  private readonly used = new WeakSet<net.Socket>();
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private stopping = false;
  private readonly handlers: Handlers<typeof ptyHostMethods, void>;
  /** Connections that have not been adopted, each with its greeting's state. */
  private readonly unadopted = new Map<net.Socket, Greeting>();
  /** Peer checks run one at a time (each may start a perl), so a flood of greetings cannot fork a flood. */
  private judging: Promise<unknown> = Promise.resolve();
  private refusedFloods = 0;
  private readonly perl = findOnPath('perl');

  private constructor(
    private readonly server: net.Server,
    private readonly o: PtyHostServerOptions,
  ) {
    this.panes = new HostedPanes({ send: (frame) => this.send(frame), connected: () => !!this.client && !this.client.destroyed, recordPath: paneRecordBeside(o.socketPath), log: o.log });
    this.handlers = {
      ...this.panes.handlers,
      hello: () => this.hello(),
      // Only a connection not yet adopted proves anything; the board host we serve has nothing to prove.
      prove: () => null,
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
    if (this.unadopted.size >= PtyHostServerConstants.maxUnadopted && !this.pushOutSilent()) {
      // A flood of greetings: none of them is the one board host we wait for, and each would cost a check.
      if (this.refusedFloods++ % PtyHostServerConstants.loggedBadPerConnection === 0) this.o.log?.(`refused a connection: ${this.unadopted.size} are already greeting`);
      sock.destroy();
      return;
    }
    const g: Greeting = { phase: 'hello', queue: [], bytes: 0, challenge: '', deadline: setTimeout(() => this.refuse(sock, g, 'did not greet in time'), PtyHostServerConstants.unadoptedMs) };
    this.unadopted.set(sock, g);
    let logged = 0;
    /** What a board host sent that is not ours: logged (a few), answered when it has an id, never acted on. */
    const complain = (why: string, raw?: unknown) => {
      const id = idOf(raw);
      if (id !== null) this.answerTo(sock, { t: 'res', id, ok: false, code: 'invalid-message', error: `not a request of the pty host's: ${why}` });
      if (logged++ < PtyHostServerConstants.loggedBadPerConnection) this.o.log?.(`ignored from the board host: ${why}`);
    };
    const served = (f: Frame) => {
      if (sock !== this.client) return;
      if (f.kind === 'data') return this.panes.write(f.pane, f.data);
      const msg = clientMessage.safeParse(f.raw);
      if (!msg.success) return complain(firstIssue(msg.error), f.raw);
      if (msg.data.t === 'ack') return this.panes.ack(msg.data.pane, msg.data.consumer, msg.data.chars);
      this.request(sock, msg.data.id, msg.data.m, msg.data.p);
    };
    const frame = (f: Frame) => {
      if (!this.unadopted.has(sock)) return served(f);
      // Frames behind a greeting wait for its verdict, in order; a connection that is nobody's yet types nothing.
      if (g.phase !== 'hello' && g.phase !== 'proof') return void g.queue.push(f);
      if (f.kind === 'data') return;
      if (g.phase === 'hello') return this.greet(sock, g, f.raw, served);
      this.proof(sock, g, f.raw, served);
    };
    const decoder = new FrameDecoder(
      {
        control: (raw) => frame({ kind: 'control', raw }),
        data: (pane, data) => frame({ kind: 'data', pane, data }),
        malformed: (why) => {
          // Before it is adopted a connection is nobody's: it goes. The board host's is kept, the frame skipped.
          if (sock === this.client) complain(why);
          else sock.destroy();
        },
      },
      () => (this.unadopted.has(sock) ? PtyHostServerConstants.unadoptedFrameBytes : FrameLimits.maxFrameBytes),
    );
    sock.on('data', (chunk: Buffer) => {
      if (this.unadopted.has(sock) && (g.bytes += chunk.length) > PtyHostServerConstants.unadoptedBytes) return this.refuse(sock, g, `sent ${g.bytes} bytes before it was adopted`);
      try {
        decoder.push(chunk);
      } catch (err) {
        this.o.log?.(`dropping a connection: ${(err as Error).message}`);
        sock.destroy();
      }
    });
    sock.on('error', () => undefined);
    sock.on('close', () => {
      // A board host that ended mid-frame (killed while writing one) sent a request that never was: said so.
      if (sock === this.client && decoder.pending > 0) this.o.log?.(`the board host ended in the middle of a frame (${decoder.pending} bytes of it read)`);
      clearTimeout(g.deadline);
      this.unadopted.delete(sock);
      this.dropped(sock);
    });
  }

  /**
   * A connection's first frame must be a hello of ours. One of another version only hears who we are (it
   * refuses us) and is ended. Ours is judged by who the kernel says connected (boardHostPeer.ts): a process
   * of one of our panes is refused whatever it proves; one outside them is adopted; one that cannot be told
   * (gone, or no way to ask) is given a challenge that only the key of the board host that started us answers.
   */
  private greet(sock: net.Socket, g: Greeting, raw: unknown, served: (f: Frame) => void): void {
    const msg = clientMessage.safeParse(raw);
    const hi = msg.success && msg.data.t === 'req' && msg.data.m === 'hello' ? ptyHostMethods.hello.input.safeParse(msg.data.p) : null;
    if (!msg.success || msg.data.t !== 'req' || !hi?.success) return void sock.destroy();
    const id = msg.data.id;
    if (hi.data.version !== this.o.version || hi.data.protocol !== PTY_HOST_PROTOCOL) return void sock.end(controlFrame({ t: 'res', id, ok: true, v: this.hello() }));
    g.phase = 'judging';
    g.challenge = newChallenge();
    this.judging = this.judging
      .then(() => peerPidOnce(sock, this.perl))
      .then((pid) => {
        if (sock.destroyed) return;
        const verdict = judgePeer(pid, this.ownProcesses());
        const who = `pid ${verdict.pid ?? '?'} (${commandLineOf(verdict.pid)})`;
        if (verdict.kind === 'pane') {
          this.o.log?.(`refused a greeting from an agent's process ${who}: ${verdict.why}`);
          return this.refuse(sock, g, verdict.why, id, 'refused', `the pty host (pid ${process.pid}) serves only its board host, and ${verdict.why}`);
        }
        g.peer = who;
        if (verdict.kind === 'unknown') {
          // The key's holder proves it next (the frames queued behind this hello are its proof).
          g.phase = 'proof';
          sock.write(controlFrame({ t: 'res', id, ok: true, v: { ...this.hello(), challenge: g.challenge, adopted: false } }));
          g.why = verdict.why;
        } else {
          if (!this.adoptIfFree(sock, g, id, `by its ancestry`)) return;
          sock.write(controlFrame({ t: 'res', id, ok: true, v: { ...this.hello(), challenge: g.challenge, adopted: true } }));
        }
        this.release(sock, g, served);
      })
      .catch((err: Error) => {
        this.o.log?.(`could not judge a greeting: ${err.message}`);
        this.refuse(sock, g, err.message);
      });
  }

  /** The one request a connection that could not be told may make: the key's proof for its challenge. */
  private proof(sock: net.Socket, g: Greeting, raw: unknown, served: (f: Frame) => void): void {
    const msg = clientMessage.safeParse(raw);
    const p = msg.success && msg.data.t === 'req' && msg.data.m === 'prove' ? ptyHostMethods.prove.input.safeParse(msg.data.p) : null;
    const id = msg.success && msg.data.t === 'req' ? msg.data.id : idOf(raw);
    if (id === null) return void sock.destroy();
    if (!p?.success || !proofHolds(this.o.key ?? null, g.challenge, p.data.proof)) {
      const why = `${g.why ?? 'it could not be told'}, and it did not prove the key of the board host that started the pty host`;
      this.o.log?.(`refused a greeting from ${g.peer}: ${why}`);
      return this.refuse(sock, g, why, id, 'refused', `the pty host (pid ${process.pid}) serves only its board host: ${why}`);
    }
    if (!this.adoptIfFree(sock, g, id, 'by the adoption key')) return;
    sock.write(controlFrame({ t: 'res', id, ok: true, v: null }));
    this.release(sock, g, served);
  }

  /** The frames that waited behind a verdict, in order, now that the connection is served or awaits proof. */
  private release(sock: net.Socket, g: Greeting, served: (f: Frame) => void): void {
    const queued = g.queue.splice(0);
    for (const f of queued) {
      if (sock.destroyed) return;
      if (!this.unadopted.has(sock)) served(f);
      else if (f.kind === 'control') this.proof(sock, g, f.raw, served);
    }
  }

  /**
   * Every place is taken: the oldest connection that has not yet said hello goes, to make room (issue 42: an
   * agent holding all 16 places with connections that never greet made a restarted serve exit "the pty host is
   * gone"). A board host says hello the moment it connects, so a silent connection is nobody we wait for, and a
   * flood of them pushes out only itself, as the agents' socket does (connectionBudget.ts). False when every
   * place is held by a greeting being judged or owing its proof.
   */
  private pushOutSilent(): boolean {
    for (const [old, g] of this.unadopted) {
      if (g.phase !== 'hello') continue;
      if (this.refusedFloods++ % PtyHostServerConstants.loggedBadPerConnection === 0)
        this.o.log?.(`closed a connection that had not greeted to make room: ${this.unadopted.size} were greeting`);
      this.refuse(old, g, 'made room for a new connection');
      return true;
    }
    return false;
  }

  /** Refused: said (when there is a request to answer) and ended. */
  private refuse(sock: net.Socket, g: Greeting, why: string, id: number | null = null, code = 'refused', error = why): void {
    clearTimeout(g.deadline);
    this.unadopted.delete(sock);
    g.queue.length = 0;
    if (id !== null && !sock.destroyed) sock.end(controlFrame({ t: 'res', id, ok: false, code, error }));
    else sock.destroy();
    // An end that is never read must not keep the connection (and its buffers) for ever.
    setTimeout(() => sock.destroy(), PtyHostServerConstants.unadoptedMs).unref();
  }

  /**
   * The board host that greeted us while none was (or the one before has ended its connection): from now
   * on its requests and input are served. One that comes while a board host is served is refused as busy:
   * it never takes over the connection of the board host we serve.
   */
  private adoptIfFree(sock: net.Socket, g: Greeting, id: number, how: string): boolean {
    const current = this.client;
    // A connection whose end we have read is a board host that left: its close may not have come yet.
    if (current && current !== sock && !current.destroyed && !current.readableEnded) {
      this.o.log?.(`refused a second board host ${g.peer}: one is connected`);
      const error = `the pty host (pid ${process.pid}) already serves a board host of this data folder, and serves one at a time`;
      this.refuse(sock, g, error, id, 'busy', error);
      return false;
    }
    clearTimeout(g.deadline);
    this.unadopted.delete(sock);
    this.o.log?.(`adopted the board host ${g.peer} ${how}`);
    if (current && current !== sock) {
      this.panes.detachConsumers();
      current.destroy();
    }
    this.client = sock;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    return true;
  }

  /** What no agent's process can be: this pty host, its reaper and its panes' roots (boardHostPeer.ts). */
  private ownProcesses(): OwnProcesses {
    const ancestors = new Set([process.pid]);
    if (readProcStat(process.ppid)?.comm === PANE_REAPER_NAME) ancestors.add(process.ppid);
    return { ancestors, paneRoots: new Set(this.panes.rootPids()) };
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
    const name = typeof m === 'string' ? m.slice(0, MAX_METHOD_NAME_CHARS) : typeof m;
    callProcedure(ptyHostMethods, this.handlers, m, p, undefined)
      // A fault of the edge itself is this request's failure, never the process's (every agent's) end.
      .catch((err: Error) => ({ ok: false as const, error: { at: 'handler' as const, code: 'failed', message: err.message } }))
      .then((r) => {
        if (r.ok) return this.answerTo(sock, { t: 'res', id, ok: true, v: r.value });
        const where = r.error.at === 'method' ? '' : `${name}: `;
        // A failure, or a request the board host should never have sent as it is: the log says so.
        if (r.error.code === 'failed' || r.error.at !== 'handler') this.o.log?.(`${name} ${r.error.code === 'failed' ? 'failed' : `refused (${r.error.code})`}: ${r.error.message}`);
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
    // The server's close waits for every connection: a greeter's must not hold the stop to its deadline.
    for (const [sock, g] of this.unadopted) {
      clearTimeout(g.deadline);
      sock.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    fs.rmSync(this.o.socketPath, { force: true });
    fs.rmSync(paneRecordBeside(this.o.socketPath), { force: true });
    this.o.onStop(why);
  }
}
