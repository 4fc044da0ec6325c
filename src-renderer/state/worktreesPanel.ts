import type { StoreApi } from 'zustand/vanilla';
import type { TaskDiff, WindowError } from '../../src-shared/protocol/windowApi.js';
import type { AppState, RemoveOutcome } from './appState.js';
import { valueOf, type CallHost } from './hostCall.js';

/** The review dialog and the worktrees panel of the Thread on screen. */
export class WorktreesPanel {
  /** The worktree list being fetched; `again` asks for one more fetch after it, for events that came meanwhile. */
  private worktreeFetch: { key: string; again: boolean } | null = null;

  constructor(
    private readonly store: StoreApi<AppState>,
    private readonly call: CallHost,
  ) {}

  private get state(): AppState {
    return this.store.getState();
  }

  openReview(taskId: string): void {
    this.store.setState({ reviewTaskId: taskId });
  }

  closeReview(): void {
    this.store.setState({ reviewTaskId: null });
  }

  /** A task branch's work against its base; null (and the reason in the banner) when the host cannot tell. */
  async taskDiff(taskId: string): Promise<TaskDiff | null> {
    const key = this.state.activeKey;
    if (!key) return null;
    return valueOf(await this.call('task.diff', { key, taskId }, `show the diff of ${taskId}`));
  }

  toggleWorktrees(): void {
    const open = !this.state.worktreesOpen;
    this.store.setState({ worktreesOpen: open });
    if (open) void this.refreshWorktrees();
  }

  /**
   * Fetch the worktree list. Board events come in bursts (an approval is `approved`, `claim-ended` and
   * `worktree-removed` at once), so a call made while a fetch runs only asks for one more after it.
   */
  async refreshWorktrees(): Promise<void> {
    const key = this.state.activeKey;
    if (!key) return;
    if (this.worktreeFetch?.key === key) {
      this.worktreeFetch.again = true;
      return;
    }
    const mine = { key, again: true };
    this.worktreeFetch = mine;
    try {
      while (mine.again) {
        mine.again = false;
        const [listed, others] = await Promise.all([
          this.call('worktree.list', { key }, 'list the worktrees'),
          this.call('worktree.others', { key }, 'list the folders of other boards'),
        ]);
        const list = valueOf(listed);
        if (!list || this.state.activeKey !== key) return;
        this.store.setState({ worktrees: list, otherFolders: valueOf(others) ?? [] });
      }
    } finally {
      if (this.worktreeFetch === mine) this.worktreeFetch = null;
    }
  }

  /**
   * Remove a parked worktree. Without `force` the host keeps one holding uncommitted changes or unmerged
   * commits and says so (`uncommitted`): that is a question for the person, not an error, so it comes back
   * as `confirm` with the host's message instead of going to the banner.
   */
  async removeWorktree(taskId: string, force: boolean): Promise<RemoveOutcome> {
    const key = this.state.activeKey;
    if (!key) return { kind: 'failed' };
    const asksFirst = (e: WindowError) => e.code === 'uncommitted' && !force;
    const r = await this.call('worktree.remove', { key, taskId, force }, `remove the worktree of ${taskId}`, { handled: asksFirst });
    if (!r.ok) return asksFirst(r.error) ? { kind: 'confirm', message: r.error.message } : { kind: 'failed' };
    // The `worktree-removed` event refreshes the list too, but it may have come before this answer.
    await this.refreshWorktrees();
    return { kind: 'removed' };
  }

  /** A parked folder's saved work put back into a new folder (the host answers with where); null if refused. */
  async restoreSaved(taskId: string, ref: string): Promise<string | null> {
    const key = this.state.activeKey;
    if (!key) return null;
    const r = valueOf(await this.call('worktree.restoreSaved', { key, taskId, ref }, `restore ${taskId}'s saved work`));
    return r?.path ?? null;
  }

  /** A saved work deleted, once the person said yes (the panel asks first). The board's event updates the list. */
  async deleteSaved(taskId: string, ref: string): Promise<boolean> {
    const key = this.state.activeKey;
    if (!key) return false;
    return (await this.call('worktree.deleteSaved', { key, taskId, ref }, `delete ${taskId}'s saved work`)).ok;
  }

  /**
   * Clear a folder of another board (worktree.others): its files and git's note of it, never its branch. As
   * with a worktree, one whose removal would lose something comes back as `confirm` with the host's words.
   */
  async clearFolder(path: string, force: boolean): Promise<RemoveOutcome> {
    const key = this.state.activeKey;
    if (!key) return { kind: 'failed' };
    const asksFirst = (e: WindowError) => e.code === 'uncommitted' && !force;
    const r = await this.call('worktree.clear', { key, path, force }, `clear the folder ${path}`, { handled: asksFirst });
    if (!r.ok) return asksFirst(r.error) ? { kind: 'confirm', message: r.error.message } : { kind: 'failed' };
    // No board event says so: this board never recorded the folder.
    await this.refreshWorktrees();
    return { kind: 'removed' };
  }
}
