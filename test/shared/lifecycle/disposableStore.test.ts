import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DisposableStore, setLateAddWarning, toDisposable } from '../../../src-shared/lifecycle/disposableStore.js';
import { manualTimers } from '../../helpers/manualTimers.js';

let warnings: string[] = [];
let prevWarn: ReturnType<typeof setLateAddWarning>;
beforeEach(() => {
  warnings = [];
  prevWarn = setLateAddWarning((m) => warnings.push(m));
});
afterEach(() => {
  setLateAddWarning(prevWarn);
  vi.useRealTimers();
});

describe('DisposableStore', () => {
  it('disposes everything it owns once, in the order added, and is idempotent', () => {
    const store = new DisposableStore();
    const order: string[] = [];
    store.add({ dispose: () => order.push('a') });
    store.addListener(() => order.push('b'));
    store.add(toDisposable(() => order.push('c')));
    expect(store.size).toBe(3);
    store.dispose();
    store.dispose();
    expect(order).toEqual(['a', 'b', 'c']);
    expect(store.isDisposed).toBe(true);
    expect(store.size).toBe(0);
  });

  it('disposes what is added after it was disposed at once, and warns', () => {
    const store = new DisposableStore();
    store.dispose();
    const d = vi.fn();
    store.add({ dispose: d });
    expect(d).toHaveBeenCalledTimes(1);
    expect(store.size).toBe(0);
    expect(warnings).toHaveLength(1);
  });

  it('arms no timer once disposed: a late timeout or interval is dead on arrival', () => {
    const t = manualTimers();
    const store = new DisposableStore(t.timers);
    store.dispose();
    const fn = vi.fn();
    const a = store.timeout(fn, 10);
    const b = store.interval(fn, 10);
    expect(a.pending).toBe(false);
    expect(b.pending).toBe(false);
    expect(t.size()).toBe(0);
    expect(warnings).toHaveLength(2);
  });

  it('a timeout fires once and leaves the store; disposing its handle or the store clears it', () => {
    const t = manualTimers();
    const store = new DisposableStore(t.timers);
    const fired: string[] = [];
    const a = store.timeout(() => fired.push('a'), 5);
    const b = store.timeout(() => fired.push('b'), 5);
    const c = store.timeout(() => fired.push('c'), 5, { unref: true });
    expect(store.size).toBe(3);
    expect(t.unrefd.size).toBe(1);
    b.dispose();
    expect(b.pending).toBe(false);
    expect(t.size()).toBe(2);
    t.fire();
    expect(fired).toEqual(['a', 'c']);
    expect(a.pending).toBe(false);
    expect(store.size).toBe(0);
    store.timeout(() => fired.push('d'), 5);
    store.dispose();
    expect(t.size()).toBe(0);
  });

  it('never runs a disposed timer, even with a source that cannot really clear', () => {
    const queued: Array<() => void> = [];
    const store = new DisposableStore({ setTimeout: (fn) => queued.push(fn), clearTimeout: () => undefined });
    const fn = vi.fn();
    store.timeout(fn, 5);
    store.dispose();
    for (const q of queued) q();
    expect(fn).not.toHaveBeenCalled();
  });

  it('an interval repeats until disposed, also when disposed from inside its own callback', () => {
    const t = manualTimers();
    const store = new DisposableStore(t.timers);
    let n = 0;
    const h = store.interval(() => {
      n++;
      if (n === 3) h.dispose();
    }, 5);
    t.fire();
    t.fire();
    expect(t.size()).toBe(1);
    t.fire();
    expect(n).toBe(3);
    expect(t.size()).toBe(0);
    expect(store.size).toBe(0);
  });

  it('uses the global timers as they are when armed (fake timers installed later apply)', () => {
    const store = new DisposableStore();
    vi.useFakeTimers();
    const fn = vi.fn();
    store.timeout(fn, 100);
    store.interval(fn, 100);
    expect(vi.getTimerCount()).toBe(2);
    vi.advanceTimersByTime(100);
    expect(fn).toHaveBeenCalledTimes(2);
    store.dispose();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('disposes everything even when some throw, then reports the errors', () => {
    const store = new DisposableStore();
    const last = vi.fn();
    store.add({ dispose: () => { throw new Error('one'); } });
    store.add({ dispose: last });
    expect(() => store.dispose()).toThrow('one');
    expect(last).toHaveBeenCalled();
    const two = new DisposableStore();
    two.add({ dispose: () => { throw new Error('x'); } });
    two.add({ dispose: () => { throw new Error('y'); } });
    expect(() => two.dispose()).toThrow(AggregateError);
  });

  it('delete disposes one item now and forgets it; a store cannot own itself', () => {
    const store = new DisposableStore();
    const d = vi.fn();
    const item = store.add({ dispose: d });
    store.delete(item);
    expect(d).toHaveBeenCalledTimes(1);
    store.dispose();
    expect(d).toHaveBeenCalledTimes(1);
    const s2 = new DisposableStore();
    expect(() => s2.add(s2)).toThrow();
  });
});
