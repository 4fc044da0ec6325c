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
