import { Refusal, type Handlers } from '../base/procedureServer.js';
import { PtySession } from '../pty/ptySession.js';
import type { PtyExit } from '../pty/paneSession.js';
import { controlFrame, dataFrame } from './frames.js';
import { recordedPane, writePaneRecord } from './paneRecord.js';
import type { HostMessage, ptyHostMethods, SpawnParams } from './ptyHostMethods.js';
import type { PaneEnded, PaneListing, PaneMeta } from './protocol.js';

interface HostedPane {
  pane: number;
  session: PtySession;
  meta: PaneMeta;
  cols: number;
  rows: number;
  dead: boolean;
  exit: PtyExit | null;
  /** When it ended and whether a board host heard of it then: recorded as it happens, read after a restart. */
  ended: PaneEnded | null;
  pasteMode: boolean;
  /** Window consumers the connected board host attached, so they go when it does. */
  consumers: Set<string>;
  recorded: ReturnType<typeof recordedPane>;
}

/** A consumer id of the board host's, as the session knows it: never the mirror's. */
const consumerKey = (c: string) => `w:${c}`;

/** The methods that act on panes; the pty host's own (hello, shutdown) are the server's. */
export type PaneHandlers = Omit<Handlers<typeof ptyHostMethods, void>, 'hello' | 'prove' | 'shutdown'>;

/**
 * The agents' PtySessions, as the pty host holds them (pty, mirror, exit watcher), and the methods that act
 * on them. Every handler gets params the procedure edge already validated against ptyHostMethods, so no
 * size, name or argument reaches a PtySession or node-pty unchecked.
 */
export class HostedPanes {
  private readonly panes = new Map<number, HostedPane>();
  private nextPane = 1;

  constructor(
    private readonly o: {
      /** Reaches the connected board host, if any: pane output and pane events go nowhere without one. */
      send: (frame: Buffer) => void;
      /** Whether a board host is connected now: one that is hears of a pane's end as it happens. */
      connected: () => boolean;
      /** Where the panes' processes are recorded (paneRecord.ts). */
      recordPath: string;
      log?: (line: string) => void;
    },
  ) {}

  get size(): number {
    return this.panes.size;
  }

  /** Each pane's root process: it leads its pane's session and process group. */
  rootPids(): number[] {
    return [...this.panes.values()].map((h) => h.session.pid);
  }

  /** The board host typed into a pane (a data frame); a pane that is gone takes nothing. */
  write(pane: number, data: string): void {
    this.panes.get(pane)?.session.write(data);
  }

  ack(pane: number, consumer: string, chars: number): void {
    this.panes.get(pane)?.session.ack(chars, consumerKey(consumer));
  }

  /** Windows of a board host that is gone must not hold any pty paused. */
  detachConsumers(): void {
    for (const p of this.panes.values()) {
      for (const c of p.consumers) p.session.detach(consumerKey(c));
      p.consumers.clear();
    }
  }

  /** End every agent cleanly (SIGHUP, then TERM, then KILL to each process group) and forget them. The
   *  record is left as it was: the pty host removes it as it stops, and a pid in it that outlives this is
   *  no longer the process it names (its start time differs), so no sweep can signal it. */
  async endAll(): Promise<void> {
    await Promise.all([...this.panes.values()].map((h) => h.session.kill().catch(() => undefined)));
    for (const h of this.panes.values()) h.session.dispose();
    this.panes.clear();
  }

  readonly handlers: PaneHandlers = {
    spawn: (p) => this.spawn(p),
    list: () => [...this.panes.values()].map((h) => this.listing(h)),
    resize: ({ pane, cols, rows }) => {
      const h = this.get(pane);
      h.session.resize(cols, rows);
      h.cols = cols;
      h.rows = rows;
      return null;
    },
    attach: ({ pane, consumer }) => {
      const h = this.get(pane);
      h.session.attach(consumerKey(consumer));
      h.consumers.add(consumer);
      return null;
    },
    detach: ({ pane, consumer }) => {
      const h = this.get(pane);
      h.session.detach(consumerKey(consumer));
      h.consumers.delete(consumer);
      return null;
    },
    lines: ({ pane }) => this.get(pane).session.screenLines(),
    screen: async ({ pane }) => {
      const h = this.get(pane);
      await h.session.flushMirror();
      return { text: h.session.serialize(), bracketedPaste: h.session.asPaste('') !== '' };
    },
    notice: async ({ pane, text }) => {
      await this.get(pane).session.showNotice(text);
      return null;
    },
    kill: ({ pane }) => this.get(pane).session.kill(),
    stats: ({ pane }) => this.get(pane).session.flowStats,
    dispose: ({ pane }) => {
      const h = this.panes.get(pane);
      if (h) this.forget(h);
      return null;
    },
  };

