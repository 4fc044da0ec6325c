import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useReducer, useRef } from 'react';
import { useDroppable } from '@dnd-kit/core';
import { TASK_STATES, type TaskState } from '../../src-shared/board/model.js';
import { matchTasks } from '../state/boardSearch.js';
import { noTasks } from '../state/boardState.js';
import { useApp, useController } from '../state/hooks.js';
import type { CardDensity } from '../state/threadLayout.js';
import { typingIn } from './keys.js';
import { TaskCard } from './TaskCard.js';
import { useCommands } from './useCommands.js';
import { containsRange, layoutItems, visibleRange, type VirtualLayout, type VirtualRange } from './virtualRange.js';

const LABELS: Record<TaskState, string> = {
  open: 'Open',
  claimed: 'Claimed',
  review: 'Review',
  done: 'Done',
  blocked: 'Blocked',
  'needs-attention': 'Needs attention',
};

export const OPEN_COLUMN_DROP_ID = 'column:open';

export const VirtualConstants = {
  /** The gap between cards: `.column-cards { gap }` in styles/board.css. */
  gapPx: 6,
  /** A card's height before it was ever drawn, until some card of the column has been measured. */
  estimatePx: 84,
  /** The same for a compact card: one line of title (13 px × 1.4), its padding and border. */
  compactEstimatePx: 32,
  /** Cards drawn beyond each edge of the viewport, so a scroll shows drawn cards, not blank space. */
  overscanPx: 600,
  /** A scroll re-renders the column only when the viewport plus this margin leaves the cards drawn. */
  marginPx: 150,
  /** The viewport assumed before the column has been measured (one frame). */
  initialViewportPx: 600,
} as const;

/** The board's columns at a density (ThreadLayout): compact cards are a line each, their buttons shown on
 *  hover and on focus within the card (styles/compactCards.css). Its search is in the Thread's header (ThreadHead). */
export function Board({ density }: { density: CardDensity }) {
  // A class, not a CSS :has() over the columns: :has() is re-matched on every change inside the board, and
  // a search that matches nothing is no empty board.
  const empty = useApp((s) => noTasks(s.columns));
  return (
    <div className={`board ${density}${empty ? ' no-tasks' : ''}`} role="group" aria-label="Backlog" data-testid="board" data-density={density}>
      {TASK_STATES.map((s) => (
        <Column key={s} state={s} density={density} />
      ))}
    </div>
  );
}

/**
 * Search over the board: `/` from anywhere but a field focuses it, Enter moves to the first match, Escape
 * clears it. The columns show only the matches (matchTasks), virtualized as ever.
 */
export function BoardSearch() {
  const c = useController();
  const query = useApp((s) => s.boardQuery);
  const input = useRef<HTMLInputElement>(null);
  const focusSearch = () => {
    input.current?.focus();
    input.current?.select();
  };
  useCommands(() => [{ id: 'focus-search', title: 'Search the board', group: 'Board', keys: '/', keywords: 'find filter tasks', run: focusSearch }]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || typingIn(e.target)) return;
      e.preventDefault();
      focusSearch();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  return (
    <div className="board-search" role="search">
      <input
        ref={input}
        type="search"
        data-testid="board-search"
        value={query}
        onChange={(e) => c.store.setState({ boardQuery: e.target.value })}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            // The task the query names exactly, wherever its column stands; else the first match.
            const named = query.trim() ? document.querySelector<HTMLElement>(`.board article[data-testid="card-${CSS.escape(query.trim().toUpperCase())}"]`) : null;
            (named ?? document.querySelector<HTMLElement>('.board [data-testid^="card-"]'))?.focus();
          } else if (e.key === 'Escape') {
            c.store.setState({ boardQuery: '' });
          }
        }}
        placeholder="Search ( / )"
        aria-label="Search the board's tasks by id, title, holder or state"
        aria-keyshortcuts="/"
      />
    </div>
  );
}

/** The column re-renders when its ids change or a drag enters or leaves it; its cards only when their ids change. */
const Column = memo(function Column({ state, density }: { state: TaskState; density: CardDensity }) {
  const all = useApp((s) => s.columns[state]);
  const query = useApp((s) => s.boardQuery);
  // Only while searching does the column follow every board change (a title or holder may start to match).
  const version = useApp((s) => (s.boardQuery ? s.boardVersion : 0));
  const c = useController();
  const ids = useMemo(() => matchTasks(all, c.state.board, c.state.agents, query), [all, query, version, c]);
  const { setNodeRef, isOver } = useDroppable({ id: state === 'open' ? OPEN_COLUMN_DROP_ID : `column:${state}`, disabled: state !== 'open' });
  return (
    <section
      ref={setNodeRef}
      className={`column column-${state}${ids.length === 0 ? ' empty' : ''}${isOver ? ' drop-over' : ''}`}
      data-testid={`column-${state}`}
      role="group"
      aria-label={LABELS[state]}
    >
      {/* Level 2 as the Threads and Events panels' titles are: a column is no part of the Threads list, and in
          a narrow window, that list hidden, an h3 came straight after the page's h1 (axe: heading-order). */}
      <h3 className="column-title" aria-level={2}>
        {LABELS[state]} <span className="count">{ids.length}</span>
      </h3>
      <VirtualCards ids={ids} density={density} />
    </section>
  );
});

