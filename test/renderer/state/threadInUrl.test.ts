import { describe, expect, it } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { followShownThread, urlWithThread } from '../../../src-renderer/state/threadInUrl.js';

describe('the shown Thread in the address', () => {
  it('sets, replaces and removes ?thread= and keeps every other parameter and the hash', () => {
    expect(urlWithThread('http://127.0.0.1:4000/?debug=1#log', 'abc')).toBe('/?debug=1&thread=abc#log');
    expect(urlWithThread('http://127.0.0.1:4000/?thread=old&debug=1', 'new')).toBe('/?thread=new&debug=1');
    expect(urlWithThread('http://127.0.0.1:4000/?thread=old&debug=1', null)).toBe('/?debug=1');
  });

  it('follows the store: the address changes when the shown Thread does, and only then', () => {
    const store = createStore<{ activeKey: string | null; other: number }>(() => ({ activeKey: null, other: 0 }));
    const location = { href: 'http://127.0.0.1:4000/?debug=1' };
    const replaced: string[] = [];
    const stop = followShownThread(store, location, (url) => {
      replaced.push(url);
      location.href = `http://127.0.0.1:4000${url}`;
    });
    store.setState({ activeKey: 'k1' });
    store.setState({ other: 1 });
    store.setState({ activeKey: 'k2' });
    stop();
    store.setState({ activeKey: null });
    expect(replaced).toEqual(['/?debug=1&thread=k1', '/?debug=1&thread=k2']);
  });
});
