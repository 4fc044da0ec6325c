/**
 * One terminal pane: a process in a pty, its batched output, flow control, chunked input, a headless
 * mirror for restore, and a kill that escalates over the whole process group.
 *
 * Encoding: node-pty's default `encoding: 'utf8'` is kept on purpose. Its socket decodes with Node's own
 * StringDecoder (Readable#setEncoding), so a multi-byte character split across two reads is reassembled,
 * not mangled (test/main/pty/ptySession.test.ts pins this with a byte-at-a-time writer). And only with 'utf8'
 * does node-pty set IUTF8 on the tty: with `encoding: null` the kernel's line editor would erase one BYTE
 * per backspace in canonical mode, leaving half a character in the child's input (pinned by a test too).
 * OutputBatcher still accepts raw bytes and decodes them safely for callers that want Buffers.
 *
 * Death before exit: the drain of the held slave (slaveHold.ts) and the exit's quiet period take 20 ms or
 * more (longer while a slow window holds the pty paused), yet whoever acts on a dead process (the board ending its claims) needs only to
 * know it is dead. `onDeath` fires as soon as the child is known dead (SIGCHLD, ~1 ms after a kill -9),
 * while the tail is still being read; `onExit` follows, with the exit status, once the tail has drained.
 */
import { spawn as ptySpawn, type IPty } from 'node-pty';
import { DisposableStore, toDisposable, type TimerHandle } from '../../src-shared/lifecycle/disposableStore.js';
import { showControls } from '../../src-shared/text/controlChars.js';
import { watchChildExit } from './childExitWatcher.js';
import { Emitter, type Disposable } from '../../src-shared/lifecycle/emitter.js';
import { FlowLimits } from '../../src-shared/terminal/flowLimits.js';
import { FlowControl } from './flowControl.js';
import { HeadlessMirror, HeadlessMirrorConstants, type TerminalSignal } from './headlessMirror.js';
import { withoutInheritedFds } from './inheritedFds.js';
import { SlaveHold } from './slaveHold.js';
import { ChunkedWriter } from './inputChunker.js';
import { OutputBatcher } from './outputBatcher.js';
import { noticeOutput, noticeSignal, noticeText } from './paneNotice.js';
import { SequenceState } from './sequenceState.js';
import { canTellShellForeground, shellHoldsTerminal } from './shellForeground.js';
import { ProcessGroupKiller } from './processGroupKiller.js';
import type { PtyExit, PtyFlowStats, PtySpawnOptions } from './paneSession.js';
import { constants as osConstants } from 'node:os';
import type { FlowControlLimits } from './flowControl.js';
import type { ListProcesses } from './processGroupKiller.js';
import { readStartTicks } from '../base/procStat.js';
import { monotonicNow, realTimers, type Timers } from '../base/timers.js';

export const PtySessionConstants = {
  /** After node-pty reports exit, wait this long without output before reporting it ourselves. node-pty
   *  already waits for the pty to hit EOF before its exit event, so late data is rare on Unix; VS Code's
   *  250 ms exists for Windows/ConPTY. Kept short so a pane shows "exited" promptly; the board's claims no
   *  longer wait for it (they end on `onDeath`). */
  exitQuietMs: 10,
  /** Hard cap on that wait, including waiting for the mirror to parse what it holds (<= ~165k chars under
   *  flow control, a few ms). Output still trickling in after this is shown but no longer delays the event. */
  exitMaxWaitMs: 50,
  /** After the child died, the pty must be quiet this long before the session lets go of the slave (ending
   *  the output): a pty read returns within microseconds while data is pending, so 10 ms of silence means
   *  drained, for 10 ms on the kill-to-exit path (nothing on the kill-to-death path the claims follow). */
  drainQuietMs: 10,
  /** After the slave is let go, how long the pty gets to close by itself before node-pty's held-back socket
   *  destroy runs (node-pty's own figure for a pty that never closes). */
  heldDestroyGraceMs: 200,
  /** $TERM for the child: the panes render with xterm.js, which implements xterm-256color. */
  terminalName: 'xterm-256color',
} as const;



