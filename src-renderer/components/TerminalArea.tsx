import { useCallback, useEffect, useLayoutEffect, useRef, useState, useSyncExternalStore } from 'react';
import { noTasks } from '../state/boardState.js';
import { useApp, useTerminals } from '../state/hooks.js';
import type { PaneTerminal } from '../terminal/paneTerminal.js';
import { runsElsewhere } from '../state/agentList.js';
import { FirstSteps } from './FirstSteps.js';
import { RemoteAgentPanel } from './RemoteAgentPanel.js';

/** The visible agent's terminal. Panes live in the TerminalRegistry; this only moves one into view. */
export function TerminalArea() {
  const terminals = useTerminals();
  useSyncExternalStore(terminals.subscribe, terminals.getVersion);
  const activeId = useApp((s) => s.activeAgentId);
  // A Thread with nothing in it yet: the area explains how to start instead of staying blank.
  const fresh = useApp((s) => s.board !== null && s.agentIds.length === 0 && noTasks(s.columns));
  const pane = activeId ? terminals.get(activeId) : undefined;
  // Another host's agent has no pane here: the area says where its terminal is instead.
  const remote = useApp((s) => (s.activeAgentId && runsElsewhere(s.agents[s.activeAgentId]) ? s.agents[s.activeAgentId] : undefined));
  const area = useRef<HTMLDivElement>(null);
  useEffect(() => {
    terminals.area = area.current;
    return () => {
      terminals.area = null;
    };
  }, [terminals]);
  return (
    <div className="terminal-area" ref={area}>
      {remote ? (
        <RemoteAgentPanel agent={remote} />
      ) : pane && activeId ? (
        <PaneView key={activeId} pane={pane} agentId={activeId} />
      ) : fresh ? (
        <FirstSteps />
      ) : (
        <div className="terminal-empty">Launch an agent to open a terminal here.</div>
      )}
    </div>
  );
}

function PaneView({ pane, agentId }: { pane: PaneTerminal; agentId: string }) {
  const container = useRef<HTMLDivElement>(null);
  const [searching, setSearching] = useState(false);
  useLayoutEffect(() => {
    const el = container.current;
    if (!el) return;
    pane.onFindRequested = () => setSearching(true);
    pane.show(el);
    return () => {
      pane.onFindRequested = null;
      pane.hide();
    };
  }, [pane]);
  const closeSearch = useCallback(() => {
    setSearching(false);
    pane.search.clearDecorations();
    pane.term.clearSelection();
    pane.focus();
  }, [pane]);
  return (
    <div
      className="pane-view"
      onKeyDown={(e) => {
        if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'f') {
          e.preventDefault();
          setSearching(true);
        }
      }}
    >
      {searching && <SearchBox pane={pane} onClose={closeSearch} />}
      <div className="terminal-container" data-testid={`terminal-${agentId}`} ref={container} />
    </div>
  );
}

/**
 * Says that Ctrl+F finds text in the terminal on screen, and does it for a pointer: in the tab bar, not
 * over the terminal, where it covered the end of the first row's text (and was faded to 2:1 to hide less).
 */
export function FindInTerminal() {
  const terminals = useTerminals();
  useSyncExternalStore(terminals.subscribe, terminals.getVersion);
  const activeId = useApp((s) => s.activeAgentId);
  const pane = activeId ? terminals.get(activeId) : undefined;
  if (!pane) return null;
  return (
    <button
      type="button"
      className="find-hint"
      data-testid="terminal-find-hint"
      title="Find in this terminal (Ctrl+F while it has the focus)"
      aria-keyshortcuts="Control+F"
      onClick={() => pane.onFindRequested?.()}
    >
      Find <kbd>Ctrl+F</kbd>
    </button>
  );
}

function SearchBox({ pane, onClose }: { pane: PaneTerminal; onClose: () => void }) {
  const [q, setQ] = useState('');
  const [miss, setMiss] = useState(false);
  const find = (forward: boolean, incremental = false) => {
    if (!q) return;
    const found = forward ? pane.search.findNext(q, { incremental }) : pane.search.findPrevious(q);
    setMiss(!found);
  };
  return (
    <div className="term-search" role="search">
      <input
        autoFocus
        data-testid="terminal-search"
        className={miss ? 'miss' : ''}
        placeholder="Find in terminal"
        value={q}
        onChange={(e) => {
          setQ(e.target.value);
          if (e.target.value) setMiss(!pane.search.findNext(e.target.value, { incremental: true }));
        }}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            find(!e.shiftKey);
          } else if (e.key === 'Escape') {
            e.preventDefault();
            onClose();
          }
        }}
        aria-label="Find in terminal"
      />
      <button type="button" onClick={() => find(false)} aria-label="Previous match">
        ↑
      </button>
      <button type="button" onClick={() => find(true)} aria-label="Next match">
        ↓
      </button>
      <button type="button" onClick={onClose} aria-label="Close search">
        ×
      </button>
    </div>
  );
}
