import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LAYOUT,
  densityFor,
  LayoutBounds,
  layoutStorageKey,
  parseLayout,
  readLayout,
  threadLayoutStore,
  withAgentsHidden,
  withBoardHidden,
  writeLayout,
  type LayoutStorage,
} from '../../../src-renderer/state/threadLayout.js';

/** localStorage's part the module uses, on a Map (the page's own in the e2e test, longDay.e2e.test.ts). */
function mapStorage(): LayoutStorage & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return { data, getItem: (k) => data.get(k) ?? null, setItem: (k, v) => void data.set(k, v) };
}

describe("a Thread's layout, kept per Thread", () => {
  it('reads back what was written, for that Thread only', () => {
    const storage = mapStorage();
    const layout = { boardShare: 0.35, boardHidden: false, agentsHidden: true, density: 'compact', headOpen: true } as const;
    expect(writeLayout(storage, '0123456789abcdef', layout)).toBe(true);
    expect(readLayout(storage, '0123456789abcdef')).toEqual(layout);
    expect(readLayout(storage, 'fedcba9876543210')).toEqual(DEFAULT_LAYOUT);
  });

  it('ignores what is not right, field by field, and never throws', () => {
    for (const raw of [null, '', '{', 'null', '42', '"x"', '[1,2]', '{}']) expect(parseLayout(raw)).toEqual(DEFAULT_LAYOUT);
    expect(parseLayout('{"boardShare":"0.3","boardHidden":"yes","density":"tiny","headOpen":1}')).toEqual(DEFAULT_LAYOUT);
    expect(parseLayout('{"boardShare":1e308}').boardShare).toBe(LayoutBounds.maxShare);
    expect(parseLayout('{"boardShare":-4}').boardShare).toBe(LayoutBounds.minShare);
    expect(parseLayout('{"boardShare":0.42,"density":"tiny"}')).toEqual({ ...DEFAULT_LAYOUT, boardShare: 0.42 });
    // Both hidden leaves nothing on screen: the board shows.
    expect(parseLayout('{"boardHidden":true,"agentsHidden":true}')).toMatchObject({ boardHidden: false, agentsHidden: true });
  });

  it('a storage that throws only means nothing is remembered', () => {
    const broken: LayoutStorage = {
      getItem: () => {
        throw new Error('SecurityError');
      },
      setItem: () => {
        throw new Error('QuotaExceededError');
      },
    };
    expect(readLayout(broken, 'k')).toEqual(DEFAULT_LAYOUT);
    expect(writeLayout(broken, 'k', DEFAULT_LAYOUT)).toBe(false);
    expect(readLayout(null, 'k')).toEqual(DEFAULT_LAYOUT);
    const store = threadLayoutStore(broken, 'k');
    store.setState({ boardShare: 0.3 });
    expect(store.getState().boardShare).toBe(0.3);
  });

  it('the store writes every change under the Thread key', () => {
    const storage = mapStorage();
    const store = threadLayoutStore(storage, 'aaaaaaaaaaaaaaaa');
    store.setState((l) => withAgentsHidden(l, true));
    expect(JSON.parse(storage.data.get(layoutStorageKey('aaaaaaaaaaaaaaaa')) as string)).toMatchObject({ agentsHidden: true });
    expect(threadLayoutStore(storage, 'aaaaaaaaaaaaaaaa').getState().agentsHidden).toBe(true);
  });

  it('never hides both panes, and picks compact cards for a long board unless the person chose', () => {
    expect(withBoardHidden(withAgentsHidden(DEFAULT_LAYOUT, true), true)).toMatchObject({ boardHidden: true, agentsHidden: false });
    expect(withAgentsHidden(withBoardHidden(DEFAULT_LAYOUT, true), true)).toMatchObject({ boardHidden: false, agentsHidden: true });
    expect(densityFor(DEFAULT_LAYOUT, true)).toBe('compact');
    expect(densityFor(DEFAULT_LAYOUT, false)).toBe('comfortable');
    expect(densityFor({ ...DEFAULT_LAYOUT, density: 'comfortable' }, true)).toBe('comfortable');
  });
});
