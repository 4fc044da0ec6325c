/**
 * Time as the board sees it. Every lease decision reads `now()`, a monotonic clock; `wall()` is only
 * written into events for people to read. Injected everywhere, so tests are exact and never sleep.
 */
export interface Clock {
  /** Monotonic milliseconds. Never goes backwards; unaffected by changes to the system time. */
  now(): number;
  /** Wall-clock milliseconds since the epoch, for display only. */
  wall(): number;
}

/**
 * The board clock of a host process: monotonic, and continued from where the journal left off, so a
 * deadline written by an earlier run still means the same instant of board time after a restart. Time the
 * host was down does not pass for the board (like a suspended machine's monotonic clock): claims resume
 * with the lease time they had, and the host adds grace on top.
 */
export function boardClock(resumeAt = 0, source: () => number = () => performance.now()): Clock {
  const origin = source();
  return { now: () => resumeAt + (source() - origin), wall: () => Date.now() };
}

/** A clock that moves only when told to: for exact tests at deadline -1 / = / +1 ms. */
export class ManualClock implements Clock {
  constructor(
    private mono = 0,
    private wallMs = Date.UTC(2026, 0, 1),
  ) {}
  now(): number {
    return this.mono;
  }
  wall(): number {
    return this.wallMs;
  }
  advance(ms: number): void {
    if (ms < 0) throw new Error('a monotonic clock cannot go back');
    this.mono += ms;
    this.wallMs += ms;
  }
  /** Jump only the wall clock (NTP step, the user changing the time): no lease decision may move. */
  jumpWall(ms: number): void {
    this.wallMs += ms;
  }
}
