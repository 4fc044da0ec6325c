import { showControls } from '../../src-shared/text/controlChars.js';
import { Emitter, type Disposable } from '../../src-shared/lifecycle/emitter.js';
import type { TerminalSignal } from '../pty/headlessMirror.js';
import type { PaneSession } from '../pty/paneSession.js';
import { noticeText } from '../pty/paneNotice.js';
import { readStartTicks } from '../base/procStat.js';
import { ProcessGroupKiller } from '../pty/processGroupKiller.js';
import type { PtyExit, PtyFlowStats } from '../pty/paneSession.js';
import type { PtyHostMethod, PtyHostMethods } from './protocol.js';

/** What a RemotePty needs of its connection. */
export interface RemoteLink {
  request<M extends PtyHostMethod>(m: M, p: PtyHostMethods[M]['params']): Promise<PtyHostMethods[M]['result']>;
  sendData(pane: number, data: string): void;
  sendAck(pane: number, consumer: string, chars: number): void;
}

const WINDOW = 'window';
/** The most early output kept for a pane's first listener: a new pane's first screenful or so arrives before
 *  its spawner has subscribed, within a tick. Past this (nobody came to listen) it is dropped; the pty host's
 *  mirror still holds the screen. */
const EARLY_MAX_CHARS = 1_000_000;

/**
 * A pane whose PtySession lives in the pty host: the surface panes.ts uses, over the wire. Death and exit
 * are latched: a listener that subscribes after they happened (a pane adopted while it died) still hears.
 */
export class RemotePty implements PaneSession {
  private readonly dataEmitter = new Emitter<string>();
  private readonly deathEmitter = new Emitter<void>();
  private readonly exitEmitter = new Emitter<PtyExit>();
  private readonly signalEmitter = new Emitter<TerminalSignal>();
  private dead = false;
  private exitValue: PtyExit | undefined;
  private lastOutput: number;
  private screenText = '';
  private pasteMode: boolean;
  private disposed = false;
  private lostFlag = false;
  /** Output delivered before anyone listened (a spawned pane's first words can come in the same read as
   *  the answer that names it): handed to the listeners of the first tick someone listens. Null once given. */
  private early: string[] | null;
  private earlyChars = 0;
  private earlyQueued = false;
  private stats: PtyFlowStats = { paused: false, maxUnackedChars: 0, mirrorUnackedChars: 0, batchedChars: 0, droppedChars: 0 };
  /** Which process the pane's root is (where /proc says): its pid alone may be a stranger's once it died. */
  private readonly startTicks: number | undefined;
  private resolveExited!: (exit: PtyExit) => void;
  readonly exited = new Promise<PtyExit>((resolve) => (this.resolveExited = resolve));

  constructor(
    private readonly link: RemoteLink,
    readonly pane: number,
    readonly pid: number,
    o: { quietForMs?: number; bracketedPaste?: boolean; dead?: boolean; exit?: PtyExit | null; holdEarly?: boolean } = {},
  ) {
    this.early = o.holdEarly ? [] : null;
    this.startTicks = o.dead ? undefined : readStartTicks(pid);
    this.lastOutput = performance.now() - (o.quietForMs ?? 0);
    this.pasteMode = o.bracketedPaste ?? false;
    if (o.dead) this.died();
    if (o.exit) this.exitedWith(o.exit);
  }

  get lastOutputAt(): number {
    return this.lastOutput;
  }

  get exit(): PtyExit | undefined {
    return this.exitValue;
  }

  /** As of the last answer; each read asks for a fresh one, so a poll sees the state a round trip late. */
  get flowStats(): PtyFlowStats {
    if (!this.disposed && !this.exitValue) {
      this.link.request('stats', { pane: this.pane }).then(
        (s) => (this.stats = s),
        () => undefined,
      );
    }
    return this.stats;
  }

  get lost(): boolean {
    return this.lostFlag;
  }

  readonly onData = (listener: (data: string) => void): Disposable => {
    const sub = this.dataEmitter.event(listener);
    if (this.early && !this.earlyQueued) {
      this.earlyQueued = true;
      // A tick later, so every listener its spawner adds at once hears it, in order before what comes next.
      queueMicrotask(() => {
        const text = this.early?.join('') ?? '';
        this.early = null;
        if (text && !this.disposed) this.dataEmitter.fire(text);
      });
    }
    return sub;
  };

  readonly onDeath = (listener: () => void): Disposable => {
    if (this.dead) queueMicrotask(listener);
    return this.deathEmitter.event(listener);
  };

  readonly onExit = (listener: (exit: PtyExit) => void): Disposable => {
    const exit = this.exitValue;
    if (exit) queueMicrotask(() => listener(exit));
    return this.exitEmitter.event(listener);
  };

  /** Read off the pty host's mirror of the pane, sent as it parses them. */
  readonly onSignal = (listener: (sig: TerminalSignal) => void): Disposable => this.signalEmitter.event(listener);

  // --- from the pty host ---

  /** @internal the link delivers the pane's output */
  deliver(data: string): void {
    if (this.disposed) return;
    this.lastOutput = performance.now();
    if (this.early) {
      if (this.earlyChars + data.length <= EARLY_MAX_CHARS) this.early.push(data);
      this.earlyChars += data.length;
      return;
    }
    this.dataEmitter.fire(data);
  }

