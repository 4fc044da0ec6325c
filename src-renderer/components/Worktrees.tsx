import { memo, useMemo, useState, type ReactNode } from 'react';
import type { OtherBoardFolder, WorktreeInfo } from '../../src-shared/protocol/windowApi.js';
import { formatCopyFiles } from '../state/gitSettingsFields.js';
import { canRemoveWorktree, worktreeStatus, worktreeStatusTitle } from '../state/worktreeStatus.js';
import { useApp, useController } from '../state/hooks.js';
import type { RemoveOutcome } from '../state/appState.js';
import { formatBytes, savedWorkOf, totalBytes, type SavedRow } from '../state/savedWork.js';
import { parkedBudgetBytesOf } from '../../src-shared/git/parkedWork.js';

/**
 * Whether this Thread's claims get worktrees. Without isolation agents work in the folder itself, unfenced by
 * git, so that is said in a banner rather than left for a person to find out from a clobbered file.
 */
export function GitStatus() {
  const git = useApp((s) => s.git);
  const copyFiles = useApp((s) => (s.boardVersion, s.board?.settings.copyFiles ?? null));
  const remote = useApp((s) => (s.boardVersion, s.board?.settings.remote ?? null));
  if (git && !git.isolated) {
    return (
      <div className="git-banner" role="status" data-testid="git-banner">
        <span className="grow">
          <strong>No worktree isolation:</strong> {git.reason}
          <span className="muted"> — agents work in this folder itself.</span>
        </span>
        <WorktreesToggle />
      </div>
    );
  }
  return (
    <div className="git-line">
      {git ? (
        <span data-testid="git-base" data-base={git.baseBranch} title={`Each claimed task gets a worktree of ${git.repoRoot} on its own branch`}>
          worktrees branch from <code>{git.baseBranch}</code>
          {remote ? (
            // On a board several machines share, the hosts meet at this remote: where each host's recorded
            // commits go, and where approval lands the base.
            <span data-testid="git-remote" title={`Recorded commits are pushed to ${remote.url} under refs/forkbench/tasks/; approval pushes ${git.baseBranch} there`}>
              {' '}
              on <code>{remote.name}</code> ({remote.url})
            </span>
          ) : null}
          {copyFiles && copyFiles.length > 0 ? <> · copying {formatCopyFiles(copyFiles)}</> : null}
        </span>
      ) : null}
      <WorktreesToggle />
    </div>
  );
}

function WorktreesToggle() {
  const c = useController();
  const open = useApp((s) => s.worktreesOpen);
  return (
    <button type="button" className="link" data-testid="worktrees-toggle" aria-expanded={open} onClick={() => c.worktrees.toggleWorktrees()}>
      {open ? 'Hide worktrees' : 'Worktrees'}
    </button>
  );
}

/**
 * This host's task worktrees of the board on screen, fetched while the panel is open; parked ones can be removed
 * here. Another host's are that host's to list. Folders another board of this Thread folder left here are listed
 * apart, below (OtherFolders).
 */
export function WorktreesPanel() {
  const c = useController();
  const open = useApp((s) => s.worktreesOpen);
  const list = useApp((s) => s.worktrees);
  const others = useApp((s) => s.otherFolders);
  if (!open) return null;
  return (
    <section className="worktrees" data-testid="worktrees-panel" aria-label="Worktrees">
      <header className="worktrees-head">
        <h2>
          Worktrees <span className="count">{list?.length ?? ''}</span>
        </h2>
        {list && list.length > 0 ? <DiskTotal list={list} /> : null}
        <span className="spacer" />
        <button type="button" onClick={() => void c.worktrees.refreshWorktrees()}>
          Refresh
        </button>
      </header>
      {list === null ? (
        <p className="muted worktrees-empty">Loading…</p>
      ) : list.length === 0 ? (
        <p className="muted worktrees-empty">No task worktrees. A claim gets one when the Thread's folder is a git repository.</p>
      ) : (
        <table className="worktree-table">
          <thead>
            <tr>
              <th>Task</th>
              <th>Branch</th>
              <th>Path</th>
              <th>State</th>
              <th className="num" title="Files changed but not committed">Uncommitted</th>
              <th className="num" title="Commits the base does not have">Ahead</th>
              <th className="num" title="What the folder takes on disk, measured off the host’s event loop and cached a minute">Disk</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {list.map((w) => (
              <WorktreeRow key={w.path} w={w} />
            ))}
          </tbody>
        </table>
      )}
      <SavedWorkList />
      {others && others.length > 0 ? <OtherFolders folders={others} /> : null}
    </section>
  );
}

/**
 * One folder's row, for this board's worktrees and other boards' folders alike: its cells, then one action (Remove,
 * Clear) that the host may answer with a question — what doing it would lose — asked in a row below until the
 * person says go on or keep it.
 */
