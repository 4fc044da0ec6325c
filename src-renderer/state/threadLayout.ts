/**
 * How a person laid out a Thread's window: the board's share of the height it splits with the agents'
 * terminals, which of the two is hidden, the cards' density and whether the Thread's header is opened out.
 * Kept per Thread in the page's localStorage (Electron and `serve` both have one), keyed by the Thread's key,
 * so a reload or a second window on the same Thread comes back as it was left. What is stored is read
 * field by field: a value that is missing, of the wrong type or out of bounds falls back to its default, and
 * a storage that throws (disabled, full, private mode) only means nothing is remembered.
 */

import { createStore, type StoreApi } from 'zustand/vanilla';

export type CardDensity = 'comfortable' | 'compact';

export interface ThreadLayout {
  /** The board's share (0..1) of the height the board and the agents' area split between them. */
  readonly boardShare: number;
  readonly boardHidden: boolean;
  readonly agentsHidden: boolean;
  /** The density the person chose; null leaves it to the board's size (densityFor). */
  readonly density: CardDensity | null;
  /** The Thread's header opened out (the whole goal, settings and git lines) instead of its one line. */
  readonly headOpen: boolean;
}

export const LayoutBounds = {
  /** Below this share the board shows no whole card at 800×600; above the max the terminal shows fewer
   *  rows than a shell prompt and its command need. */
  minShare: 0.15,
  maxShare: 0.85,
  /** More to the board than to the terminal: the board is what a person reads across agents, the terminal
   *  one agent at a time (the window before this gave the board 52%). */
  defaultShare: 0.6,
  /** One arrow key press on the divider: twenty presses cross the whole range, as a drag would. */
  keyStep: 0.05,
  /** Page Up / Page Down on the divider. */
  pageStep: 0.2,
  /** From this many tasks a board shows compact cards unless the person chose: at 1440×900 comfortable cards
   *  show 2–3 a column, so a board longer than a few screens of them is read by title, not by card. */
  compactFromTasks: 40,
} as const;

export const DEFAULT_LAYOUT: ThreadLayout = {
  boardShare: LayoutBounds.defaultShare,
  boardHidden: false,
  agentsHidden: false,
  density: null,
  headOpen: false,
};

/** Where one Thread's layout is stored; the version moves if the stored shape ever changes meaning. */
export const layoutStorageKey = (threadKey: string): string => `forkbench.layout.v1.${threadKey}`;

export function clampShare(n: number): number {
  return Math.min(LayoutBounds.maxShare, Math.max(LayoutBounds.minShare, n));
}

/** A stored layout, each field checked on its own; whatever is not right is the default. Never throws. */
export function parseLayout(raw: string | null): ThreadLayout {
  if (raw === null) return DEFAULT_LAYOUT;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return DEFAULT_LAYOUT;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return DEFAULT_LAYOUT;
  const o = v as Record<string, unknown>;
  const bool = (x: unknown, d: boolean) => (typeof x === 'boolean' ? x : d);
  const share = typeof o.boardShare === 'number' && Number.isFinite(o.boardShare) ? clampShare(o.boardShare) : DEFAULT_LAYOUT.boardShare;
  const layout: ThreadLayout = {
    boardShare: share,
    boardHidden: bool(o.boardHidden, false),
    agentsHidden: bool(o.agentsHidden, false),
    density: o.density === 'compact' || o.density === 'comfortable' ? o.density : null,
    headOpen: bool(o.headOpen, false),
  };
  // Both hidden leaves a window with nothing in it: stored so by hand or by an older page, the board shows.
  return layout.boardHidden && layout.agentsHidden ? { ...layout, boardHidden: false } : layout;
}

/** The part of the Web Storage API used here (localStorage in the page, a Map in node tests). */
export interface LayoutStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

export function readLayout(storage: LayoutStorage | null, threadKey: string): ThreadLayout {
  try {
    return parseLayout(storage?.getItem(layoutStorageKey(threadKey)) ?? null);
  } catch {
    return DEFAULT_LAYOUT;
  }
}

/** Stores the layout; false if the storage refused (full, disabled): the layout still holds for this page. */
export function writeLayout(storage: LayoutStorage | null, threadKey: string, layout: ThreadLayout): boolean {
  try {
    storage?.setItem(layoutStorageKey(threadKey), JSON.stringify(layout));
    return storage !== null;
  } catch {
    return false;
  }
}

/** Hides or shows the board; hiding it while the terminals are hidden shows them, so something is on screen. */
export function withBoardHidden(l: ThreadLayout, hidden: boolean): ThreadLayout {
  return { ...l, boardHidden: hidden, agentsHidden: hidden ? false : l.agentsHidden };
}

/** Hides or shows the agents' area; hiding it while the board is hidden shows the board. */
export function withAgentsHidden(l: ThreadLayout, hidden: boolean): ThreadLayout {
  return { ...l, agentsHidden: hidden, boardHidden: hidden ? false : l.boardHidden };
}

/** The density cards are drawn at: the person's choice, else compact for a board of many tasks. */
export function densityFor(l: ThreadLayout, manyTasks: boolean): CardDensity {
  return l.density ?? (manyTasks ? 'compact' : 'comfortable');
}

/** The page's localStorage, or null where reading it throws (a sandboxed frame, storage turned off). */
export function pageStorage(): LayoutStorage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null;
  }
}

/**
 * One Thread's layout as a store the window's parts select from (the divider its share, the board its
 * density), read from `storage` once and written back on every change. A drag of the divider moves the
 * panes itself and sets the share here once, when it is let go.
 */
export function threadLayoutStore(storage: LayoutStorage | null, threadKey: string): StoreApi<ThreadLayout> {
  const store = createStore<ThreadLayout>(() => readLayout(storage, threadKey));
  store.subscribe((now) => void writeLayout(storage, threadKey, now));
  return store;
}
