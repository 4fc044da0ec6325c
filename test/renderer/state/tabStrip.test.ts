import { describe, expect, it } from 'vitest';
import { edgeStepTarget, nearEdge, stepTab, type TabSpan } from '../../../src-renderer/state/tabStrip.js';

describe('next / previous tab (Ctrl+PgDn / Ctrl+PgUp)', () => {
  const ids = ['a', 'b', 'c'];
  it('steps and wraps around at both ends', () => {
    expect(stepTab(ids, 'a', 1)).toBe('b');
    expect(stepTab(ids, 'c', 1)).toBe('a');
    expect(stepTab(ids, 'a', -1)).toBe('c');
    expect(stepTab(ids, 'b', -1)).toBe('a');
  });
  it('starts at an end when no tab (or a gone one) is selected; nothing without agents', () => {
    expect(stepTab(ids, null, 1)).toBe('a');
    expect(stepTab(ids, 'gone', -1)).toBe('c');
    expect(stepTab([], null, 1)).toBeNull();
    expect(stepTab(['a'], 'a', 1)).toBe('a');
  });
});

describe('a card held at the strip’s edge scrolls it one tab at a time', () => {
  // Five tabs of 100, 150, 120, 200 and 90 px side by side: 660 px in a strip showing 300.
  const widths = [100, 150, 120, 200, 90];
  const spans: TabSpan[] = [];
  let at = 0;
  for (const w of widths) {
    spans.push({ start: at, end: at + w });
    at += w;
  }
  const view = 300;

  it('each step towards the end shows the next tab wholly, its far edge on the strip’s edge, until the end', () => {
    const seen: number[] = [];
    let left = 0;
    for (let t = edgeStepTarget(spans, left, view, 1); t !== null; t = edgeStepTarget(spans, left, view, 1)) {
      seen.push(t);
      left = t;
    }
    // Tab 3 ends at 370, tab 4 at 570, tab 5 at 660: one step each, never further.
    expect(seen).toEqual([370 - view, 570 - view, 660 - view]);
  });

  it('and back towards the start, its near edge on the strip’s start', () => {
    const seen: number[] = [];
    let left = 360;
    for (let t = edgeStepTarget(spans, left, view, -1); t !== null; t = edgeStepTarget(spans, left, view, -1)) {
      seen.push(t);
      left = t;
    }
    expect(seen).toEqual([250, 100, 0]);
  });

  it('a tab wider than the strip shows its start; sub-pixel remainders are no step', () => {
    expect(edgeStepTarget([{ start: 0, end: 100 }, { start: 100, end: 600 }], 0, view, 1)).toBe(100);
    expect(edgeStepTarget(spans, 359.6, view, 1)).toBeNull();
    expect(edgeStepTarget(spans, 0.4, view, -1)).toBeNull();
  });

  it('knows which edge a pointer is near, and none outside the strip', () => {
    const box = { left: 100, right: 500, top: 10, bottom: 40 };
    expect(nearEdge(490, 20, box, 40)).toBe(1);
    expect(nearEdge(120, 20, box, 40)).toBe(-1);
    expect(nearEdge(300, 20, box, 40)).toBe(0);
    expect(nearEdge(490, 60, box, 40)).toBe(0);
    expect(nearEdge(520, 20, box, 40)).toBe(0);
  });
});
