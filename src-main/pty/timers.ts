import { performance } from 'node:perf_hooks';

/** The timer functions the pty layer uses, injectable so tests can drive time by hand. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Optional: the timer must not keep the process alive. Fake timers may leave it out. */
  unref?(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  unref: (handle) => void (handle as ReturnType<typeof setTimeout>).unref(),
};

/** Monotonic milliseconds: wall-clock jumps (NTP, manual changes) must not make a pane look idle or busy. */
export const monotonicNow = (): number => performance.now();
