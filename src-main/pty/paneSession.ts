import type { Disposable } from '../../src-shared/lifecycle/emitter.js';
import type { PtyExit, PtySpawnOptions } from './ptySessionTypes.js';

/**
 * What the host's panes use of a terminal session: a PtySession in this process, or a RemotePty whose
 * PtySession lives in the pty host. The rest of the host cannot tell them apart.
 */
export interface PaneSession {
  readonly pid: number;
  /** performance.now() of the last output. */
  readonly lastOutputAt: number;
  readonly exit: PtyExit | undefined;
  readonly onData: (listener: (data: string) => void) => Disposable;
  readonly onDeath: (listener: () => void) => Disposable;
  readonly onExit: (listener: (exit: PtyExit) => void) => Disposable;
  /** Set when the process was lost without its death being watched (its pty host died): the board says the
   *  agent exited rather than the process-exited of a watched exit. */
  readonly lost?: boolean;
  write(data: string): void;
  asPaste(text: string): string;
  resize(cols: number, rows: number): void;
  attach(consumerId?: string): void;
  detach(consumerId?: string): void;
  ack(chars: number, consumerId?: string): void;
  flushMirror(): Promise<void>;
  serialize(): string;
  kill(): Promise<PtyExit>;
  dispose(): void;
}

/** Who the pane is, for a pty host that must hand it back after a board host restart. */
export interface PaneIdentity {
  threadKey: string;
  agentId: string;
  secret: string;
  socketPath: string;
  profile: string;
  name: string;
  command?: string;
}

export interface PtyFactory {
  spawn(command: string, args: readonly string[], options: PtySpawnOptions, who: PaneIdentity): Promise<PaneSession>;
}
