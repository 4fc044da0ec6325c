import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { containsRange, layoutItems, visibleRange } from '../../../src-renderer/components/virtualRange.js';

const ids = (n: number) => Array.from({ length: n }, (_, i) => `T-${i + 1}`);

describe('a virtualized column', () => {
  it('places cards by measured heights, estimating the rest', () => {
    const l = layoutItems(ids(4), new Map([['T-2', 50]]), 100, 6);
    expect(Array.from(l.offsets)).toEqual([0, 106, 162, 268, 374]);
    expect(l.total).toBe(368);
    expect(layoutItems([], new Map(), 100, 6).total).toBe(0);
  });

  it('draws only the cards that meet the viewport and its overscan', () => {
    const l = layoutItems(ids(5000), new Map(), 94, 6); // one card per 100 px
    expect(visibleRange(l, 0, 300, 0)).toEqual({ start: 0, end: 3 });
    expect(visibleRange(l, 0, 300, 200)).toEqual({ start: 0, end: 5 });
    expect(visibleRange(l, 250_000, 300, 200)).toEqual({ start: 2498, end: 2505 });
    // scrolled past the end (a column that just shrank): still the last card, never an empty range
    expect(visibleRange(l, 10_000_000, 300, 0)).toEqual({ start: 4999, end: 5000 });
    expect(visibleRange(layoutItems([], new Map(), 94, 6), 0, 300, 200)).toEqual({ start: 0, end: 0 });
  });

  it('always covers every card that intersects the viewport', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 0, max: 40_000 }),
        fc.integer({ min: 1, max: 2_000 }),
        fc.integer({ min: 0, max: 800 }),
        (heights, top, height, overscan) => {
          const list = ids(heights.length);
          const l = layoutItems(list, new Map(list.map((id, i) => [id, heights[i] as number])), 80, 6);
          const r = visibleRange(l, top, height, overscan);
          expect(r.start).toBeLessThan(r.end);
          for (let i = 0; i < list.length; i++) {
            const y0 = l.offsets[i] as number;
            const y1 = y0 + (heights[i] as number);
            const meets = y1 > top - overscan && y0 < top + height + overscan;
            if (meets) expect(i >= r.start && i < r.end).toBe(true);
          }
          // a smaller margin needs no more than a larger one draws
          expect(containsRange(r, visibleRange(l, top, height, Math.floor(overscan / 2)))).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});
