import { useEffect, useRef, useState } from 'react';
import type { BoardStoreView } from '../../src-shared/protocol/windowApi.js';
import { carryText } from '../../src-shared/board/boardCarry.js';
import { describeStore, readUrlField } from '../state/boardStoreField.js';
import { useApp, useController } from '../state/hooks.js';
import { useReturnFocus } from './returnFocus.js';

type Move = 'copy' | 'empty';

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
  // Leaving a local board with tasks: the person is asked what happens to them before anything is sent.
  const [asking, setAsking] = useState<{ tasks: number; resolve: (m: Move | null) => void } | null>(null);
  const localTasks = useApp((s) => (s.boardStore?.kind === 'postgres' ? 0 : (s.board?.tasks.size ?? 0)));
  const ask = (tasks: number) => new Promise<Move | null>((resolve) => setAsking({ tasks, resolve }));

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
    let move: Move | undefined;
    if (localTasks > 0) {
      const chosen = await ask(localTasks);
      // Cancel: nothing was sent, nothing changes.
      if (chosen === null) return;
      move = chosen;
    }
    setBusy('connecting');
    let refused = await c.setBoard(field.url, field.name, move);
    if (refused?.code === 'move-needed' && move === undefined) {
      // The local board gained tasks since this window drew it (an agent added one): asked now.
      setBusy(null);
      const chosen = await ask(Number(/has (\d+) task/.exec(refused.message)?.[1] ?? 1));
      if (chosen === null) return;
      setBusy('connecting');
      refused = await c.setBoard(field.url, field.name, chosen);
    }
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
            Saving reopens the Thread on that board: this host’s agents in it stop and their claims end.{' '}
            {localTasks > 0 && `You are asked first what happens to the ${localTasks} task${localTasks === 1 ? '' : 's'} on this computer.`}
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
      <CarriedIds />
      {asking && (
        <MoveDialog
          tasks={asking.tasks}
          onChoose={(m) => {
            setAsking(null);
            asking.resolve(m);
          }}
        />
      )}
    </section>
  );
}

/**
 * What moving onto the shared board does with the local board's tasks (issue 45): copy them there, or start
 * there empty and keep the local board for a switch back, or cancel. Cancel has the focus, so an Enter pressed
 * out of habit changes nothing; Escape or a click outside cancels too.
 */
function MoveDialog({ tasks, onChoose }: { tasks: number; onChoose: (m: Move | null) => void }) {
  const cancel = useRef<HTMLButtonElement>(null);
  const focus = useReturnFocus();
  useEffect(() => {
    focus.remember();
    cancel.current?.focus();
    return () => void focus.restore();
  }, [focus]);
  const n = `${tasks} task${tasks === 1 ? '' : 's'}`;
  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onChoose(null)}>
      <div
        className="modal board-move"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="board-move-title"
        aria-describedby="board-move-body"
        data-testid="board-move-dialog"
        onKeyDown={(e) => {
          if (e.key !== 'Escape') return;
          e.preventDefault();
          e.stopPropagation();
          onChoose(null);
        }}
      >
        <div className="modal-title" id="board-move-title">
          Move this Thread onto the shared board?
        </div>
        <div id="board-move-body" data-testid="board-move-body">
          <p>
            The Thread’s board on this computer holds {n}, with their notes, dependencies and states, its goal and its settings (the verify command
            too). Saving reopens the Thread on the shared board: this host’s agents in it stop and their claims end.
          </p>
          <ul>
            <li>
              <strong>Copy</strong>: the {n} go onto the shared board as they are, under new ids if it has tasks already (you are shown which). A
              task copied before is not copied again.
            </li>
            <li>
              <strong>Start empty</strong>: the Thread opens on the shared board as it is. The board on this computer is kept and comes back whole
              with “Use this computer only”.
            </li>
          </ul>
        </div>
        <div className="modal-buttons">
          <button type="button" ref={cancel} data-testid="board-move-cancel" onClick={() => onChoose(null)}>
            Cancel
          </button>
          <button type="button" data-testid="board-move-empty" onClick={() => onChoose('empty')}>
            Start empty, keep the local board
          </button>
          <button type="button" className="good" data-testid="board-move-copy" onClick={() => onChoose('copy')}>
            Copy {n} onto the shared board
          </button>
        </div>
      </div>
    </div>
  );
}

/** What the last move of this Thread copied: each old id and its id on the shared board. */
function CarriedIds() {
  const carried = useApp((s) => (s.boardCarried && s.boardCarried.key === s.activeKey ? s.boardCarried.outcome : null));
  if (!carried) return null;
  const pairs = [...carried.copied, ...carried.already];
  return (
    <div className="board-carried" data-testid="board-carried">
      <p data-testid="board-carried-summary">{carryText(carried)}.</p>
      {pairs.length > 0 && (
        <details>
          <summary>Old id → id on this board ({pairs.length})</summary>
          <ul className="carried-map" data-testid="carried-map">
            {pairs.map(([from, to]) => (
              <li key={from} data-testid={`carried-${from}`}>
                {from} → {to}
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}