/**
 * Heights of the cards a column has drawn, kept by id while the column lives (a card scrolled away and back
 * lands where it was). One ResizeObserver per column watches the drawn cards; it reports after layout, so
 * measuring forces no layout of its own.
 */
class HeightCache {
  readonly heights = new Map<string, number>();
  constructor(private readonly estimatePx: number) {}
  /** The height assumed for a card never drawn: the mean of the first cards measured, then fixed. A running
   *  mean would move every card not drawn yet each time one is measured, and a column scrolled to its middle
   *  would jump to other cards. */
  private guess: number | null = null;
  onChange: (() => void) | null = null;
  readonly observer: ResizeObserver | null = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver((entries) => this.measured(entries));

  estimate(): number {
    return this.guess ?? this.estimatePx;
  }

  private measured(entries: readonly ResizeObserverEntry[]): void {
    let changed = false;
    let sum = 0;
    let count = 0;
    for (const entry of entries) {
      const el = entry.target as HTMLElement;
      const id = el.dataset.vid;
      if (!id || !el.isConnected) continue;
      const h = entry.borderBoxSize?.[0]?.blockSize ?? el.getBoundingClientRect().height;
      if (h > 0) {
        sum += h;
        count++;
      }
      const old = this.heights.get(id);
      if (old !== undefined && Math.abs(old - h) < 0.5) continue;
      this.heights.set(id, h);
      changed = true;
    }
    if (this.guess === null && count > 0) this.guess = sum / count;
    if (changed) this.onChange?.();
  }
}

/**
 * A column's cards, virtualized: only the cards in (or near) the viewport are mounted, between two spacers as
 * tall as the cards they stand for, so the scrollbar is right and the browser's scroll anchoring keeps the
 * cards in view still while heights are corrected. Dragging, dropping and every card's test ids work as
 * before for the cards drawn; a column of 5,000 tasks mounts a few dozen cards, not 5,000 (or 200).
 */
const VirtualCards = memo(function VirtualCards({ ids, density }: { ids: readonly string[]; density: CardDensity }) {
  // A cache per density: heights measured at the other one (and the guess made from them) would place
  // every card not drawn since the switch where a card of the other height would be.
  const cache = useMemo(() => new HeightCache(density === 'compact' ? VirtualConstants.compactEstimatePx : VirtualConstants.estimatePx), [density]);
  // (The old cache's observer is left with no targets: each drawn card's ref unobserves it on the switch.)
  const [measures, remeasured] = useReducer((n: number) => n + 1, 0);
  const [, scrolled] = useReducer((n: number) => n + 1, 0);
  const scroller = useRef<HTMLDivElement>(null);
  /** The last scrollTop and clientHeight seen, written by scroll events and the scroller's ResizeObserver: render
   *  uses them but never measures the DOM itself, so drawing a column forces no layout. */
  const viewport = useRef<{ top: number; height: number }>({ top: 0, height: VirtualConstants.initialViewportPx });
  // `measures` is the cache's version: a card measured anew moves the cards after it.
  const layout = useMemo(() => layoutItems(ids, cache.heights, cache.estimate(), VirtualConstants.gapPx), [ids, cache, measures]);
  const range = visibleRange(layout, viewport.current.top, viewport.current.height, VirtualConstants.overscanPx);
  const drawn = useRef<{ layout: VirtualLayout; range: VirtualRange }>({ layout, range });
  useLayoutEffect(() => {
    drawn.current = { layout, range };
  });

  useEffect(() => {
    cache.onChange = remeasured;
    return () => {
      cache.onChange = null;
    };
  }, [cache]);

  /** Re-render only when the viewport (plus a margin) leaves the drawn cards: most scroll events do nothing. */
  const follow = useCallback((el: HTMLElement, height?: number) => {
    viewport.current = { top: el.scrollTop, height: height ?? viewport.current.height };
    const { top, height: h } = viewport.current;
    const need = visibleRange(drawn.current.layout, top, h, VirtualConstants.marginPx);
    if (!containsRange(drawn.current.range, need)) scrolled();
  }, []);

  useEffect(() => {
    const el = scroller.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    // Called after layout, so reading the size here forces none.
    const ro = new ResizeObserver(() => {
      if (el.clientHeight !== viewport.current.height) follow(el, el.clientHeight);
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, [follow]);

  const { offsets, total } = layout;
  const gap = VirtualConstants.gapPx;
  const n = ids.length;
  return (
    <div className="column-cards" ref={scroller} onScroll={(e) => follow(e.currentTarget)} data-drawn={range.end - range.start}>
      {range.start > 0 && <div className="column-spacer" aria-hidden="true" style={{ height: (offsets[range.start] as number) - gap }} />}
      {ids.slice(range.start, range.end).map((id) => (
        <VirtualItem key={id} id={id} observer={cache.observer} />
      ))}
      {range.end < n && <div className="column-spacer" aria-hidden="true" style={{ height: total - (offsets[range.end] as number) }} />}
    </div>
  );
});

/** One drawn card in its measured box. Memoized: a column scrolling or changing does not re-render it. */
const VirtualItem = memo(function VirtualItem({ id, observer }: { id: string; observer: ResizeObserver | null }) {
  const ref = useCallback(
    (el: HTMLDivElement | null) => {
      if (!el || !observer) return;
      observer.observe(el);
      return () => observer.unobserve(el);
    },
    [observer],
  );
  return (
    <div className="column-item" data-vid={id} ref={ref}>
      <TaskCard id={id} />
    </div>
  );
});
