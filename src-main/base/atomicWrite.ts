import * as fs from 'node:fs';
import { dirname } from 'node:path';

export interface AtomicWriteOptions {
  /** Permission bits of the new file: the rename keeps the temp file's, so they are set when it is made. */
  mode?: number;
  /** Also fsync the data before the rename and the folder after it, so the new content (and its name)
   *  survives a power cut, not only a crash of this process. Costs ~2 ms a file here, which files written
   *  by the dozen and rewritten at every start (hook wrappers, the CLI shim) do without. */
  durable?: boolean;
}

/** A new name per write: two writes of one file from this process never share a temp file. */
let seq = 0;

/**
 * Replace `path` with `data` so a reader sees the old content or the new, never part of either: write a
 * temp file in the same folder (a rename is atomic only within one file system), then rename it over.
 * A failed write removes its temp file and leaves `path` as it was.
 */
export function writeFileAtomic(path: string, data: string, options: AtomicWriteOptions = {}): void {
  const tmp = `${path}.${process.pid}.${++seq}.tmp`;
  // Owner-only unless asked: most of what is written this way (board, claims, locks) is nobody else's.
  const fd = fs.openSync(tmp, 'w', options.mode ?? 0o600);
  try {
    try {
      fs.writeFileSync(fd, data);
      if (options.durable) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, path);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  if (options.durable) fsyncDir(dirname(path));
}

/** Make a folder's entries (a new or renamed name in it) durable. */
export function fsyncDir(dir: string): void {
  const dfd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(dfd);
  } finally {
    fs.closeSync(dfd);
  }
}
