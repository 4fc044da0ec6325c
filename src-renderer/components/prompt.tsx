import { useEffect, useRef, useState } from 'react';
import { createStore, useStore } from 'zustand';
import { limitState, TEXT_LIMITS, type TextLimit } from '../state/textLimit.js';
import { CharCount, LimitReason } from './CharCount.js';
import { useReturnFocus } from './returnFocus.js';

interface PromptRequest {
  title: string;
  initial: string;
  limit: TextLimit;
  resolve: (value: string | null) => void;
}

const promptStore = createStore<{ request: PromptRequest | null }>(() => ({ request: null }));

/**
 * Ask a person for a line of text (a block or reject reason), in an in-page dialog that shows the text's
 * limit as it is typed and will not send more than the board takes. Not `window.prompt`: it cannot show a
 * limit, Electron has none, and it stops the page (pushes, terminals) while it is open. Resolves to null
 * when cancelled.
 */
export function askText(title: string, initial = '', limit: TextLimit = TEXT_LIMITS.reason): Promise<string | null> {
  return new Promise((resolve) => {
    promptStore.getState().request?.resolve(null);
    promptStore.setState({ request: { title, initial, limit, resolve } });
  });
}

/** The dialog askText opens. The focus goes back to where the person was when it closes. */
export function PromptHost() {
  const request = useStore(promptStore, (s) => s.request);
  const [value, setValue] = useState('');
  const input = useRef<HTMLInputElement>(null);
  const focus = useReturnFocus();
  useEffect(() => {
    if (request) {
      focus.remember();
      setValue(request.initial);
      queueMicrotask(() => input.current?.focus());
    }
  }, [request, focus]);
  if (!request) return null;
  const limit = limitState(value, request.limit);
  const finish = (v: string | null) => {
    promptStore.setState({ request: null });
    request.resolve(v);
    focus.restore();
  };
  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && finish(null)}>
      <form
        className="modal"
        role="dialog"
        aria-modal="true"
        aria-label={request.title}
        data-testid="prompt-dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (limit.over === null && limit.missing === null) finish(value);
        }}
      >
        <label className="modal-title" htmlFor="prompt-input">
          {request.title}
        </label>
        <input
          id="prompt-input"
          ref={input}
          data-testid="prompt-input"
          value={value}
          onChange={(e) => setValue(e.target.value)}
          aria-invalid={limit.over !== null}
          aria-describedby="prompt-limit prompt-missing"
          aria-required={request.limit.required !== undefined}
          onKeyDown={(e) => {
            if (e.key !== 'Escape') return;
            // Only this dialog closes: not the review dialog or details panel under it.
            e.preventDefault();
            e.stopPropagation();
            finish(null);
          }}
        />
        <div className="limit-line">
          <CharCount state={limit} testId="prompt-count" />
        </div>
        <div id="prompt-limit">
          <LimitReason reason={limit.over} testId="prompt-limit" />
        </div>
        {/* Said from the start, not as an alert: nothing went wrong yet, the field only may not stay blank. */}
        {limit.missing !== null && (
          <p className="muted prompt-missing" id="prompt-missing" data-testid="prompt-missing">
            {limit.missing}
          </p>
        )}
        <div className="modal-buttons">
          <button type="button" data-testid="prompt-cancel" onClick={() => finish(null)}>
            Cancel
          </button>
          <button type="submit" data-testid="prompt-ok" className="primary" disabled={limit.over !== null || limit.missing !== null} title={limit.over ?? limit.missing ?? undefined}>
            OK
          </button>
        </div>
      </form>
    </div>
  );
}
