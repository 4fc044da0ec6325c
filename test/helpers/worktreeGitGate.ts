import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { gitSync } from './gitFixture.js';

/**
 * Holds a grant's `git worktree add` open in flight, with no hook (the host's git runs none): the add makes
 * its folder's first ref update in a child git whose git dir is the new folder's admin folder
 * (`.git/worktrees/T-n-k`), while that folder's HEAD is still git's null id. The repository's config includes
 * a fifo for git dirs under `.git/worktrees/` only (includeIf gitdir), so that child waits at its start,
 * reading its config, until the gate is let go; then the fifo is a plain empty file, and no git waits again.
 */
export class WorktreeGitGate {
  private readonly fifo: string;
  private readonly key: string;
  private held: number | null = null;
  private open = false;

  /** `scope`: 'worktrees' holds only gits whose git dir is a worktree's admin folder; 'repository' holds every
   *  git run in the repository (its config includes the fifo), e.g. the host's move of the base. */
  constructor(
    private readonly folder: string,
    dir: string,
    scope: 'worktrees' | 'repository' = 'worktrees',
  ) {
    this.fifo = join(dir, 'gate.fifo');
    const common = gitSync(folder, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
    this.key = scope === 'worktrees' ? `includeIf.gitdir:${join(common, 'worktrees')}/.path` : 'include.path';
  }

  /** From now on, the next git started in a worktree's git dir waits at its start. */
  arm(): void {
    execFileSync('mkfifo', [this.fifo]);
    gitSync(this.folder, ['config', this.key, this.fifo]);
    this.open = true;
  }

  /** Whether a git waits at the gate now (a writer's open succeeds only with a reader waiting). */
  entered(): boolean {
    if (this.held !== null) return true;
    try {
      this.held = fs.openSync(this.fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
      return true;
    } catch {
      return false;
    }
  }

  /** Let the waiting git go on (it reads an empty include), and no later one wait. */
  release(): void {
    if (!this.open) return;
    this.open = false;
    // A reader waiting on the fifo's open (also one that came after the last `entered`) is let go by a writer.
    const fd = this.held ?? openIfWaiting(this.fifo);
    const plain = `${this.fifo}.plain`;
    fs.writeFileSync(plain, '');
    fs.renameSync(plain, this.fifo);
    if (fd !== null) fs.closeSync(fd);
    this.held = null;
    gitSync(this.folder, ['config', '--unset', this.key]);
  }
}

function openIfWaiting(path: string): number | null {
  try {
    return fs.openSync(path, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
}
