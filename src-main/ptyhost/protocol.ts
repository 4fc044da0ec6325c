import { dirname, join } from 'node:path';
import { forkbenchPackage } from '../base/packageRoot.js';
import type { PaneIdentity } from '../pty/paneSession.js';
import type { PtyExit } from '../pty/paneSession.js';

/**
 * What the board host and its pty host say to each other (control frames, ptyHostMethods.ts; pty data goes
 * as binary frames, see frames.ts). Bumped on any change of these shapes: a pty host of another protocol is
 * refused. (An answer's optional `code` and the checks of every field added none: a peer that sent what
 * the shapes say is served as before.) 2: the pane's terminal signals (`signal`) and its screen's lines
 * (`lines`), read off the pty host's mirror, so the board host keeps none of its own. 3: a greeting is
 * adopted only by its ancestry or the adoption key's proof (`prove`); panes carry their secret's digest.
 * 4: notices shown in a pane's output (`notice`). 5: a pane's identity carries its containment (issue 43), so a
 * board host that takes it back tells the window what it runs in. 6: a dead pane's listing says when it ended and
 * whether a board host was connected then (issue 45), so the next one tells "killed while its host ran" from
 * "ended while no host ran" instead of guessing.
 */
export const PTY_HOST_PROTOCOL = 6;

/** What the board host needs to take a pane back after a restart: the agent it is, as the board knows it
 *  (its PaneIdentity), and the folder it runs in. Held by the pty host in memory only; it holds no secret. */
export interface PaneMeta extends PaneIdentity {
  cwd: string;
}

export interface PaneListing {
  pane: number;
  pid: number;
  meta: PaneMeta;
  cols: number;
  rows: number;
  /** The child is dead (its exit may still be draining). */
  dead: boolean;
  exit: PtyExit | null;
  /** When its process ended (wall clock, ms) and whether a board host was connected then, which heard of it
   *  as it happened and recorded its cause; null while it runs. */
  ended: PaneEnded | null;
  /** Milliseconds since its last output, so the board host's liveness clock can carry on. */
  quietForMs: number;
  bracketedPaste: boolean;
}

/** A pane's end as the pty host saw it happen. */
export interface PaneEnded {
  at: number;
  watched: boolean;
}

/** The methods and messages themselves, each with its schema: ptyHostMethods.ts. */
export type { ClientMessage, HostMessage, PtyHostMethod, PtyHostMethods, SpawnParams } from './ptyHostMethods.js';

/** The pty host's folder and socket inside a data folder, its log, and the record of its panes' processes
 *  (paneRecord.ts), which is always beside the socket. */
export function ptyHostPaths(dataRoot: string): { dir: string; socket: string; log: string } {
  const dir = join(dataRoot, 'ptyhost');
  return { dir, socket: join(dir, 'pty.sock'), log: join(dir, 'ptyhost.log') };
}

export const paneRecordBeside = (socketPath: string): string => join(dirname(socketPath), 'panes.json');

let version: string | null = null;
/** This Forkbench's version (package.json), which a pty host must share with its board host. */
export function forkbenchVersion(): string {
  if (version !== null) return version;
  return (version = forkbenchPackage()?.version ?? 'unknown');
}

/**
 * The name (comm, 15 characters at most) of the process that holds a pty host's panes as a subreaper
 * (ptyHostLauncher.ts): a process an agent started stays below it even after a double fork and setsid,
 * which would otherwise leave it with no pane in its ancestry (agents/peerCredentials.ts).
 */
export const PANE_REAPER_NAME = 'forkbench-panes';