export interface PtySessionOptions {
  scrollback?: number;
  batchDelayMs?: number;
  inputIntervalMs?: number;
  exitQuietMs?: number;
  exitMaxWaitMs?: number;
  drainQuietMs?: number;
  termAfterMs?: number;
  killAfterMs?: number;
  flowLimits?: FlowControlLimits;
  /** Monotonic clock in ms; drives `lastOutputAt`. */
  now?: () => number;
  timers?: Timers;
  listProcesses?: ListProcesses;
}

const signalNames = new Map<number, string>(Object.entries(osConstants.signals).map(([name, n]) => [n, name]));

/** node-pty's exit as the session reports it: a signal of 0 is none, and a signal gets its name. */
export function ptyExitOf(e: { exitCode: number; signal?: number }): PtyExit {
  const signal = e.signal ? e.signal : undefined;
  return { exitCode: e.exitCode, signal, signalName: signal === undefined ? undefined : signalNames.get(signal) };
}

/** The flow-control consumer id the headless mirror uses. */
export const MIRROR_CONSUMER = 'mirror';
/** The id `attach`/`ack`/`detach` use when a caller has one window per pane. */
export const WINDOW_CONSUMER = 'window';

export class PtySession implements Disposable {
  /** Spawns `command` in a new pty. A command that cannot be executed still yields a session: the child
   *  prints the exec error and exits 1, as in a real terminal. */
  static spawn(command: string, args: readonly string[], options: PtySpawnOptions, sessionOptions: PtySessionOptions = {}): PtySession {
    // The child starts with its own terminal only: no master or other descriptor of the host (issue 16).
    const launch = withoutInheritedFds(command, args, options.env);
    const pty = ptySpawn(launch.command, launch.args, {
      name: options.name ?? PtySessionConstants.terminalName,
      cols: options.cols,
      rows: options.rows,
      cwd: options.cwd,
      env: launch.env,
    });
    return new PtySession(pty, options, sessionOptions);
  }

  readonly pid: number;

  private readonly dataEmitter = new Emitter<string>();
  private readonly deathEmitter = new Emitter<void>();
  private readonly exitEmitter = new Emitter<PtyExit>();
  private readonly signalEmitter = new Emitter<TerminalSignal>();
  private readonly flow: FlowControl;
  private readonly batcher: OutputBatcher;
  private readonly writer: ChunkedWriter;
  private readonly mirror: HeadlessMirror;
  readonly rootStartTicks: number | undefined; // the root process's start time (/proc), if readable
  private readonly killer: ProcessGroupKiller;
  private readonly now: () => number;
  private readonly timers: Timers;
  /** Every member the session owns and every timer it arms (all from `timers`): one dispose ends them. */
  private readonly disposables: DisposableStore;
  private readonly exitQuietMs: number;
  private readonly exitMaxWaitMs: number;
  private readonly drainQuietMs: number;
  private readonly childWatch: Disposable;
  /** Our own fd on the pty's slave side, held until the child is dead and its output drained. */
  private readonly slave: SlaveHold;
  private drainTimer: TimerHandle | undefined;
  private lastOutput: number;
  private droppedChars = 0;
  /** Whether the output read so far stops between escape sequences: a notice is written only then. */
  private readonly sequences = new SequenceState();
  /** Reads from the pty so far: a notice placed after the mirror caught up must see no newer one. */
  private reads = 0;
  /** Notices waiting to be drawn (plain text), each with whether its notification went out and who waits. */
  private readonly notices: Array<{ text: string; signalled: boolean; shown: () => void }> = [];
  private placing = false;
  private placeAgain = false;
  private ptyExit: PtyExit | undefined;
  private exitDeadline = 0;
  private exitTimer: TimerHandle | undefined;
  private exitReported = false;
  private dead = false; // onDeath has fired
  private killing = false;
  private disposed = false;
  private resolveExited!: (exit: PtyExit) => void;
  /** Resolves with the exit once it has been reported (also after dispose, with the real exit). */
  readonly exited: Promise<PtyExit>;

