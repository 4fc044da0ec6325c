import { useState } from 'react';
import { Limits } from '../../src-shared/board/limits.js';
import { formatCopyFiles, parseBaseBranch, parseCopyFiles } from '../state/gitSettingsFields.js';
import { useApp, useController } from '../state/hooks.js';
import { useCommands } from './useCommands.js';

const NONE: readonly string[] = [];

const seconds = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`);

/**
 * The Thread's lease length, verify command and worktree settings. Shown as one line; a click opens a small
 * form. The host validates the bounds and names (the same schema as every other caller) and a refusal shows
 * in the error banner.
 */
export function ThreadSettings() {
  const c = useController();
  const leaseMs = useApp((s) => s.leaseMs);
  const verify = useApp((s) => (s.boardVersion, s.board?.settings.verify ?? null));
  const baseBranch = useApp((s) => (s.boardVersion, s.board?.settings.baseBranch ?? null));
  const copyFiles = useApp((s) => (s.boardVersion, s.board?.settings.copyFiles ?? NONE));
  /** The folder's current branch, as the host reported it, to say what an empty "Base branch" means. */
  const current = useApp((s) => (s.git?.isolated && s.board?.settings.baseBranch == null ? s.git.baseBranch : null));
  const [open, setOpen] = useState(false);
  const [lease, setLease] = useState('');
  const [cmd, setCmd] = useState('');
  const [base, setBase] = useState('');
  const [copy, setCopy] = useState('');

  const start = () => {
    setLease(String(Math.round(leaseMs / 1000)));
    setCmd(verify ?? '');
    setBase(baseBranch ?? '');
    setCopy(formatCopyFiles(copyFiles));
    setOpen(true);
  };
  useCommands(() => [{ id: 'thread-settings', title: 'Open Thread settings', group: 'Board', keywords: 'lease verify base branch worktrees copy', run: start }]);
  const save = async () => {
    const s = Number(lease);
    if (!Number.isFinite(s)) return;
    const patch: Parameters<typeof c.actions.setSettings>[0] = { leaseMs: Math.round(s * 1000), verify: cmd.trim() ? cmd.trim() : null };
    // The worktree fields go only when changed: a new base branch is a real change (the git line is read
    // again), and a host without git support need not see them at all.
    const nextBase = parseBaseBranch(base);
    if (nextBase !== baseBranch) patch.baseBranch = nextBase;
    const nextCopy = parseCopyFiles(copy);
    if (formatCopyFiles(nextCopy) !== formatCopyFiles(copyFiles)) patch.copyFiles = nextCopy;
    const ok = await c.actions.setSettings(patch);
    if (ok) close();
  };
  /** Closed, the focus goes back to the line that opened the form. */
  const close = () => {
    setOpen(false);
    requestAnimationFrame(() => document.querySelector<HTMLElement>('[data-testid="thread-settings"]')?.focus());
  };

  if (!open) {
    return (
      <button type="button" className="thread-settings link" data-testid="thread-settings" onClick={start} title="Change the lease and the verify command">
        lease {seconds(leaseMs)} · verify: {verify ? <code>{verify}</code> : 'none (done waits for review)'}
      </button>
    );
  }
  return (
    <form
      className="thread-settings editing"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.preventDefault();
          close();
        }
      }}
    >
      <label>
        Lease (s)
        <input
          data-testid="settings-lease"
          type="number"
          min={Limits.minLeaseMs / 1000}
          max={Limits.maxLeaseMs / 1000}
          value={lease}
          onChange={(e) => setLease(e.target.value)}
        />
      </label>
      <label className="grow">
        Verify command
        <input data-testid="settings-verify" placeholder="e.g. npm test (empty: a person reviews)" value={cmd} onChange={(e) => setCmd(e.target.value)} />
      </label>
      <label title="The branch task worktrees start from and are merged back into">
        Base branch
        <input
          data-testid="settings-base-branch"
          placeholder={current ? `current branch (${current})` : 'current branch'}
          value={base}
          onChange={(e) => setBase(e.target.value)}
        />
      </label>
      <label className="grow" title="Files git does not track, copied into each new worktree">
        Copy into worktrees
        <input data-testid="settings-copy-files" placeholder="e.g. .env, config/local.json" value={copy} onChange={(e) => setCopy(e.target.value)} />
      </label>
      <button type="submit" data-testid="settings-save">
        Save
      </button>
      <button type="button" onClick={close}>
        Cancel
      </button>
    </form>
  );
}
