import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PaneIdentity } from '../pty/paneSession.js';
import type { PtyExit, PtyFlowStats } from '../pty/ptySessionTypes.js';

/**
 * What the board host and its pty host say to each other (control frames; pty data goes as binary frames,
 * see frames.ts). Bumped on any change of these shapes: a pty host of another protocol is refused.
 */
export const PTY_HOST_PROTOCOL = 1;

/** What the board host needs to take a pane back after a restart: the agent it is, as the board knows it
 *  (its PaneIdentity), and the folder it runs in. Held by the pty host in memory only; the secret is never
 *  written to disk. */
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
  /** Milliseconds since its last output, so the board host's liveness clock can carry on. */
  quietForMs: number;
  bracketedPaste: boolean;
}

export interface SpawnParams {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  cols: number;
  rows: number;
  meta: PaneMeta;
}

export interface PtyHostMethods {
  hello: { params: { version: string; protocol: number }; result: { version: string; protocol: number; pid: number } };
  spawn: { params: SpawnParams; result: { pane: number; pid: number } };
  list: { params: Record<string, never>; result: PaneListing[] };
  resize: { params: { pane: number; cols: number; rows: number }; result: null };
  attach: { params: { pane: number; consumer: string }; result: null };
  detach: { params: { pane: number; consumer: string }; result: null };
  screen: { params: { pane: number }; result: { text: string; bracketedPaste: boolean } };
  kill: { params: { pane: number }; result: PtyExit };
  stats: { params: { pane: number }; result: PtyFlowStats };
  /** Kill now (if alive) and forget the pane. */
  dispose: { params: { pane: number }; result: null };
  /** End every pane and exit: the board host stops and takes its agents with it. */
  shutdown: { params: Record<string, never>; result: null };
}
export type PtyHostMethod = keyof PtyHostMethods;

export type ClientMessage =
  | { t: 'req'; id: number; m: PtyHostMethod; p: unknown }
  /** Fire and forget: acks are frequent and nobody waits on them. */
  | { t: 'ack'; pane: number; consumer: string; chars: number };

export type HostMessage =
  | { t: 'res'; id: number; ok: true; v: unknown }
  | { t: 'res'; id: number; ok: false; error: string }
  | { t: 'death'; pane: number }
  | { t: 'exit'; pane: number; exit: PtyExit }
  | { t: 'paste-mode'; pane: number; on: boolean };

/** The pty host's folder and socket inside a data folder. */
export function ptyHostPaths(dataRoot: string): { dir: string; socket: string; log: string } {
  const dir = join(dataRoot, 'ptyhost');
  return { dir, socket: join(dir, 'pty.sock'), log: join(dir, 'ptyhost.log') };
}

let version: string | null = null;
/** This Forkbench's version (package.json), which a pty host must share with its board host. */
export function forkbenchVersion(): string {
  if (version !== null) return version;
  // From src-main/ptyhost (tsx) or dist-main/src-main/ptyhost (built): walk up to our package.json.
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(fs.readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'forkbench' && typeof pkg.version === 'string') return (version = pkg.version);
    } catch {
      // not here; go up
    }
  }
  return (version = 'unknown');
}
