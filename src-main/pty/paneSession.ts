import type { Containment } from '../../src-shared/agents/containment.js';
import type { Disposable } from '../../src-shared/lifecycle/emitter.js';
import type { TerminalSignal } from './headlessMirror.js';

/** What a pane is spawned with and what it reports, whichever session runs it. */

export interface PtySpawnOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  cols: number;
  rows: number;
  /** $TERM; defaults to xterm-256color. */
  name?: string;
  /** The command is the agent's sandbox (bwrap, --die-with-parent): its exit ends every process inside at
   *  once, so a kill signals it only after them (ProcessGroupKillerOptions.rootEndsAll). */
  contained?: boolean;
}

export interface PtyExit {
  exitCode: number;
  /** The signal number when the process was killed by a signal (node-pty then reports exitCode 0). */
  signal: number | undefined;
  /** 'SIGKILL', 'SIGHUP', ... when `signal` is set. */
  signalName: string | undefined;
}

export interface PtyFlowStats {
  paused: boolean;
  /** Worst backlog among consumers (mirror included), in chars. */
  maxUnackedChars: number;
  mirrorUnackedChars: number;
  /** Output waiting in the open batch (at most ~5 ms). */
  batchedChars: number;
  /** Output discarded while a kill was draining the pty past the high watermark. */
  droppedChars: number;
}

/**
 * What the host's panes use of a terminal session: a PtySession in this process, or a RemotePty whose
 * PtySession lives in the pty host. The rest of the host cannot tell them apart.
 */
export interface PaneSession {
  readonly pid: number;
  /** performance.now() of the last output. */
  readonly lastOutputAt: number;
  readonly exit: PtyExit | undefined;
  /** Resolves with the exit once reported. */
  readonly exited: Promise<PtyExit>;
  /** Flow control's state (for a remote pane: as of the last answer, a round trip old at most). */
  readonly flowStats: PtyFlowStats;
  readonly onData: (listener: (data: string) => void) => Disposable;
  readonly onDeath: (listener: () => void) => Disposable;
  readonly onExit: (listener: (exit: PtyExit) => void) => Disposable;
  /** What the program said to the terminal itself (notifications, the bell, titles, program status), as the
   *  pane's mirror parses it: the one mirror, wherever the pty lives. */
  readonly onSignal: (listener: (sig: TerminalSignal) => void) => Disposable;
  /** Set when the process was lost without its death being watched (its pty host died): the board says the
   *  agent exited rather than the process-exited of a watched exit. */
  readonly lost?: boolean;
  write(data: string): void;
  asPaste(text: string): string;
  /** A notice of the host's shown in the pane's output, never typed (paneNotice.ts); resolves once written
   *  (or the pane ended). */
  showNotice(text: string): Promise<void>;
  resize(cols: number, rows: number): void;
  attach(consumerId?: string): void;
  detach(consumerId?: string): void;
  ack(chars: number, consumerId?: string): void;
  flushMirror(): Promise<void>;
  /** The lines on the pane's screen (not the scrollback) once what it printed so far is parsed, as text
   *  without trailing blanks: what a screen matcher reads. */
  screenLines(): Promise<string[]>;
  serialize(): string;
  kill(): Promise<PtyExit>;
  dispose(): void;
  /** Stop hearing the pane and leave its process running (a board host that goes, keeping its agents);
   *  only a session kept elsewhere (the pty host's) has it. */
  release?(): void;
}

/** Who the pane is, for a pty host that must hand it back after a board host restart. */
export interface PaneIdentity {
  threadKey: string;
  agentId: string;
  /** SHA-256 of the agent's secret, in hex: enough for a board host to know the agent's calls again after
   *  a restart, and useless to a process that reads it (the pty host answers `list` with it). */
  secretDigest: string;
  socketPath: string;
  profile: string;
  name: string;
  command?: string;
  /** Whether its command runs in a sandbox (issue 43), as the board host started it: a board host that takes
   *  the pane back says what it was started with. Absent for a pane started by no Roster (a test's stand-in). */
  containment?: Containment;
}

export interface PtyFactory {
  spawn(command: string, args: readonly string[], options: PtySpawnOptions, who: PaneIdentity): Promise<PaneSession>;
}