  private constructor(
    private readonly pty: IPty,
    options: PtySpawnOptions,
    sessionOptions: PtySessionOptions,
  ) {
    this.pid = pty.pid;
    this.now = sessionOptions.now ?? monotonicNow;
    this.timers = sessionOptions.timers ?? realTimers;
    // Everything the session owns is registered here as it is made, so dispose is one call; they go in the
    // order they were made (the store's order), the timers armed later after them.
    this.disposables = new DisposableStore(this.timers);
    for (const e of [this.dataEmitter, this.deathEmitter, this.exitEmitter, this.signalEmitter]) this.disposables.add(e);
    this.exitQuietMs = sessionOptions.exitQuietMs ?? PtySessionConstants.exitQuietMs;
    this.exitMaxWaitMs = sessionOptions.exitMaxWaitMs ?? PtySessionConstants.exitMaxWaitMs;
    this.drainQuietMs = sessionOptions.drainQuietMs ?? PtySessionConstants.drainQuietMs;
    this.lastOutput = this.now();
    this.exited = new Promise((resolve) => (this.resolveExited = resolve));
    this.flow = new FlowControl(
      {
        pause: () => this.pty.pause(),
        // Every consumer is now at most the low watermark behind and will want more soon: the first read
        // after the resume goes out at once rather than waiting out the rest of a batch interval.
        resume: () => {
          this.pty.resume();
          this.batcher.expedite();
          if (this.notices.length) void this.placeNotices();
        },
      },
      sessionOptions.flowLimits ?? FlowLimits,
    );
    this.flow.addConsumer(MIRROR_CONSUMER);
    this.mirror = this.disposables.add(new HeadlessMirror(options.cols, options.rows, sessionOptions.scrollback ?? HeadlessMirrorConstants.scrollback));
    this.batcher = this.disposables.add(new OutputBatcher((data) => this.dataEmitter.fire(data), { delayMs: sessionOptions.batchDelayMs, timers: this.timers, now: this.now }));
    this.mirror.onSignal.event((sig) => {
      this.batcher.flush(); // a signal after the output it came in: the prompt shows, then the wait
      if (this.believed(sig)) this.signalEmitter.fire(sig);
    });
    this.writer = this.disposables.add(new ChunkedWriter((chunk) => this.pty.write(chunk), { intervalMs: sessionOptions.inputIntervalMs, timers: this.timers }));
    // Which process the root is (pid and start time), read once for the killer, exit watcher and pane record.
    const rootStartTicks = (this.rootStartTicks = readStartTicks(this.pid));
    this.killer = this.disposables.add(
      new ProcessGroupKiller(this.pid, {
        termAfterMs: sessionOptions.termAfterMs,
        killAfterMs: sessionOptions.killAfterMs,
        timers: this.timers,
        now: this.now,
        listProcesses: sessionOptions.listProcesses,
        rootStartTicks,
        rootEndsAll: options.contained,
      }),
    );
    this.disposables.add(pty.onData((chunk) => this.onPtyData(chunk)));
    // Not registered: the exit listener outlives dispose, so `exited` still resolves with the real exit.
    pty.onExit((e) => this.onPtyExit(e));
    this.slave = this.disposables.add(
      new SlaveHold(pty, this.disposables, PtySessionConstants.heldDestroyGraceMs, () => this.disposed, () => {
        // node-pty calls this only after it reaped the child: proof of death even if no SIGCHLD was seen.
        if (this.drainTimer === undefined) this.armDrain();
        this.markDead();
      }),
    );
    this.childWatch = this.disposables.add(
      watchChildExit(
        this.pid,
        () => {
          this.armDrain();
          this.markDead();
        },
        rootStartTicks,
      ),
    );
  }

  /** Output: the first chunk after a quiet gap at once, what follows batched (one message per ~5 ms, or per
   *  up to 100k chars in a flood: see OutputBatcherConstants). */
  get onData(): (listener: (data: string) => void) => Disposable {
    return this.dataEmitter.event;
  }

  /** Fired once, as soon as the child is known to be dead (reaped or a zombie), before its output tail has
   *  drained: onExit follows. Not fired for a session disposed first. */
  get onDeath(): (listener: () => void) => Disposable {
    return this.deathEmitter.event;
  }

