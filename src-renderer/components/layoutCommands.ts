import { useEffect, useRef } from 'react';
import type { StoreApi } from 'zustand/vanilla';
import { useApp, useTerminals } from '../state/hooks.js';
import { densityFor, withAgentsHidden, withBoardHidden, type ThreadLayout } from '../state/threadLayout.js';
import { AGENTS_PANE_ID, BOARD_PANE_ID } from './ThreadSplit.js';
import { useCommands } from './useCommands.js';

/** VS Code's key for its panel of terminals, the one people know; Cmd+J on a Mac. */
export const TOGGLE_AGENTS_KEYS = 'Ctrl+J';
/** The board's: B for board, with Alt+Shift like "next waiting agent" (Alt+Shift+N). Ctrl+Shift+J opens
 *  the browser's console in Chrome, where `serve` shows the window, so it cannot be this. */
export const TOGGLE_BOARD_KEYS = 'Alt+Shift+B';

const isAgentsKey = (e: KeyboardEvent) => (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.code === 'KeyJ';
const isBoardKey = (e: KeyboardEvent) => e.altKey && e.shiftKey && !e.ctrlKey && !e.metaKey && e.code === 'KeyB';

/** Moves the focus once the change is drawn (a hidden pane's elements cannot take it, a shown one's can). */
function focusAfterRender(focus: () => void): void {
  requestAnimationFrame(focus);
}

const inPane = (id: string) => !!document.activeElement?.closest(`#${id}`) || document.activeElement === document.body;

/**
 * The layout's actions, each both a key and a palette command: hide or show the terminals (Ctrl+J) and the
 * board (Alt+Shift+B), the cards' density, the header's one line. The keys are heard before a focused
 * terminal takes them (capture on the window), as VS Code's Ctrl+J is.
 */
export function useLayoutCommands(layout: StoreApi<ThreadLayout>, manyTasks: boolean): void {
  const terminals = useTerminals();
  const activeAgent = useApp((s) => s.activeAgentId);

  const toggleAgents = () => {
    const hide = !layout.getState().agentsHidden;
    const focusWasThere = inPane(AGENTS_PANE_ID);
    layout.setState((l) => withAgentsHidden(l, hide));
    // Shown again, the terminal has the focus (what the key was pressed for); hidden, the board takes it.
    if (!hide) focusAfterRender(() => activeAgent && terminals.get(activeAgent)?.focus());
    else if (focusWasThere)
      focusAfterRender(() => (document.querySelector<HTMLElement>(`#${BOARD_PANE_ID} [data-testid^="card-"]`) ?? document.querySelector<HTMLElement>('[data-testid="board-search"]'))?.focus());
  };
  const toggleBoard = () => {
    const hide = !layout.getState().boardHidden;
    const focusWasThere = inPane(BOARD_PANE_ID);
    layout.setState((l) => withBoardHidden(l, hide));
    if (hide && focusWasThere) focusAfterRender(() => document.querySelector<HTMLElement>('[data-testid="split-divider"]')?.focus());
  };

  // The listener is added once and calls the latest toggles (they close over the agent on screen).
  const keys = useRef({ toggleAgents, toggleBoard });
  useEffect(() => {
    keys.current = { toggleAgents, toggleBoard };
  });
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const run = isAgentsKey(e) ? keys.current.toggleAgents : isBoardKey(e) ? keys.current.toggleBoard : null;
      if (!run) return;
      e.preventDefault();
      e.stopPropagation();
      if (!e.repeat) run();
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  }, []);

  useCommands(() => {
    const l = layout.getState();
    const density = densityFor(l, manyTasks);
    return [
      { id: 'toggle-terminals', title: l.agentsHidden ? 'Show the terminals' : 'Hide the terminals', group: 'Window', keys: TOGGLE_AGENTS_KEYS, keywords: 'agents panel layout toggle', run: toggleAgents },
      { id: 'toggle-board', title: l.boardHidden ? 'Show the board' : 'Hide the board', group: 'Window', keys: TOGGLE_BOARD_KEYS, keywords: 'tasks layout toggle', run: toggleBoard },
      {
        id: 'toggle-density',
        title: density === 'compact' ? 'Show comfortable cards' : 'Show compact cards',
        group: 'Board',
        keywords: 'density cards dense layout',
        run: () => layout.setState({ density: density === 'compact' ? 'comfortable' : 'compact' }),
      },
      {
        id: 'toggle-thread-head',
        title: l.headOpen ? 'Fold the Thread header to one line' : 'Open out the Thread header',
        group: 'Window',
        keywords: 'goal settings folder git header layout',
        run: () => layout.setState({ headOpen: !l.headOpen }),
      },
    ];
  });
}
