/**
 * The arithmetic of a virtualized column: where each card is, from the heights measured so far (an estimate
 * for cards never drawn), and which cards a viewport needs. No DOM here, so it is unit-tested in node.
 */

export interface VirtualLayout {
  /** offsets[i] is the top of item i; offsets[n] is the end of the last item plus one gap. */
  readonly offsets: Float64Array;
  /** The height of all items with the gaps between them (no trailing gap). */
  readonly total: number;
}

export interface VirtualRange {
  /** First item drawn. */
  readonly start: number;
  /** One past the last item drawn. */
  readonly end: number;
}

export function layoutItems(ids: readonly string[], heights: ReadonlyMap<string, number>, estimate: number, gap: number): VirtualLayout {
  const n = ids.length;
  const offsets = new Float64Array(n + 1);
  let y = 0;
  for (let i = 0; i < n; i++) {
    offsets[i] = y;
    y += (heights.get(ids[i] as string) ?? estimate) + gap;
  }
  offsets[n] = y;
  return { offsets, total: n > 0 ? y - gap : 0 };
}

/** The first index i in [0, n] with offsets[i] > y, or >= y when `orAt` (offsets ascend). */
function firstAfter(offsets: Float64Array, n: number, y: number, orAt = false): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const o = offsets[mid] as number;
    if (o > y || (orAt && o === y)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * The items that intersect [top - overscan, top + height + overscan]: `top` and `height` are the scroller's
 * scrollTop and clientHeight. Binary searches, so a 5,000-card column costs the same as a 50-card one.
 */
export function visibleRange(layout: VirtualLayout, top: number, height: number, overscan: number): VirtualRange {
  const n = layout.offsets.length - 1;
  if (n <= 0) return { start: 0, end: 0 };
  const from = Math.max(0, top - overscan);
  const to = Math.max(from, top + height + overscan);
  // The first item drawn is the last one starting at or above `from` (it may end in view); the last one drawn
  // is the last one starting above `to`.
  const start = Math.min(n - 1, Math.max(0, firstAfter(layout.offsets, n, from) - 1));
  const end = Math.max(start + 1, Math.min(n, firstAfter(layout.offsets, n, to, true)));
  return { start, end };
}

export function containsRange(outer: VirtualRange, inner: VirtualRange): boolean {
  return inner.start >= outer.start && inner.end <= outer.end;
}
