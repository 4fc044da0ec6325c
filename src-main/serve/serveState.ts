import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../base/atomicWrite.js';
import type { SavedSession } from './serveSession.js';

/**
 * What `serve` keeps between runs in its data folder: the window's host name, the port it listened on and
 * the browsers' sessions (hashes only: ServeSessions). A restarted `serve` on the same data folder listens
 * at the same address and knows the sessions it gave out, so a page left open across the restart reconnects
 * by itself. The file is owner-only (0600), like the board.
 */
export interface ServeState {
  /** `forkbench-<32 hex>.localhost`: a name only this server answers to, so its cookie is sent nowhere else. */
  host: string;
  /** Where the last run listened, or null (none yet, or it was not recorded). */
  port: number | null;
  /** The browsers' sessions, valid on `port` only. */
  sessions: SavedSession[];
  /** Hashes of the link codes given out (ServeSessions.codes): a spent link is then said as spent, not unknown. */
  codes?: string[];
}

export const SERVE_STATE_FILE = 'serve.json';

/** 16 random bytes as hex: 128 bits, so no page can guess the name to have the browser send it its cookie. */
const HOST_BYTES = 16;
const HOST = /^forkbench-[0-9a-f]{32}\.localhost$/;
const HASH = /^[A-Za-z0-9_-]{43}$/;
/** Permission bits beyond the owner's: a file with any of these may have been read by someone else. */
const NOT_OWNER_ONLY = 0o077;

/** A new host name of the form HOST. Browsers resolve every `*.localhost` to loopback themselves (RFC 6761). */
export function newServeHost(): string {
  return `forkbench-${randomBytes(HOST_BYTES).toString('hex')}.localhost`;
}

export type LoadedServeState = ServeState & {
  /** Why the state was started afresh although a file was there (said to the person), or null. */
  replaced: string | null;
};

/**
 * The state of the last run in `dataRoot`, or a fresh one (written at once). A file that is not owner-only,
 * not the user's own, not a regular file or not readable as the state is replaced by a fresh one: sessions
 * that others could have read must not keep opening the window.
 */
export function loadServeState(dataRoot: string): LoadedServeState {
  const path = join(dataRoot, SERVE_STATE_FILE);
  let replaced: string | null = null;
  let port: number | null = null;
  try {
    const st = fs.lstatSync(path);
    if (!st.isFile()) replaced = `${path} is not a regular file`;
    else if ((st.mode & NOT_OWNER_ONLY) !== 0) replaced = `${path} was readable by others (mode ${(st.mode & 0o777).toString(8)})`;
    else if (typeof process.getuid === 'function' && st.uid !== process.getuid()) replaced = `${path} belongs to another user`;
    else {
      const parsed = readState(fs.readFileSync(path, 'utf8'));
      if (parsed && 'host' in parsed) return { ...parsed, replaced: null };
      // A file of an earlier version (a cookie token, no host name): its port is kept, its token opens nothing.
      if (parsed) port = parsed.port;
      else replaced = `${path} did not hold serve's state`;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') replaced = `${path} could not be read (${(err as Error).message})`;
  }
  const fresh: ServeState = { host: newServeHost(), port, sessions: [] };
  if (replaced) fs.rmSync(path, { force: true });
  saveServeState(dataRoot, fresh);
  return { ...fresh, replaced };
}

/** Record `state` owner-only; atomic, so a crash mid-write leaves the old state, not half of one. */
export function saveServeState(dataRoot: string, state: ServeState): void {
  fs.mkdirSync(dataRoot, { recursive: true, mode: 0o700 });
  writeFileAtomic(join(dataRoot, SERVE_STATE_FILE), `${JSON.stringify(state)}\n`, { mode: 0o600 });
}

const finite = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n);

/** The state in `text`; `{port}` alone for an earlier version's file; null if it is neither. */
function readState(text: string): ServeState | { port: number | null } | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  const o = v as { host?: unknown; token?: unknown; port?: unknown; sessions?: unknown; codes?: unknown } | null;
  if (!o || typeof o !== 'object') return null;
  const port = Number.isInteger(o.port) && (o.port as number) > 0 && (o.port as number) <= 65535 ? (o.port as number) : null;
  if (typeof o.host !== 'string') return typeof o.token === 'string' ? { port } : null;
  if (!HOST.test(o.host) || !Array.isArray(o.sessions)) return null;
  const sessions: SavedSession[] = [];
  for (const s of o.sessions as Array<Partial<SavedSession> | null>) {
    // A session that does not read is dropped, not the file: it only means one browser needs a new link.
    if (s && typeof s.hash === 'string' && HASH.test(s.hash) && finite(s.createdAt) && finite(s.lastUsedAt)) {
      sessions.push({ hash: s.hash, createdAt: s.createdAt, lastUsedAt: s.lastUsedAt });
    }
  }
  const codes = Array.isArray(o.codes) ? (o.codes as unknown[]).filter((c): c is string => typeof c === 'string' && HASH.test(c)) : [];
  return codes.length ? { host: o.host, port, sessions, codes } : { host: o.host, port, sessions };
}