const FolderRow = memo(function FolderRow({
  attrs,
  className,
  columns,
  cells,
  action,
}: {
  /** The row's data-* attributes (its test id among them). */
  attrs: Readonly<Record<string, string>>;
  className: string;
  /** The table's columns, the action's among them: the question below spans them all. */
  columns: number;
  cells: ReactNode;
  /** Absent: the folder may not be acted on now (a live claim works in it). */
  action?: { label: string; testid: string; forceLabel: string; forceTestid: string; keepTestid: string; run: (force: boolean) => Promise<RemoveOutcome> };
}) {
  /** The host's warning about what the action would lose, while the person decides. */
  const [confirm, setConfirm] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const act = async (force: boolean) => {
    if (!action) return;
    setBusy(true);
    const r = await action.run(force);
    setBusy(false);
    setConfirm(r.kind === 'confirm' ? r.message : null);
  };
  return (
    <>
      <tr className={`worktree-row ${className}`} {...attrs}>
        {cells}
        <td>
          {action && confirm === null && (
            <button type="button" className="bad" data-testid={action.testid} disabled={busy} onClick={() => void act(false)}>
              {action.label}
            </button>
          )}
        </td>
      </tr>
      {action && confirm !== null && (
        <AskRow columns={columns} message={confirm} yes={action.forceLabel} yesTestid={action.forceTestid} keepTestid={action.keepTestid} busy={busy} onYes={() => void act(true)} onKeep={() => setConfirm(null)} />
      )}
    </>
  );
});

/** The question under a row: what the act would lose, with going on and keeping it. Spans the whole table. */
function AskRow(p: { columns: number; message: string; yes: string; yesTestid: string; keepTestid: string; busy: boolean; onYes: () => void; onKeep: () => void }) {
  return (
    <tr className="worktree-confirm">
      <td colSpan={p.columns}>
        <span role="alert">{p.message}</span>
        <button type="button" className="bad" data-testid={p.yesTestid} disabled={p.busy} onClick={p.onYes}>
          {p.yes}
        </button>
        <button type="button" data-testid={p.keepTestid} disabled={p.busy} onClick={p.onKeep}>
          Keep it
        </button>
      </td>
    </tr>
  );
}

const WorktreeRow = memo(function WorktreeRow({ w }: { w: WorktreeInfo }) {
  const c = useController();
  const status = worktreeStatus(w);
  return (
    <FolderRow
      className={status}
      columns={8}
      attrs={{ 'data-testid': `worktree-row-${w.taskId}`, 'data-status': status }}
      cells={
        <>
          <td>
            <span className="card-id">{w.taskId}</span> {w.title}
          </td>
          <td>
            <code>{w.branch}</code>
          </td>
          <td className="worktree-path" title={w.path}>
            <code>{w.path}</code>
          </td>
          <td>
            <span className={`worktree-status ${status}`} title={worktreeStatusTitle(w)} data-testid={`worktree-status-${w.taskId}`}>
              {status === 'cleaned' ? (w.cleaned?.savedAs ? 'cleaned, work saved' : 'cleaned, nothing to save') : status}
            </span>
          </td>
          <td className={w.uncommitted > 0 ? 'num warn' : 'num'}>{w.uncommitted}</td>
          <td className="num">{w.ahead}</td>
          <td className="num" data-testid={`worktree-bytes-${w.taskId}`}>
            {formatBytes(w.bytes ?? 0)}
          </td>
        </>
      }
      {...(canRemoveWorktree(w)
        ? {
            action: {
              label: 'Remove',
              testid: `worktree-remove-${w.taskId}`,
              forceLabel: 'Remove anyway',
              forceTestid: `worktree-force-${w.taskId}`,
              keepTestid: `worktree-keep-${w.taskId}`,
              run: (force: boolean) => c.worktrees.removeWorktree(w.taskId, force),
            },
          }
        : {})}
    />
  );
});

/** Whose a folder of another board is, as a person reads it. */
function boardOf(f: OtherBoardFolder): string {
  if (f.thisBoard) return 'this board, never recorded (a grant cut short)';
  return f.board ? `board ${f.board}` : 'from before boards were named';
}

/**
 * Claim folders in this host's data folder for the Thread that the board on screen does not record: another
 * board's of the same folder (the local board, after the Thread moved onto a shared one). They are nobody's work
 * here, so they are never shown as this board's; a person may clear them (their branches stay).
 */
