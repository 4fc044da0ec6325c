import type { TimerSource } from '../../src-shared/lifecycle/disposableStore.js';

/** Timers that run only when the test fires them: the pending callbacks by handle, with their delays. */
export function manualTimers() {
  let next = 1;
  const pending = new Map<number, { fn: () => void; ms: number }>();
  const unrefd = new Set<number>();
  const timers: TimerSource = {
    setTimeout: (fn, ms) => {
      const h = next++;
      pending.set(h, { fn, ms });
      return h;
    },
    clearTimeout: (h) => void pending.delete(h as number),
    unref: (h) => void unrefd.add(h as number),
  };
  /** Runs the pending timers whose delay matches (all by default). One armed meanwhile waits for the next
   *  call and one cleared meanwhile does not run, as with real timers. */
  const fire = (match: (ms: number) => boolean = () => true) => {
    for (const [h, t] of [...pending]) {
      if (!match(t.ms) || !pending.has(h)) continue;
      pending.delete(h);
      t.fn();
    }
  };
  return {
    timers,
    fire,
    /** Handles that were unref'd. */
    unrefd,
    size: () => pending.size,
    delays: () => [...pending.values()].map((t) => t.ms),
    has: (match: (ms: number) => boolean) => [...pending.values()].some((t) => match(t.ms)),
  };
}