  /** Fired once, after the process exited and its output drained (or the short cap passed). */
  get onExit(): (listener: (exit: PtyExit) => void) => Disposable {
    return this.exitEmitter.event;
  }

  /** Fired as the mirror parses them, after the output they came in; a prompt mark only if the shell said it. */
  get onSignal(): (listener: (sig: TerminalSignal) => void) => Disposable {
    return this.signalEmitter.event;
  }

  /** Text as a terminal pastes it into this pane: between the bracketed-paste marks when the program asked
   *  for them (TUIs and readline then take it as one paste, never as typed keys or commands). Control
   *  characters, C1 and bidi controls included, are typed as visible escapes (`\x1b`): text from the board
   *  (a task title in a journal older than the board's refusal of them) must not end the paste early, press
   *  Ctrl-C or Enter, or send escape sequences to the program; C2 9B is CSI to a UTF-8 terminal too. */
  asPaste(text: string): string {
    const plain = showControls(text, 'none');
    return this.mirror.bracketedPaste ? `\x1b[200~${plain}\x1b[201~` : plain;
  }

  /** Monotonic ms (same clock as `now`) of the last output from the pty; the spawn time before any. */
  get lastOutputAt(): number {
    return this.lastOutput;
  }

  /** The exit, once reported. */
  get exit(): PtyExit | undefined {
    return this.exitReported ? this.ptyExit : undefined;
  }

  get flowStats(): PtyFlowStats {
    return {
      paused: this.flow.isPaused,
      maxUnackedChars: this.flow.maxUnacked,
      mirrorUnackedChars: this.flow.unackedOf(MIRROR_CONSUMER),
      batchedChars: this.batcher.pendingChars,
      droppedChars: this.droppedChars,
    };
  }

  /** Input from a person or a paste: chunked, escape sequences kept whole. Ignored after exit. */
  write(data: string): void {
    if (this.disposed || this.ptyExit) return;
    this.writer.write(data);
  }

  /**
   * A notice of the host's, shown in the pane's output and never typed into its input (paneNotice.ts): at
   * the next moment the output stops between escape sequences and no consumer holds the pty paused, in the
   * same order as the program's output, to the mirror and every window. On the alternate screen only its
   * notification goes at once; the line waits for the program to leave it. Resolves once the notice (or at
   * least its notification) is written, or the pane ends.
   */
  showNotice(text: string): Promise<void> {
    if (this.disposed || this.ptyExit) return Promise.resolve();
    return new Promise((shown) => {
      this.notices.push({ text: noticeText(text), signalled: false, shown });
      void this.placeNotices();
    });
  }

  resize(cols: number, rows: number): void {
    if (!Number.isInteger(cols) || !Number.isInteger(rows) || cols < 1 || rows < 1) {
      throw new RangeError(`resize needs positive integer cols and rows, got ${cols}x${rows}`);
    }
    if (this.disposed) return;
    this.mirror.resize(cols, rows);
    if (this.ptyExit) return; // the pty fd may already be closed
    this.pty.resize(cols, rows);
  }

  /** A window starts consuming this pane's output; from now on its acks pace the pty too. */
  attach(consumerId: string = WINDOW_CONSUMER): void {
    if (consumerId === MIRROR_CONSUMER) throw new Error(`'${MIRROR_CONSUMER}' is reserved for the headless mirror`);
    this.flow.addConsumer(consumerId);
  }

  /** The window is gone (closed, disconnected): it must no longer hold the pty paused. */
  detach(consumerId: string = WINDOW_CONSUMER): void {
    if (consumerId === MIRROR_CONSUMER) return;
    this.flow.removeConsumer(consumerId);
  }

  /** The consumer's terminal has parsed `chars` more characters of output. */
  ack(chars: number, consumerId: string = WINDOW_CONSUMER): void {
    if (consumerId === MIRROR_CONSUMER) return;
    this.flow.ack(consumerId, chars);
  }

  /** The screen and scrollback as escape sequences (what the mirror has parsed so far). */
  serialize(): string {
    return this.mirror.serialize();
  }

