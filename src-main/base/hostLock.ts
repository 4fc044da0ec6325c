import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from './atomicWrite.js';
import { readStartTicks } from './procStat.js';

/** What a lock file says about the host that holds it. */
export interface LockHolder {
  pid: number;
  /** The kernel's start time of that pid (clock ticks since boot, /proc/<pid>/stat field 22), or null where
   *  /proc is missing. With it a pid reused by another process after a crash does not look like the holder. */
  startTime: string | null;
  /** Where the holder can be reached (serve's URL); null while it is still starting, or for Electron. */
  url: string | null;
  kind: string;
}

export type LockResult = { ok: true; lock: HostLock } | { ok: false; holder: LockHolder };

/** Start time of a pid from /proc, or null when there is no such process or no /proc (not Linux). */
export function processStartTime(pid: number): string | null {
  // Kept as text in the lock file, as it always was: a lock written by an earlier version still compares.
  const ticks = readStartTicks(pid);
  return ticks === undefined ? null : String(ticks);
}

/** Whether the process that wrote `holder` still runs: the pid answers signal 0 and, where /proc tells, it
 *  started at the recorded time (else the pid was reused and the holder is gone). */
export function holderAlive(holder: LockHolder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (holder.startTime === null) return true;
  const now = processStartTime(holder.pid);
  // No /proc entry for a pid that answers signal 0: nothing to compare, so it counts as alive.
  return now === null || now === holder.startTime;
}

function parseHolder(text: string): LockHolder | null {
  try {
    const v = JSON.parse(text) as Partial<LockHolder>;
    if (typeof v.pid !== 'number' || !Number.isInteger(v.pid) || v.pid <= 0) return null;
    return { pid: v.pid, startTime: typeof v.startTime === 'string' ? v.startTime : null, url: typeof v.url === 'string' ? v.url : null, kind: typeof v.kind === 'string' ? v.kind : 'host' };
  } catch {
    return null;
  }
}

let tmpSeq = 0;
const tmpName = (path: string, tag: string) => `${path}.${tag}-${process.pid}-${++tmpSeq}`;

/** Write `text` to a fresh file beside `path` (so a reader never sees half a lock) and return its name. */
function writeTemp(path: string, text: string): string {
  const tmp = tmpName(path, 'new');
  fs.writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' });
  return tmp;
}

/**
 * One host per folder: a lock file holding the owner's pid, its start time and its URL. It is created
 * whole with link(2), which fails if the name exists, so of two hosts starting at once exactly one wins. A
 * lock whose owner is dead (kill -9, crash, a pid since reused) is taken over: it is first renamed away,
 * which only one taker can do, and put back if what was renamed turns out to be a live host's fresh lock.
 * Node has no flock(2); this needs no dependency and survives the same faults.
 */
export class HostLock {
  private released = false;

  private constructor(
    readonly path: string,
    private holder: LockHolder,
  ) {}

  /** Throws (with the OS code) only when the folder cannot hold a lock at all: read-only, not ours. */
  static acquire(path: string, info: { kind: string; url?: string | null }): LockResult {
    fs.mkdirSync(dirname(path), { recursive: true });
    const me: LockHolder = { pid: process.pid, startTime: processStartTime(process.pid), url: info.url ?? null, kind: info.kind };
    // A few rounds: each lost round means another host changed the lock between our reads.
    for (let round = 0; round < 5; round++) {
      const tmp = writeTemp(path, JSON.stringify(me));
      try {
        fs.linkSync(tmp, path);
        return { ok: true, lock: new HostLock(path, me) };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      } finally {
        fs.rmSync(tmp, { force: true });
      }
      const text = readOrNull(path);
      if (text === null) continue; // released between our link and our read
      const holder = parseHolder(text);
      if (holder && holderAlive(holder)) return { ok: false, holder };
      // Dead owner, or a file that is no lock (half-written by a very old crash): take it over.
      const aside = tmpName(path, 'stale');
      try {
        fs.renameSync(path, aside);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // another taker moved it first
        throw err;
      }
      const moved = readOrNull(aside);
      if (moved !== null && moved !== text) {
        // Not the stale lock we judged: another host took it over and wrote its own in between. Put it back.
        try {
          fs.linkSync(aside, path);
        } catch {
          // a third host holds the name now; the next round reads it
        }
      }
      fs.rmSync(aside, { force: true });
    }
    const text = readOrNull(path);
    const holder = text === null ? null : parseHolder(text);
    if (holder) return { ok: false, holder };
    throw new Error(`${path} keeps changing; is another Forkbench starting right now?`);
  }

  /** Record where this host can be reached (once serve listens), so a second start can point to it. */
  setUrl(url: string): void {
    if (this.released) return;
    this.holder = { ...this.holder, url };
    writeFileAtomic(this.path, JSON.stringify(this.holder));
  }

  /** Remove the lock if it is still ours (a host that outlived a takeover must not delete the new owner's). */
  release(): void {
    if (this.released) return;
    this.released = true;
    const text = readOrNull(this.path);
    const holder = text === null ? null : parseHolder(text);
    if (holder && holder.pid === this.holder.pid && holder.startTime === this.holder.startTime) fs.rmSync(this.path, { force: true });
  }
}

function readOrNull(path: string): string | null {
  try {
    return fs.readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** The data folder's lock file. */
export const dataLockPath = (dataRoot: string) => join(dataRoot, 'host.lock');

/** Who holds a lock, said for a person. */
export function describeHolder(h: LockHolder): string {
  return h.url ? `${h.kind} (pid ${h.pid}) at ${h.url}` : `${h.kind} (pid ${h.pid})`;
}
