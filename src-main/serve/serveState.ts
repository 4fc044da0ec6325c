import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../base/atomicWrite.js';

/**
 * What `serve` keeps between runs in its data folder: the window's credential and the port it listened on.
 * A restarted `serve` on the same data folder listens where it did and accepts the cookie it gave out, so
 * a page left open across the restart reconnects by itself. The file is owner-only (0600), like the board:
 * whoever can read it can drive the window, exactly as whoever can read the board can read the work.
 */
export interface ServeState {
  token: string;
  /** Where the last run listened, or null (none yet, or it was not recorded). */
  port: number | null;
}

export const SERVE_STATE_FILE = 'serve.json';

/** 32 random bytes as base64url (43 characters), as ServeSession makes its secrets. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
/** Permission bits beyond the owner's: a file with any of these may have been read by someone else. */
const NOT_OWNER_ONLY = 0o077;

export type LoadedServeState = ServeState & {
  /** Why a new token was made although a file was there (said to the person), or null. */
  replaced: string | null;
};

/**
 * The state of the last run in `dataRoot`, or a fresh one (written at once). A file that is not owner-only,
 * not the user's own, not a regular file or not readable as the state is replaced by a new token: an old
 * token that others could read must not keep opening the window.
 */
export function loadServeState(dataRoot: string): LoadedServeState {
  const path = join(dataRoot, SERVE_STATE_FILE);
  let replaced: string | null = null;
  try {
    const st = fs.lstatSync(path);
    if (!st.isFile()) replaced = `${path} is not a regular file`;
    else if ((st.mode & NOT_OWNER_ONLY) !== 0) replaced = `${path} was readable by others (mode ${(st.mode & 0o777).toString(8)})`;
    else if (typeof process.getuid === 'function' && st.uid !== process.getuid()) replaced = `${path} belongs to another user`;
    else {
      const parsed = readState(fs.readFileSync(path, 'utf8'));
      if (parsed) return { ...parsed, replaced: null };
      replaced = `${path} did not hold a serve token`;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') replaced = `${path} could not be read (${(err as Error).message})`;
  }
  const fresh: ServeState = { token: randomBytes(32).toString('base64url'), port: null };
  if (replaced) fs.rmSync(path, { force: true });
  saveServeState(dataRoot, fresh);
  return { ...fresh, replaced };
}

/** Record `state` owner-only; atomic, so a crash mid-write leaves the old token, not half of one. */
export function saveServeState(dataRoot: string, state: ServeState): void {
  fs.mkdirSync(dataRoot, { recursive: true, mode: 0o700 });
  writeFileAtomic(join(dataRoot, SERVE_STATE_FILE), `${JSON.stringify(state)}\n`, { mode: 0o600 });
}

function readState(text: string): ServeState | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  const o = v as { token?: unknown; port?: unknown } | null;
  if (!o || typeof o.token !== 'string' || !TOKEN.test(o.token)) return null;
  const port = Number.isInteger(o.port) && (o.port as number) > 0 && (o.port as number) <= 65535 ? (o.port as number) : null;
  return { token: o.token, port };
}
