import { useEffect, useRef, useState } from 'react';
import { createStore, useStore } from 'zustand';

interface PromptRequest {
  title: string;
  initial: string;
  resolve: (value: string | null) => void;
}

const promptStore = createStore<{ request: PromptRequest | null }>(() => ({ request: null }));

/**
 * Ask a person for a line of text (a block or reject reason). In a browser this is `window.prompt`; Electron
 * does not implement prompt(), so there (and wherever prompt is missing) an in-page dialog asks instead.
 * Resolves to null when cancelled.
 */
export function askText(title: string, initial = ''): Promise<string | null> {
  if (!window.forkbench && typeof window.prompt === 'function') {
    try {
      return Promise.resolve(window.prompt(title, initial));
    } catch {
      /* fall through to the in-page dialog */
    }
  }
  return new Promise((resolve) => {
    promptStore.getState().request?.resolve(null);
    promptStore.setState({ request: { title, initial, resolve } });
  });
}

/** The in-page dialog used by askText where window.prompt is not available. */
export function PromptHost() {
  const request = useStore(promptStore, (s) => s.request);
  const [value, setValue] = useState('');
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (request) {
      setValue(request.initial);
      queueMicrotask(() => input.current?.focus());
    }
  }, [request]);
  if (!request) return null;
  const finish = (v: string | null) => {
    promptStore.setState({ request: null });
    request.resolve(v);
  };
  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && finish(null)}>
      <form
        className="modal"
        role="dialog"
        aria-modal="true"
        aria-label={request.title}
        onSubmit={(e) => {
          e.preventDefault();
          finish(value);
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
          onKeyDown={(e) => e.key === 'Escape' && finish(null)}
        />
        <div className="modal-buttons">
          <button type="button" data-testid="prompt-cancel" onClick={() => finish(null)}>
            Cancel
          </button>
          <button type="submit" data-testid="prompt-ok" className="primary">
            OK
          </button>
        </div>
      </form>
    </div>
  );
}