  /** Resolves once the mirror has parsed all output received so far; then serialize() is complete. */
  async flushMirror(): Promise<void> {
    this.batcher.flush();
    await this.mirror.drained();
  }

  screenLines(): Promise<string[]> {
    return this.mirror.drained().then(() => this.mirror.visibleLines());
  }

  /**
   * Ends the pane: SIGHUP to every process group of the pane's session, SIGTERM 150 ms later, SIGKILL
   * after 2 s for whatever remains. Resolves with the reported exit.
   */
  kill(): Promise<PtyExit> {
    if (!this.disposed && !this.ptyExit && !this.killing) {
      this.killing = true;
      // Keep reading while the processes die, or a paused pty would not see EOF and node-pty would wait
      // its 200 ms socket timeout. Memory stays bounded: onPtyData drops output past the high watermark.
      this.flow.release();
      this.killer.start();
    }
    return this.exited;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    // A live (or still dying) process group is ended as kill() ends it, HUP, TERM, then KILL, by a killer
    // that outlives the session: a process is not cut off in its clean-up because its pane went away.
    if (!this.ptyExit || this.killing) this.killer.finish();
    // The members and every timer (none may run for a disposed session). The slave goes too and, with
    // nobody left to read the tail, a held socket destroy runs now: node-pty then closes the pty and reports
    // the exit that `exited` waits for.
    this.disposables.dispose();
    this.dropNotices();
    this.exitTimer = undefined;
    this.drainTimer = undefined;
    if (this.ptyExit && !this.exitReported) this.resolveExited(this.ptyExit);
  }

  private onPtyData(chunk: string): void {
    if (this.disposed) return;
    this.lastOutput = this.now();
    if (this.flow.isReleased && this.flow.isOverHighWatermark) {
      this.droppedChars += chunk.length;
      return;
    }
    // Counted before anyone can ack it: an ack that overtook its delivery would be clamped away and the
    // backlog would never come back down.
    this.flow.onDelivered(chunk.length);
    this.reads++;
    this.sequences.feed(chunk);
    // The mirror is fed each read as it comes, not per 5 ms batch: batching exists to spare IPC messages,
    // and holding the mirror's input back would put 5 ms of idle into every pause/resume cycle (measured
    // with bench/ptyBench.ts: 11 MB/s batched vs 22-23 MB/s per read, against ~33 MB/s for parsing alone).
    this.mirror.write(chunk, () => this.flow.ack(MIRROR_CONSUMER, chunk.length));
    this.batcher.push(chunk);
    // Consumers can only ack what they were sent: a paused pane must not also sit out the batch delay.
    if (this.flow.isPaused) this.batcher.flush();
    if (this.ptyExit && !this.exitReported) this.armExitTimer();
    if (this.notices.length) void this.placeNotices();
  }

  /**
   * Draws the waiting notices once the mirror has parsed every read so far (so its screen is the one the
   * notice goes on) and nothing came meanwhile. A read that stopped inside a sequence, or a paused pty,
   * leaves them waiting: the next read (or the resume) tries again. Never more than one attempt at a time.
   */
  private async placeNotices(): Promise<void> {
    if (this.placing) {
      this.placeAgain = true;
      return;
    }
    this.placing = true;
    try {
      do {
        this.placeAgain = false;
        const reads = this.reads;
        await this.mirror.drained();
        if (this.disposed || this.ptyExit) return this.dropNotices();
        if (this.reads !== reads) {
          this.placeAgain = true;
          continue;
        }
        if (!this.notices.length || this.flow.isPaused || !this.sequences.atRest) return;
        const view = this.mirror.noticeView();
        const fresh = this.notices.filter((n) => !n.signalled);
        for (const n of fresh) n.signalled = true;
        const signals = fresh.map((n) => noticeSignal(n.text)).join('');
        if (!view) {
          // The alternate screen: the notification now, the line once the program leaves it.
          if (signals) this.writeOwn(signals);
          for (const n of fresh) n.shown();
          return;
        }
        const placed = this.notices.splice(0);
        this.writeOwn(noticeOutput(placed.map((n) => n.text), view) + signals);
        for (const n of placed) n.shown();
      } while (this.placeAgain);
    } finally {
      this.placing = false;
    }
  }

