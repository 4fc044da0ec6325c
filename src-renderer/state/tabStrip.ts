/**
 * The agents' tab strip as arithmetic, without the DOM: which tab the next/previous keys go to, and where a
 * card held near the strip's edge scrolls it (one tab at a time). AgentTabs.tsx and tabStripDrag.ts measure
 * the page and call these.
 */

/** The agent `by` tabs from `active` (Ctrl+PgDn: +1, Ctrl+PgUp: -1), wrapping around at either end as a
 *  browser's tabs do; the first (or last) when none is selected; null without agents. */
export function stepTab(ids: readonly string[], active: string | null, by: 1 | -1): string | null {
  const n = ids.length;
  if (n === 0) return null;
  const at = active === null ? -1 : ids.indexOf(active);
  if (at < 0) return ids[by > 0 ? 0 : n - 1] ?? null;
  return ids[(((at + by) % n) + n) % n] ?? null;
}

/** A tab's extent along the strip, in the strip's scroll coordinates (offsetLeft, offsetLeft + width). */
export interface TabSpan {
  start: number;
  end: number;
}

/** Slack for sub-pixel layout: a tab within this much of the edge counts as wholly shown. */
const EDGE_SLACK_PX = 1;

/**
 * Where the strip scrolls for one step towards `dir`: just far enough that the next tab not wholly shown on
 * that side is wholly shown (its far edge on the strip's edge, or its near edge when it is wider than the
 * strip), so each step brings in exactly one tab and stops on a tab's boundary. Null when every tab on that
 * side is already shown: the strip is at its end.
 */
export function edgeStepTarget(spans: readonly TabSpan[], scrollLeft: number, viewWidth: number, dir: 1 | -1): number | null {
  const total = spans.reduce((m, s) => Math.max(m, s.end), 0);
  const max = Math.max(0, total - viewWidth);
  const viewEnd = scrollLeft + viewWidth;
  let target: number | null = null;
  if (dir > 0) {
    const next = spans.find((s) => s.end > viewEnd + EDGE_SLACK_PX);
    if (next) target = next.end - next.start > viewWidth ? next.start : next.end - viewWidth;
  } else {
    const prev = [...spans].reverse().find((s) => s.start < scrollLeft - EDGE_SLACK_PX);
    if (prev) target = prev.end - prev.start > viewWidth ? prev.end - viewWidth : prev.start;
  }
  if (target === null) return null;
  target = Math.min(max, Math.max(0, target));
  return Math.abs(target - scrollLeft) <= EDGE_SLACK_PX ? null : target;
}

/** Which edge of the strip a pointer is near: -1 the start, 1 the end, 0 neither (or outside the strip). */
export function nearEdge(x: number, y: number, box: { left: number; right: number; top: number; bottom: number }, zonePx: number): -1 | 0 | 1 {
  if (y < box.top || y > box.bottom || x < box.left || x > box.right) return 0;
  if (x >= box.right - zonePx) return 1;
  if (x <= box.left + zonePx) return -1;
  return 0;
}
