import { useEffect, useRef } from 'react';
import { createStore, useStore } from 'zustand';
import { useReturnFocus } from './returnFocus.js';

interface ConfirmRequest {
  title: string;
  body: string;
  /** The button that does it, named for what it does ("Close shell 1"), never just "OK". */
  confirmLabel: string;
  /** `bad` for a loss (ending an agent), `good` for a step forward (approving). */
  tone: 'bad' | 'good';
  resolve: (yes: boolean) => void;
}

const confirmStore = createStore<{ request: ConfirmRequest | null }>(() => ({ request: null }));

/**
 * Ask before a click loses work (ending a running agent, say). In-page, not `window.confirm`: Electron has
 * none, and a page's own dialog can say what is at stake and name its button. Cancel has the focus, so an
 * Enter pressed out of habit keeps the work; Escape or a click outside cancels. The focus goes back to where
 * the person was.
 */
export function askConfirm(title: string, body: string, confirmLabel: string, tone: 'bad' | 'good' = 'bad'): Promise<boolean> {
  return new Promise((resolve) => {
    confirmStore.getState().request?.resolve(false);
    confirmStore.setState({ request: { title, body, confirmLabel, tone, resolve } });
  });
}

export function ConfirmHost() {
  const request = useStore(confirmStore, (s) => s.request);
  const cancel = useRef<HTMLButtonElement>(null);
  const focus = useReturnFocus();
  useEffect(() => {
    if (!request) return;
    focus.remember();
    cancel.current?.focus();
  }, [request, focus]);
  if (!request) return null;
  const finish = (yes: boolean) => {
    confirmStore.setState({ request: null });
    request.resolve(yes);
    focus.restore();
  };
  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && finish(false)}>
      <div
        className="modal"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="confirm-title"
        aria-describedby="confirm-body"
        data-testid="confirm-dialog"
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            finish(false);
          } else if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
            // Two buttons: either arrow moves to the other one.
            const buttons = [...e.currentTarget.querySelectorAll('button')];
            const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
            buttons[(at + 1) % buttons.length]?.focus();
          }
        }}
      >
        <div className="modal-title" id="confirm-title">
          {request.title}
        </div>
        <p className="confirm-body" id="confirm-body" data-testid="confirm-body">
          {request.body}
        </p>
        <div className="modal-buttons">
          <button type="button" ref={cancel} data-testid="confirm-cancel" onClick={() => finish(false)}>
            Cancel
          </button>
          <button type="button" className={request.tone} data-testid="confirm-ok" onClick={() => finish(true)}>
            {request.confirmLabel}
          </button>
        </div>
      </div>
    </div>
  );
}
