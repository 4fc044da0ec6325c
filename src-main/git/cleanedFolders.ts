import * as fs from 'node:fs';
import { basename, join } from 'node:path';
import { writeFileAtomic } from '../base/atomicWrite.js';

/**
 * The claim folders this host's parked clean-up removed (issue 47 item 5), one small file each, kept while the
 * board still names the folder. The latest folder of a task nobody holds goes with the board keeping its record,
 * so the board alone cannot tell a folder the host cleaned (nothing lost: its work saved, or none to save) from
 * one a person deleted by hand (whatever was uncommitted there is gone). The Worktrees panel and the next grant's
 * note read this to say which, and never tell a person work is missing when it is not.
 *
 * ParkedWork alone writes it: a folder is marked before it is moved into the trash and unmarked if it is put
 * back. A mark only ever speaks for a folder that is absent, so a kill -9 between the mark and the move (the
 * folder still there) says nothing false.
 */
export class CleanedFolders {
  constructor(
    /** This board's marks, in the Thread's data folder on this host (its folders are this host's). */
    readonly dir: string,
  ) {}

  /** Folder paths end in the grant's token (boardNames.ts), unique on the board: the file is named for it and
   *  holds the whole path, which a read checks. */
  private fileOf(path: string): string {
    return join(this.dir, basename(path));
  }

  mark(path: string): void {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeFileAtomic(this.fileOf(path), path, { mode: 0o600 });
  }

  unmark(path: string): void {
    if (this.has(path)) fs.rmSync(this.fileOf(path), { force: true });
  }

  /** Whether the host removed the folder at `path` in a clean-up. */
  has(path: string): boolean {
    try {
      return fs.readFileSync(this.fileOf(path), 'utf8') === path;
    } catch {
      return false;
    }
  }

  /** Marks of folders the board no longer names are dropped: the marks stay as few as the board's folders. */
  keepOnly(named: ReadonlySet<string>): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return;
    }
    for (const name of names) {
      const file = join(this.dir, name);
      let path: string | null = null;
      try {
        path = fs.readFileSync(file, 'utf8');
      } catch {
        // a temporary file of a write cut short, or gone meanwhile: dropped below
      }
      if (path === null || !named.has(path)) fs.rmSync(file, { force: true });
    }
  }
}
