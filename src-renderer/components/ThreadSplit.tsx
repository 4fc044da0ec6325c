import { useRef, type KeyboardEvent, type PointerEvent, type ReactNode, type RefObject } from 'react';
import type { StoreApi } from 'zustand/vanilla';
import { useStore } from 'zustand';
import { noTasks } from '../state/boardState.js';
import { useApp } from '../state/hooks.js';
import { clampShare, LayoutBounds, withBoardHidden, type ThreadLayout } from '../state/threadLayout.js';

/** The board's pane, named by the divider's aria-controls and the layout buttons'. */
export const BOARD_PANE_ID = 'board-pane';
export const AGENTS_PANE_ID = 'agents-pane';

/**
 * The board above, the agents' tabs and terminals below, and between them a divider a person drags or moves
 * with the keyboard. The panes share the height by their flex-grow (the board's share and the rest), so the
 * split keeps its proportion at any window size without measuring anything. `board` and `agents` are made
 * by the caller: moving the divider re-renders this and the divider, never what is in the panes (the
 * terminal refits itself: its pane watches its box, paneTerminal.ts).
 */
export function ThreadSplit({ layout, board, agents }: { layout: StoreApi<ThreadLayout>; board: ReactNode; agents: ReactNode }) {
  const share = useStore(layout, (s) => s.boardShare);
  const boardHidden = useStore(layout, (s) => s.boardHidden);
  const agentsHidden = useStore(layout, (s) => s.agentsHidden);
  // A Thread with no task yet: the board is its folded strips and the room goes to the first steps below.
  const fresh = useApp((s) => s.board !== null && noTasks(s.columns));
  const boardPane = useRef<HTMLDivElement>(null);
  const agentsPane = useRef<HTMLElement>(null);
  const sized = !fresh && !boardHidden && !agentsHidden;
  return (
    <div className={`thread-split${fresh ? ' fresh' : ''}`} data-testid="thread-split">
      <div id={BOARD_PANE_ID} className="board-pane" ref={boardPane} hidden={boardHidden} style={sized ? { flexGrow: share } : undefined} data-testid="board-pane">
        {board}
      </div>
      {!fresh && !agentsHidden && <SplitDivider layout={layout} share={share} boardHidden={boardHidden} boardPane={boardPane} agentsPane={agentsPane} />}
      <section
        id={AGENTS_PANE_ID}
        className="agents"
        aria-label="Agents"
        ref={agentsPane}
        hidden={agentsHidden}
        style={sized ? { flexGrow: 1 - share } : undefined}
        data-testid="agents-pane"
      >
        {agents}
      </section>
    </div>
  );
}

interface DividerProps {
  layout: StoreApi<ThreadLayout>;
  share: number;
  boardHidden: boolean;
  boardPane: RefObject<HTMLDivElement | null>;
  agentsPane: RefObject<HTMLElement | null>;
}

const percent = (share: number) => Math.round(share * 100);

/**
 * The WAI-ARIA window splitter (a focusable separator whose value is the board's share of the height): ↑ / ↓
 * move it a step, Page Up / Page Down a bigger one, Home / End to the smallest and largest board, Enter hides
 * the board and shows it again where it was. A drag moves the panes directly and stores the share once, at
 * the end, so a drag re-renders nothing while it goes.
 */
function SplitDivider({ layout, share, boardHidden, boardPane, agentsPane }: DividerProps) {
  const drag = useRef<{ grab: number; top: number; room: number; share: number } | null>(null);
  const set = (next: number) => layout.setState((l) => ({ ...withBoardHidden(l, false), boardShare: clampShare(next) }));

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const from = boardHidden ? LayoutBounds.minShare : share;
    const moves: Record<string, () => void> = {
      ArrowUp: () => set(from - LayoutBounds.keyStep),
      ArrowDown: () => set(from + LayoutBounds.keyStep),
      PageUp: () => set(from - LayoutBounds.pageStep),
      PageDown: () => set(from + LayoutBounds.pageStep),
      Home: () => set(LayoutBounds.minShare),
      End: () => set(LayoutBounds.maxShare),
      Enter: () => layout.setState((l) => withBoardHidden(l, !l.boardHidden)),
    };
    const move = moves[e.key];
    if (!move || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    move();
  };

  const onPointerDown = (e: PointerEvent<HTMLDivElement>) => {
    if (e.button !== 0) return;
    const box = e.currentTarget.parentElement?.getBoundingClientRect();
    const own = e.currentTarget.getBoundingClientRect();
    if (!box) return;
    e.preventDefault();
    e.currentTarget.setPointerCapture(e.pointerId);
    e.currentTarget.focus();
    // The board's top and the height the two panes share: the divider follows the pointer from where it
    // was grabbed, not from its top edge.
    drag.current = { grab: e.clientY - own.top, top: box.top, room: box.height - own.height, share: boardHidden ? 0 : share };
    if (boardHidden) layout.setState((l) => withBoardHidden(l, false));
  };
  const onPointerMove = (e: PointerEvent<HTMLDivElement>) => {
    const d = drag.current;
    if (!d || d.room <= 0) return;
    d.share = clampShare((e.clientY - d.grab - d.top) / d.room);
    // The panes follow the pointer at once; the store hears of it when the drag ends.
    if (boardPane.current) boardPane.current.style.flexGrow = String(d.share);
    if (agentsPane.current) agentsPane.current.style.flexGrow = String(1 - d.share);
    e.currentTarget.setAttribute('aria-valuenow', String(percent(d.share)));
  };
  const endDrag = () => {
    const d = drag.current;
    drag.current = null;
    if (d) set(d.share);
  };

  const now = boardHidden ? 0 : percent(share);
  return (
    <div
      className="split-divider"
      role="separator"
      tabIndex={0}
      aria-orientation="horizontal"
      aria-controls={BOARD_PANE_ID}
      aria-label="Board and terminals divider"
      aria-valuemin={0}
      aria-valuemax={percent(LayoutBounds.maxShare)}
      aria-valuenow={now}
      aria-valuetext={boardHidden ? 'board hidden' : `board ${now}% of the height`}
      title="Drag, or ↑ ↓ from the keyboard, to size the board and the terminals; Enter hides or shows the board"
      data-testid="split-divider"
      onKeyDown={onKeyDown}
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={endDrag}
      onLostPointerCapture={endDrag}
    />
  );
}