  private get(pane: number): HostedPane {
    const hosted = this.panes.get(pane);
    if (!hosted) throw new Refusal('no-such-pane', `no pane ${pane}`);
    return hosted;
  }

  private event(message: HostMessage): void {
    this.o.send(controlFrame(message));
  }

  /** Rewritten as panes come and go; a record that cannot be written costs only the sweep after our death. */
  private record(): void {
    try {
      writePaneRecord(this.o.recordPath, [...this.panes.values()].map((h) => h.recorded));
    } catch (err) {
      this.o.log?.(`could not record the panes' processes in ${this.o.recordPath}: ${(err as Error).message}`);
    }
  }

  private spawn(p: SpawnParams): { pane: number; pid: number } {
    let session: PtySession;
    try {
      session = PtySession.spawn(p.command, p.args, { cwd: p.cwd, env: p.env, cols: p.cols, rows: p.rows, contained: p.contained });
    } catch (err) {
      throw new Refusal('spawn-failed', `could not start ${p.command}: ${(err as Error).message}`);
    }
    const pane = this.nextPane++;
    const h: HostedPane = { pane, session, meta: p.meta, cols: p.cols, rows: p.rows, dead: false, exit: null, ended: null, pasteMode: false, consumers: new Set(), recorded: recordedPane(session.pid, session.rootStartTicks) };
    this.panes.set(pane, h);
    this.record();
    session.onData((data) => {
      this.o.send(dataFrame(pane, data));
      // The typist wraps its messages in bracketed paste when the program asked for it: tell the board host
      // when that changes (rarely: a TUI's start and end), not per chunk.
      const on = session.asPaste('') !== '';
      if (on !== h.pasteMode) {
        h.pasteMode = on;
        this.event({ t: 'paste-mode', pane, on });
      }
    });
    this.signalsOf(h);
    session.onDeath(() => {
      this.ends(h);
      h.dead = true;
      this.event({ t: 'death', pane });
    });
    session.onExit((exit) => {
      this.ends(h);
      h.dead = true;
      h.exit = exit;
      // The log is the record of what happened to the agents while no board host listened.
      this.o.log?.(`pane ${pane} (${p.meta.name}, pid ${session.pid}) ended: ${exit.signalName ?? `exit ${exit.exitCode}`}`);
      this.event({ t: 'exit', pane, exit });
    });
    this.o.log?.(`started pane ${pane} (${p.meta.name}, pid ${session.pid})`);
    return { pane, pid: session.pid };
  }

  /**
   * The pane's terminal signals, as its mirror parses them, to the board host as small control frames: it
   * reads the agent's state from them and keeps no mirror of its own. A signal said again within one parse
   * pass (a bell flood, a title set over and over in one write) is one frame: the same word said twice at
   * once says nothing more, and a frame per bell would cost the wire ~40 bytes for each byte of output.
   */
  private signalsOf(h: HostedPane): void {
    let last: string | null = null;
    h.session.onSignal((sig) => {
      const key = JSON.stringify(sig);
      if (key === last) return;
      if (last === null) queueMicrotask(() => (last = null));
      last = key;
      this.event({ t: 'signal', pane: h.pane, sig });
    });
  }

  /** Its end, noted at the first word of it (death, or an exit that came alone): the time, and whether the
   *  board host that will hear of it is there to. */
  private ends(h: HostedPane): void {
    h.ended ??= { at: Date.now(), watched: this.o.connected() };
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
      ended: h.ended,
      quietForMs: Math.max(0, performance.now() - h.session.lastOutputAt),
      bracketedPaste: h.pasteMode,
    };
  }

  private forget(h: HostedPane): void {
    this.panes.delete(h.pane);
    h.session.dispose();
    this.record();
  }
}