  /** @internal */
  died(): void {
    if (this.dead) return;
    this.dead = true;
    this.deathEmitter.fire();
  }

  /** @internal */
  exitedWith(exit: PtyExit): void {
    if (this.exitValue) return;
    this.died();
    this.exitValue = exit;
    this.exitEmitter.fire(exit);
    this.resolveExited(exit);
  }

  /** @internal */
  signalled(sig: TerminalSignal): void {
    if (!this.disposed) this.signalEmitter.fire(sig);
  }

  /** @internal */
  setPasteMode(on: boolean): void {
    this.pasteMode = on;
  }

  /**
   * @internal The pty host is gone without a word (killed -9): the pane's master went with it, so its
   * process got SIGHUP; its session's groups are killed as well so nothing of the agent lives on unseen.
   */
  /** Whether its process is ended now (or had already exited): a sweep of the pane record can pass it by. */
  lostWithHost(): boolean {
    if (this.exitValue) return true;
    this.lostFlag = true;
    // Every group of its session (a shell's jobs, a CLI started from it, sit in groups of their own), and
    // only while its pid is still this process: one freed by its death may already be a stranger's.
    const killing = this.startTicks !== undefined || !this.dead;
    if (killing) {
      // HUP, TERM, KILL as any close ends an agent: what it started may hold a lock it must let go of.
      new ProcessGroupKiller(this.pid, { rootStartTicks: this.startTicks }).finish();
    }
    this.exitedWith({ exitCode: 0, signal: 9, signalName: 'SIGKILL' });
    return killing;
  }

  // --- to the pty host ---

  write(data: string): void {
    if (this.disposed || this.exitValue) return;
    this.link.sendData(this.pane, data);
  }

  /** Shown by the pty host's session, in order with the pane's output there (PtySession.showNotice). */
  async showNotice(text: string): Promise<void> {
    if (this.disposed || this.exitValue) return;
    await this.link.request('notice', { pane: this.pane, text: noticeText(text) });
  }

  /** As PtySession.asPaste: controls shown as escapes, bracketed when the program asked for it. */
  asPaste(text: string): string {
    const plain = showControls(text, 'none');
    return this.pasteMode ? `\x1b[200~${plain}\x1b[201~` : plain;
  }

  resize(cols: number, rows: number): void {
    if (!Number.isInteger(cols) || !Number.isInteger(rows) || cols < 1 || rows < 1) {
      throw new RangeError(`resize needs positive integer cols and rows, got ${cols}x${rows}`);
    }
    if (this.disposed) return;
    this.quietly(this.link.request('resize', { pane: this.pane, cols, rows }));
  }

  attach(consumerId: string = WINDOW): void {
    if (!this.disposed) this.quietly(this.link.request('attach', { pane: this.pane, consumer: consumerId }));
  }

  detach(consumerId: string = WINDOW): void {
    if (!this.disposed) this.quietly(this.link.request('detach', { pane: this.pane, consumer: consumerId }));
  }

  ack(chars: number, consumerId: string = WINDOW): void {
    if (!this.disposed) this.link.sendAck(this.pane, consumerId, chars);
  }

  /** Fetches the screen from the pty host's mirror; serialize() then returns it. */
  async flushMirror(): Promise<void> {
    if (this.disposed || this.lostFlag) return;
    const s = await this.link.request('screen', { pane: this.pane }).catch(() => null);
    if (!s) return;
    this.screenText = s.text;
    this.pasteMode = s.bracketedPaste;
  }

  serialize(): string {
    return this.screenText;
  }

  /** From the pty host's mirror, once it has parsed what the pane printed so far. Fails for a pane that is
   *  gone or a pty host that does not answer: no lines is not an empty screen (a prompt read as gone). */
  async screenLines(): Promise<string[]> {
    if (this.disposed || this.lostFlag) throw new Error(`pane ${this.pane} is gone`);
    return this.link.request('lines', { pane: this.pane });
  }

  /** Resolves with the exit; fails only when the pty host does not answer in its bound (stopped, wedged),
   *  so whoever closes the pane is told rather than left waiting. A pty host that is gone ends it as lost. */
  kill(): Promise<PtyExit> {
    if (this.disposed || this.exitValue) return this.exited;
    const asked = this.link.request('kill', { pane: this.pane }).then(
      () => this.exited,
      (err: { code?: unknown }) => (err?.code === 'pty-host-timeout' ? Promise.reject(err as Error) : this.exited),
    );
    return Promise.race([this.exited, asked]);
  }

  /** Kill (if alive) and forget, in the pty host too. */
  dispose(): void {
    if (this.disposed) return;
    this.quietly(this.link.request('dispose', { pane: this.pane }));
    this.release();
  }

  /** Stop listening without touching the pty: the board host leaves and the agent keeps running. */
  release(): void {
    this.disposed = true;
    this.early = null;
    this.dataEmitter.dispose();
    this.deathEmitter.dispose();
    this.exitEmitter.dispose();
    this.signalEmitter.dispose();
  }

  /** A call whose only failure is a pty host that is gone, which the link reports on its own. */
  private quietly(p: Promise<unknown>): void {
    p.catch(() => undefined);
  }
}
