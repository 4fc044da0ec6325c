import { dirname } from 'node:path';
import type { FenceHooks } from './fenceHooks.js';
import { git } from './git.js';
import type { TaskRepo } from './taskRepo.js';

/**
 * The Thread's own folder fenced for agents: its main worktree's `core.hooksPath` (its own config.worktree,
 * which only git commands in that folder read) points at a hook folder that refuses commits and branch
 * moves from agent panes and passes a person's through to the repository's own hooks. Undone on close.
 */
export class ThreadFolderFence {
  private fenced = false;
  /** A setting of the person's own at this scope, given back on close. */
  private before: string | null = null;

  constructor(
    private readonly r: TaskRepo,
    private readonly hooks: FenceHooks,
  ) {}

  async fence(): Promise<void> {
    await this.r.enableWorktreeConfig();
    const dir = this.hooks.installThread(this.r.folder);
    const root = this.r.repo.root;
    const before = (await git(root, ['config', '--worktree', '--get', 'core.hooksPath'], { allowFail: true })).stdout.trim();
    // One left by a killed host is not the person's.
    this.before = before && !before.startsWith(dirname(dir)) ? before : null;
    await git(root, ['config', '--worktree', 'core.hooksPath', dir]);
    this.fenced = true;
  }

  async unfence(): Promise<void> {
    if (!this.fenced) return;
    this.fenced = false;
    const root = this.r.repo.root;
    if (this.before) await git(root, ['config', '--worktree', 'core.hooksPath', this.before], { allowFail: true });
    else await git(root, ['config', '--worktree', '--unset', 'core.hooksPath'], { allowFail: true });
  }
}
