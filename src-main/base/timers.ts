import { performance } from 'node:perf_hooks';
import { globalTimers, type TimerSource } from '../../src-shared/lifecycle/disposableStore.js';

/** The timer functions the pty layer uses: the shared TimerSource, injectable so tests can drive time by hand. */
export type Timers = TimerSource;

/** The process's own timers (looked up at each call, so fake timers installed later still apply). */
export const realTimers: Timers = globalTimers;

/** Monotonic milliseconds: wall-clock jumps (NTP, manual changes) must not make a pane look idle or busy. */
export const monotonicNow = (): number => performance.now();
