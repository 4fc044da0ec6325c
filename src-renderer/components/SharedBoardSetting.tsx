import { useEffect, useState } from 'react';
import type { BoardStoreView } from '../../src-shared/protocol/windowApi.js';
import { describeStore, readUrlField } from '../state/boardStoreField.js';
import { useApp, useController } from '../state/hooks.js';

/**
 * The Thread's board store, in the Thread settings panel: the journal (this computer only) or a PostgreSQL
 * board several hosts share. The URL field is write-only: it is a password field, emptied once sent, and the
 * host answers only "host/database, board NAME". A host started with `--board` fixes the store for every
 * Thread; then this only says so. Changing the store closes and reopens the Thread on the host (its agents
 * there stop), so the panel says that before the person saves.
 */
/**
 * Where the focus goes once the Thread shows the store it was changed to: what stands in place of the control
 * that had it. Kept outside the component: the Thread's reopen on its new board can draw these settings anew
 * (a busy machine showed the focus lost when it came after the first draw), and a new one must still know.
 */
let focusOnceShown: { testId: string; kind: BoardStoreView['kind'] } | null = null;

export function SharedBoardSetting() {
  const c = useController();
  const store = useApp((s) => s.boardStore);
  const [changing, setChanging] = useState(false);
  const [url, setUrl] = useState('');
  const [name, setName] = useState('');
  const [busy, setBusy] = useState<null | 'connecting' | 'journal'>(null);
  const [error, setError] = useState<{ field: 'url' | 'name' | 'store'; message: string } | null>(null);

  const onBoard = store?.kind === 'postgres';
  const fixed = store?.kind === 'postgres' && store.fixed;
  const showForm = !fixed && (!onBoard || changing);

  useEffect(() => {
    if (!focusOnceShown || store?.kind !== focusOnceShown.kind) return;
    const el = document.querySelector<HTMLElement>(`[data-testid="${focusOnceShown.testId}"]`);
    if (!el || (el as HTMLButtonElement).disabled) return;
    focusOnceShown = null;
    el.focus();
  });

  const save = async () => {
    const field = readUrlField(url, name);
    if (!field.ok) {
      setError({ field: field.field, message: field.error });
      document.querySelector<HTMLElement>(field.field === 'url' ? '[data-testid="board-url"]' : '[data-testid="board-name"]')?.focus();
      return;
    }
    setError(null);
    setBusy('connecting');
    const refused = await c.setBoard(field.url, field.name);
    setBusy(null);
    if (refused) {
      setError({ field: 'url', message: refused.message });
      return;
    }
    // Sent and kept by the host: the page holds no copy.
    setUrl('');
    setName('');
    setChanging(false);
    // The form that had the focus is gone: it goes to what now stands in its place.
    focusOnceShown = { testId: 'board-change', kind: 'postgres' };
  };

  const backToJournal = async () => {
    setError(null);
    setBusy('journal');
    const refused = await c.setBoard(null);
    setBusy(null);
    if (refused) setError({ field: 'store', message: refused.message });
    else focusOnceShown = { testId: 'board-url', kind: 'journal' };
  };

  const errorId = 'shared-board-error';
  return (
    <section className="shared-board" aria-labelledby="shared-board-title" data-testid="shared-board" aria-busy={busy !== null}>
      <h3 id="shared-board-title">Shared board</h3>
      <p className="shared-board-current" data-testid="shared-board-current">
        Board: {describeStore(store)}
        {store?.kind === 'postgres' && store.host && (
          <>
            {' '}
            <span data-testid="shared-board-host">
              (this host is “{store.host}” on it: the other hosts list its agents as “on {store.host}”)
            </span>
          </>
        )}
        {fixed && ' · set when this host started (--board or FORKBENCH_BOARD_URL); change it there'}
      </p>
      {onBoard && !fixed && !changing && (
        <div className="shared-board-actions">
          <button type="button" data-testid="board-change" disabled={busy !== null} onClick={() => (setError(null), setChanging(true))}>
            Change board…
          </button>
          <button type="button" data-testid="board-journal" disabled={busy !== null} onClick={() => void backToJournal()}>
            Use this computer only (journal)
          </button>
        </div>
      )}
      {showForm && (
        <form
          className="shared-board-form"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            if (busy === null) void save();
          }}
        >
          <label className="grow">
            PostgreSQL URL
            <input
              data-testid="board-url"
              // Write-only: shown as dots, never filled back in, not remembered by the browser.
              type="password"
              autoComplete="off"
              spellCheck={false}
              placeholder="postgres://user:password@host/database"
              value={url}
              disabled={busy !== null}
              aria-invalid={error?.field === 'url'}
              aria-describedby={error?.field === 'url' ? errorId : 'shared-board-hint'}
              onChange={(e) => {
                setUrl(e.target.value);
                if (error?.field === 'url') setError(null);
              }}
            />
          </label>
          <label title="Hosts that give the same name meet on one board; by default the folder’s git remote, else its name">
            Board name (optional)
            <input
              data-testid="board-name"
              placeholder="git remote or folder name"
              value={name}
              disabled={busy !== null}
              aria-invalid={error?.field === 'name'}
              aria-describedby={error?.field === 'name' ? errorId : undefined}
              onChange={(e) => {
                setName(e.target.value);
                if (error?.field === 'name') setError(null);
              }}
            />
          </label>
          <button type="submit" data-testid="board-save" disabled={busy !== null}>
            Save
          </button>
          {changing && (
            <button type="button" disabled={busy !== null} onClick={() => (setChanging(false), setUrl(''), setName(''), setError(null))}>
              Cancel
            </button>
          )}
          <span id="shared-board-hint" className="hint">
            Saving reopens the Thread on that board: this host’s agents in it stop and their claims end.
          </span>
        </form>
      )}
      <span role="status" aria-live="polite" data-testid="board-progress" className="hint">
        {busy === 'connecting' ? 'Connecting to the board…' : busy === 'journal' ? 'Going back to the journal…' : ''}
      </span>
      {error !== null && (
        <span id={errorId} className="field-error" role="alert" data-testid="board-error">
          {error.message}
        </span>
      )}
    </section>
  );
}
