import * as fs from 'node:fs';
import { join } from 'node:path';

/** What a 512-byte block is: `st_blocks` counts them whatever the filesystem's own block size. */
const BLOCK_BYTES = 512;

/**
 * The bytes a folder takes on disk (allocated blocks, not file lengths: a sparse file counts what it uses),
 * every file under it, symlinks not followed. A file that vanishes while it is read counts nothing: the
 * folders measured are parked, but a stale agent may still be writing in one.
 */
export function diskUse(path: string): number {
  let total = 0;
  const stack = [path];
  while (stack.length) {
    const dir = stack.pop() as string;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) stack.push(p);
      try {
        const st = fs.lstatSync(p);
        total += st.blocks * BLOCK_BYTES;
      } catch {
        // gone meanwhile
      }
    }
  }
  return total;
}
