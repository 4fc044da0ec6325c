import { describe, expect, it } from 'vitest';
import { stepTab } from '../../../src-renderer/state/tabStrip.js';

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
