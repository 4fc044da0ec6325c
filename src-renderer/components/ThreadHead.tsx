import type { StoreApi } from 'zustand/vanilla';
import { useStore } from 'zustand';
import { useApp } from '../state/hooks.js';
import { densityFor, withAgentsHidden, withBoardHidden, type ThreadLayout } from '../state/threadLayout.js';
import { AddTaskForm } from './AddTaskForm.js';
import { BoardSearch } from './Board.js';
import { GoalEditor } from './GoalEditor.js';
import { TOGGLE_AGENTS_KEYS, TOGGLE_BOARD_KEYS } from './layoutCommands.js';
import { ThreadSettings } from './ThreadSettings.js';
import { AGENTS_PANE_ID, BOARD_PANE_ID } from './ThreadSplit.js';
import { GitStatus } from './Worktrees.js';

/**
 * The Thread's header: goal, folder, settings, git line, the add-task form, the board search and the layout
 * buttons. Folded (the default) it is one line, each part cut to its room with an ellipsis and the whole
 * text in its tooltip; opened out, it is the full-width lines it was. Editing the goal or the settings
 * opens it out while they are edited (styles/layout.css), so a form never has to fit a line.
 */
export function ThreadHead({ layout, manyTasks }: { layout: StoreApi<ThreadLayout>; manyTasks: boolean }) {
  const open = useStore(layout, (s) => s.headOpen);
  const boardHidden = useStore(layout, (s) => s.boardHidden);
  const folder = useApp((s) => s.folder);
  const loaded = useApp((s) => s.board !== null);
  return (
    <section className={`thread-head ${open ? 'open' : 'one-line'}`} data-testid="thread-head">
      <button
        type="button"
        className="head-toggle"
        data-testid="thread-head-toggle"
        aria-expanded={open}
        aria-label="Whole Thread header"
        title={open ? 'Fold the header to one line' : 'Open out the header: the whole goal, folder, settings and git lines'}
        onClick={() => layout.setState({ headOpen: !open })}
      >
        <svg width="10" height="10" viewBox="0 0 10 10" aria-hidden="true">
          <path d={open ? 'M1 3l4 4 4-4' : 'M3 1l4 4-4 4'} fill="none" stroke="currentColor" strokeWidth="1.6" />
        </svg>
      </button>
      <GoalEditor />
      <div className="thread-folder" title={folder}>
        {folder}
      </div>
      {loaded ? <ThreadSettings /> : null}
      {loaded ? <GitStatus /> : null}
      {loaded ? <AddTaskForm /> : null}
      {loaded && !boardHidden ? <BoardSearch /> : null}
      <LayoutButtons layout={layout} manyTasks={manyTasks} />
    </section>
  );
}

/** The layout's switches where the eye finds them (each is also a key and a palette command). */
function LayoutButtons({ layout, manyTasks }: { layout: StoreApi<ThreadLayout>; manyTasks: boolean }) {
  const l = useStore(layout);
  const compact = densityFor(l, manyTasks) === 'compact';
  return (
    <div className="layout-buttons" role="group" aria-label="Layout">
      <button
        type="button"
        className="icon-button"
        data-testid="density-toggle"
        aria-pressed={compact}
        aria-label="Compact cards"
        title={compact ? 'Compact cards: a line each, their buttons on hover or focus. Click for comfortable cards' : 'Compact cards: a line each, their buttons on hover or focus'}
        onClick={() => layout.setState({ density: compact ? 'comfortable' : 'compact' })}
      >
        <svg width="14" height="14" viewBox="0 0 14 14" aria-hidden="true">
          <path d="M2 3h10M2 6h10M2 9h10M2 12h10" stroke="currentColor" strokeWidth="1.4" />
        </svg>
      </button>
      <PaneToggle
        testId="board-toggle"
        shown={!l.boardHidden}
        controls={BOARD_PANE_ID}
        label="Board"
        keys="Alt+Shift+B"
        title={`${l.boardHidden ? 'Show' : 'Hide'} the board (${TOGGLE_BOARD_KEYS})`}
        filledY={1.5}
        onToggle={() => layout.setState((s) => withBoardHidden(s, !s.boardHidden))}
      />
      <PaneToggle
        testId="terminals-toggle"
        shown={!l.agentsHidden}
        controls={AGENTS_PANE_ID}
        label="Terminals"
        keys="Control+J"
        title={`${l.agentsHidden ? 'Show' : 'Hide'} the agents’ terminals (${TOGGLE_AGENTS_KEYS})`}
        filledY={7}
        onToggle={() => layout.setState((s) => withAgentsHidden(s, !s.agentsHidden))}
      />
    </div>
  );
}

/** A button that shows or hides one pane of the Thread: pressed while the pane is shown. Its icon is the
 *  window with that pane's half filled (`filledY`: the top half for the board, the bottom for the terminals). */
function PaneToggle(p: { testId: string; shown: boolean; controls: string; label: string; keys: string; title: string; filledY: number; onToggle: () => void }) {
  return (
    <button
      type="button"
      className="icon-button"
      data-testid={p.testId}
      aria-pressed={p.shown}
      aria-controls={p.controls}
      aria-label={p.label}
      aria-keyshortcuts={p.keys}
      title={p.title}
      onClick={p.onToggle}
    >
      <svg width="14" height="14" viewBox="0 0 14 14" aria-hidden="true">
        <rect x="1.5" y="1.5" width="11" height="11" rx="1.5" fill="none" stroke="currentColor" />
        <rect x="1.5" y={p.filledY} width="11" height="5.5" fill="currentColor" />
      </svg>
    </button>
  );
}
