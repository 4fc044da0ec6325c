import { useEffect, useMemo, useRef, type RefObject } from 'react';
import { useDndMonitor, type AutoScrollOptions } from '@dnd-kit/core';
import { edgeStepTarget, nearEdge, type TabSpan } from '../state/tabStrip.js';

/**
 * A card held near the tab strip's edge scrolls it one tab at a time, not to the end.
 *
 * dnd-kit's auto-scroll speeds up the nearer the pointer is to the edge and keeps going: over a strip of 12
 * tabs it reached the end in 2.5 s, so a person aiming at a middle tab overshot it (issue 32). Tuning its
 * speed still scrolls by pixels, stopping anywhere, half a tab shown. So the strip is left out of dnd-kit's
 * auto-scroll (DND_AUTO_SCROLL, the board's columns keep it) and stepped here instead: held in the edge zone,
 * the strip brings in exactly one more tab each STEP_MS and stops on a tab's boundary, so the tab the person
 * wants arrives whole and stays put while they move onto it. (Step buttons a dragged card hovers were the
 * other choice: they take strip width from the tabs at every size, for a gesture made only while dragging.)
 */

/** The strip's scroll container, marked so dnd-kit's auto-scroll can tell it apart. */
export const TAB_STRIP_CLASS = 'tabs';

/** How far in from the strip's edge a held card steps it: about half a short tab, easy to hit, but not so
 *  wide that aiming at the last shown tab starts a scroll. */
const EDGE_ZONE_PX = 40;
/** One tab per this long: time to see the new tab arrive and let go on it (a person's reaction is ~250 ms
 *  and the eye needs to find the name), and 12 tabs still pass in under 8 s. */
export const STEP_MS = 700;

/** dnd-kit's auto-scroll for the window's DndContext: every scrollable but the tab strip (stepped here). */
export const DND_AUTO_SCROLL: AutoScrollOptions = {
  canScroll: (el) => !el.classList.contains(TAB_STRIP_CLASS),
};

/** The strip's tabs' extents in its scroll coordinates (its direct children: one wrapper per tab). */
function spansOf(strip: HTMLElement): TabSpan[] {
  return [...strip.children].map((el) => {
    const e = el as HTMLElement;
    return { start: e.offsetLeft, end: e.offsetLeft + e.offsetWidth };
  });
}

/** One step of `strip` towards `dir`; false at the end. */
function step(strip: HTMLElement, dir: 1 | -1): boolean {
  const target = edgeStepTarget(spansOf(strip), strip.scrollLeft, strip.clientWidth, dir);
  if (target === null) return false;
  strip.scrollLeft = target;
  return true;
}

/** While a card is dragged, steps `strip` one tab per STEP_MS as long as the pointer stays in an edge zone. */
export function useDragEdgeSteps(strip: RefObject<HTMLElement | null>): void {
  const state = useRef<{ zone: -1 | 0 | 1; timer: ReturnType<typeof setInterval> | null; onMove: ((e: PointerEvent) => void) | null }>({ zone: 0, timer: null, onMove: null });
  const handlers = useMemo(() => {
    const s = state.current;
    const hold = (zone: -1 | 0 | 1) => {
      if (zone === s.zone) return;
      s.zone = zone;
      if (s.timer !== null) clearInterval(s.timer);
      s.timer = null;
      if (zone === 0) return;
      // The first step after one STEP_MS too: a card carried across the edge on its way is not a request.
      s.timer = setInterval(() => {
        const el = strip.current;
        if (!el || !step(el, zone === 1 ? 1 : -1)) hold(0);
      }, STEP_MS);
    };
    const stop = () => {
      hold(0);
      if (s.onMove) document.removeEventListener('pointermove', s.onMove);
      s.onMove = null;
    };
    const start = () => {
      stop();
      s.onMove = (e: PointerEvent) => {
        const el = strip.current;
        const box = el?.getBoundingClientRect();
        // A strip with nothing to scroll has no edge to hold.
        hold(el && box && el.scrollWidth > el.clientWidth ? nearEdge(e.clientX, e.clientY, box, EDGE_ZONE_PX) : 0);
      };
      document.addEventListener('pointermove', s.onMove);
    };
    return { start, stop };
  }, [strip]);
  useDndMonitor(useMemo(() => ({ onDragStart: handlers.start, onDragEnd: handlers.stop, onDragCancel: handlers.stop }), [handlers]));
  useEffect(() => handlers.stop, [handlers]);
}