  private dropNotices(): void {
    for (const n of this.notices.splice(0)) n.shown();
  }

  /** Output of the host's own, down the path the pty's output takes: counted for flow control as the
   *  consumers will ack it, parsed by the mirror in order, and sent to the windows at once. */
  private writeOwn(data: string): void {
    this.flow.onDelivered(data.length);
    this.mirror.writeOwn(data, () => this.flow.ack(MIRROR_CONSUMER, data.length));
    this.batcher.push(data);
    this.batcher.flush();
  }

  /**
   * A prompt mark counts only while the pane's shell holds the terminal (shellForeground.ts), read as the
   * mark is parsed: a command that prints one while it runs holds the terminal itself. A real prompt's mark
   * passes, since the shell takes the terminal back before it draws the prompt. C, the command starts, is
   * taken as it comes: it can only make a pane look busy, and the shell prints it just before it hands the
   * terminal to the command, which may hold it by the time the mark is parsed.
   */
  private believed(sig: TerminalSignal): boolean {
    if (sig.kind !== 'prompt' || sig.mark === 'C' || !canTellShellForeground) return true;
    return shellHoldsTerminal(this.pid);
  }

  /** The child is gone: say so once, now, however much output is still to be read. */
  private markDead(): void {
    if (this.dead || this.disposed) return;
    this.dead = true;
    this.deathEmitter.fire();
  }

  /** The child is dead: once the pty has been quiet for a moment (and is not held paused by a consumer),
   *  everything it wrote has been read, and the slave can go. A paused pty keeps the slave until resumed or
   *  until node-pty's own 200 ms socket timeout ends the wait. */
  private armDrain(): void {
    if (this.disposed || !this.slave.isHeld) return;
    this.drainTimer?.dispose();
    this.drainTimer = this.disposables.timeout(() => {
      this.drainTimer = undefined;
      const quietFor = this.now() - this.lastOutput;
      if (!this.flow.isPaused && quietFor >= this.drainQuietMs) this.slave.release();
      else this.armDrain();
    }, this.drainQuietMs);
  }

  private onPtyExit(e: { exitCode: number; signal?: number }): void {
    if (this.ptyExit) return;
    // Where neither SIGCHLD nor the held destroy told us (no /proc, no slave), node-pty's exit is the news.
    this.markDead();
    this.childWatch.dispose();
    this.drainTimer?.dispose();
    this.drainTimer = undefined;
    this.slave.release();
    this.ptyExit = ptyExitOf(e);
    this.dropNotices();
    if (this.disposed) {
      this.resolveExited(this.ptyExit);
      return;
    }
    this.exitDeadline = this.now() + this.exitMaxWaitMs;
    this.armExitTimer();
  }

  /** (Re)starts the quiet period, never past the deadline. */
  private armExitTimer(): void {
    this.exitTimer?.dispose();
    const wait = Math.max(0, Math.min(this.exitQuietMs, this.exitDeadline - this.now()));
    this.exitTimer = this.disposables.timeout(() => {
      this.exitTimer = undefined;
      void this.reportExit();
    }, wait);
  }

  private async reportExit(): Promise<void> {
    if (this.exitReported || this.disposed || !this.ptyExit) return;
    this.batcher.end();
    const remaining = Math.max(0, this.exitDeadline - this.now());
    // The wait ends when the mirror has parsed everything, at the cap, or when the session is disposed
    // (a disposed mirror may never call back; the cap timer goes with the store).
    let cap: TimerHandle | undefined;
    let stop: { dispose(): void } | undefined;
    await Promise.race([
      this.mirror.drained(),
      new Promise<void>((resolve) => {
        cap = this.disposables.timeout(resolve, remaining);
        stop = this.disposables.add(toDisposable(resolve));
      }),
    ]);
    cap?.dispose();
    if (stop) this.disposables.delete(stop);
    if (this.exitReported || this.disposed) return;
    this.exitReported = true;
    const exit = this.ptyExit;
    this.exitEmitter.fire(exit);
    this.resolveExited(exit);
  }
}
