import { constants as osConstants } from 'node:os';
import type { FlowControlLimits } from './flowControl.js';
import type { ListProcesses } from './processGroupKiller.js';
import type { Timers } from '../base/timers.js';

/** What a pane is spawned with and what it reports: the shapes callers of PtySession use. */

export interface PtySpawnOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  cols: number;
  rows: number;
  /** $TERM; defaults to xterm-256color. */
  name?: string;
}

export interface PtyExit {
  exitCode: number;
  /** The signal number when the process was killed by a signal (node-pty then reports exitCode 0). */
  signal: number | undefined;
  /** 'SIGKILL', 'SIGHUP', ... when `signal` is set. */
  signalName: string | undefined;
}

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

const signalNames = new Map<number, string>(Object.entries(osConstants.signals).map(([name, n]) => [n, name]));

/** node-pty's exit as the session reports it: a signal of 0 is none, and a signal gets its name. */
export function ptyExitOf(e: { exitCode: number; signal?: number }): PtyExit {
  const signal = e.signal ? e.signal : undefined;
  return { exitCode: e.exitCode, signal, signalName: signal === undefined ? undefined : signalNames.get(signal) };
}
