import { performance } from 'node:perf_hooks';

/** The timer functions the pty layer uses, injectable so tests can drive time by hand. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Monotonic milliseconds: wall-clock jumps (NTP, manual changes) must not make a pane look idle or busy. */
export const monotonicNow = (): number => performance.now();
