import * as fs from 'node:fs';
import { join } from 'node:path';

/** What a 512-byte block is: `st_blocks` counts them whatever the filesystem's own block size. */
const BLOCK_BYTES = 512;
/** Entries stat'ed at once: enough to keep the disk busy, few enough not to run out of file handles. */
const STATS_AT_ONCE = 64;

/**
 * The bytes a folder takes on disk (allocated blocks, not file lengths: a sparse file counts what it uses),
 * every file under it, symlinks not followed. Asynchronous: a checkout of 100,000 files takes a while, and the
 * host's event loop (leases, panes) must not wait on it. A file that vanishes while it is read counts nothing:
 * the folders measured are parked, but a stale agent may still be writing in one.
 */
export async function diskUse(path: string): Promise<number> {
  let total = 0;
  const dirs = [path];
  while (dirs.length) {
    const dir = dirs.pop() as string;
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (let i = 0; i < entries.length; i += STATS_AT_ONCE) {
      const sizes = await Promise.all(
        entries.slice(i, i + STATS_AT_ONCE).map(async (e) => {
          const p = join(dir, e.name);
          if (e.isDirectory()) dirs.push(p);
          return fs.promises.lstat(p).then(
            (st) => st.blocks * BLOCK_BYTES,
            () => 0,
          );
        }),
      );
      for (const n of sizes) total += n;
    }
  }
  return total;
}

export const DiskUseConstants = {
  /** How long a folder's measure is trusted: a minute, against a parked folder's grace of minutes and sweeps
   *  that come with every claim's end. A checkout of 100,000 files takes seconds to walk; the panel's list and
   *  every sweep would otherwise walk every folder again each time. */
  ttlMs: 60_000,
} as const;

/**
 * Folders' disk use, measured off the event loop (diskUse) and trusted for DiskUseConstants.ttlMs: the one way
 * the host measures a claim folder, for the Worktrees panel's list and the parked folders' disk budget alike.
 * Two callers asking for the same folder while it is being walked share the one walk.
 */
export class DiskUseCache {
  private readonly known = new Map<string, { bytes: number; at: number }>();
  private readonly walking = new Map<string, Promise<number>>();

  constructor(
    private readonly clock: { now(): number },
    private readonly measure: (path: string) => Promise<number> = diskUse,
  ) {}

  /** The folder's bytes on disk, as measured within the last DiskUseConstants.ttlMs. */
  of(path: string): Promise<number> {
    const now = this.clock.now();
    // Entries past their time are dropped as any is read: the map holds no more than the folders listed lately.
    for (const [p, k] of this.known) if (now - k.at >= DiskUseConstants.ttlMs) this.known.delete(p);
    const known = this.known.get(path);
    if (known) return Promise.resolve(known.bytes);
    const walking = this.walking.get(path);
    if (walking) return walking;
    const walk = this.measure(path).then(
      (bytes) => {
        // A folder forgotten while it was walked keeps no measure of what it was.
        if (this.walking.get(path) === walk) this.known.set(path, { bytes, at: now });
        if (this.walking.get(path) === walk) this.walking.delete(path);
        return bytes;
      },
      (err: unknown) => {
        if (this.walking.get(path) === walk) this.walking.delete(path);
        throw err;
      },
    );
    this.walking.set(path, walk);
    return walk;
  }

  /** A folder that is gone (or changed by the host itself): its next measure walks it again. */
  forget(path: string): void {
    this.known.delete(path);
    this.walking.delete(path);
  }
}