function OtherFolders({ folders }: { folders: readonly OtherBoardFolder[] }) {
  return (
    <div className="other-folders" data-testid="other-folders">
      <h3>
        Folders of other boards <span className="count">{folders.length}</span>
      </h3>
      <p className="muted other-folders-why">
        Left in this Thread's data folder on this host by another board of this folder, or from before boards were named. This board does not use them; clearing one
        removes its files and keeps its branch.
      </p>
      <table className="worktree-table">
        <thead>
          <tr>
            <th>Task</th>
            <th>Board</th>
            <th>Branch</th>
            <th>Path</th>
            <th className="num" title="Files changed but not committed">Uncommitted</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {folders.map((f) => (
            <OtherFolderRow key={f.path} f={f} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

const OtherFolderRow = memo(function OtherFolderRow({ f }: { f: OtherBoardFolder }) {
  const c = useController();
  const loses = f.uncommitted === null || f.uncommitted > 0 || f.unreachable;
  return (
    <FolderRow
      className="other-folder"
      columns={6}
      attrs={{ 'data-testid': 'other-folder-row', 'data-path': f.path, 'data-board': f.board ?? '' }}
      cells={
        <>
          <td>
            <span className="card-id">{f.taskId}</span> <span className="muted">claim {f.token}</span>
          </td>
          <td>{boardOf(f)}</td>
          <td>{f.branch ? <code>{f.branch}</code> : <span className="muted">{f.unreachable ? 'detached, on no branch' : 'detached'}</span>}</td>
          <td className="worktree-path" title={f.path}>
            <code>{f.path}</code>
          </td>
          <td className={loses ? 'num warn' : 'num'}>{f.uncommitted ?? '?'}</td>
        </>
      }
      action={{
        label: 'Clear',
        testid: 'other-folder-clear',
        forceLabel: 'Clear anyway',
        forceTestid: 'other-folder-force',
        keepTestid: 'other-folder-keep',
        run: (force) => c.worktrees.clearFolder(f.path, force),
      }}
    />
  );
});

/** The disk every listed folder takes, beside the budget past which the oldest parked folders are saved and
 *  removed without waiting out their grace (Thread settings). */
function DiskTotal({ list }: { list: readonly WorktreeInfo[] }) {
  const budget = useApp((s) => (s.boardVersion, s.board ? parkedBudgetBytesOf(s.board.settings) : null));
  const total = totalBytes(list);
  return (
    <span className="muted worktrees-disk" data-testid="worktrees-disk" data-bytes={total}>
      {formatBytes(total)} on disk{budget !== null ? <> · parked folders budget {formatBytes(budget)}</> : null}
    </span>
  );
}

/**
 * Work that parked folders held uncommitted, saved under refs/forkbench/parked/ before the folders were removed
 * (issue 47 item 5). Restore puts one back into a new folder of the person's; Delete asks first, then removes
 * its ref (what it holds is then gone).
 */
function SavedWorkList() {
  // The board's task map changes in place (boardVersion says when): the version is what the list follows.
  const version = useApp((s) => s.boardVersion);
  const board = useApp((s) => s.board);
  const rows = useMemo(() => savedWorkOf(board), [board, version]);
  if (rows.length === 0) return null;
  return (
    <div className="saved-work" data-testid="saved-work">
      <h3>
        Saved parked work <span className="count">{rows.length}</span>
      </h3>
      <p className="muted other-folders-why">
        Uncommitted work of folders removed after their grace, kept as commits under <code>refs/forkbench/parked/</code>.
      </p>
      <table className="worktree-table">
        <thead>
          <tr>
            <th>Task</th>
            <th>Saved as</th>
            <th>By</th>
            <th className="num" title="Files changed, added or deleted">Files</th>
            <th>When</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {rows.map((w) => (
            <SavedWorkRow key={w.ref} w={w} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

const SavedWorkRow = memo(function SavedWorkRow({ w }: { w: SavedRow }) {
  const c = useController();
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [restored, setRestored] = useState<string | null>(null);
  const restore = async () => {
    setBusy(true);
    setRestored(await c.worktrees.restoreSaved(w.taskId, w.ref));
    setBusy(false);
  };
  const remove = async () => {
    setBusy(true);
    await c.worktrees.deleteSaved(w.taskId, w.ref);
    setBusy(false);
    setAsking(false);
  };
  return (
    <>
      <tr className="worktree-row saved" data-testid="saved-work-row" data-ref={w.ref}>
        <td>
          <span className="card-id">{w.taskId}</span> {w.title} <span className="muted">claim {w.token}</span>
        </td>
        <td className="worktree-path" title={`${w.ref} (${w.sha}), from ${w.path}`}>
          <code>{w.ref}</code>
        </td>
        <td>{w.author}</td>
        <td className="num">{w.files}</td>
        <td>{new Date(w.at).toLocaleString()}</td>
        <td>
          {!asking && (
            <>
              <button type="button" data-testid="saved-work-restore" disabled={busy} onClick={() => void restore()}>
                Restore
              </button>
              <button type="button" className="bad" data-testid="saved-work-delete" disabled={busy} onClick={() => setAsking(true)}>
                Delete
              </button>
            </>
          )}
        </td>
      </tr>
      {restored !== null && (
        <tr className="worktree-confirm">
          <td colSpan={6} role="status" data-testid="saved-work-restored">
            Restored into <code>{restored}</code> (a folder of yours: remove it when done).
          </td>
        </tr>
      )}
      {asking && (
        <AskRow
          columns={6}
          message={`Delete ${w.ref}? The ${w.files} file${w.files === 1 ? '' : 's'} it saved are then gone for good.`}
          yes="Delete it"
          yesTestid="saved-work-delete-yes"
          keepTestid="saved-work-keep"
          busy={busy}
          onYes={() => void remove()}
          onKeep={() => setAsking(false)}
        />
      )}
    </>
  );
});
