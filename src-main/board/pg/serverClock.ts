import type { Clock } from '../../base/clock.js';

/**
 * A shared board's time: the database server's, so every host decides expiry on one clock. Inside a deciding
 * transaction it is the server's time read once after the board's lock (`fix`); between transactions it is
 * an estimate (the last reading carried forward on this host's monotonic clock), good for countdowns and for
 * arming the sweep timer, never for a decision. Skewing this host's own clock moves neither.
 */
export class ServerClock implements Clock {
  private fixedAt: number | null = null;
  /** Server time minus local monotonic time, as of the last reading. */
  private offset = 0;
  /** The last time fixed: decisions never see the board's time go back, even if the server's clock steps. */
  private lastFixed = 0;

  constructor(private readonly local: () => number = () => performance.now()) {}

  /** A deciding transaction read the server's time: decisions until `release` use it. */
  fix(serverMs: number): void {
    this.offset = serverMs - this.local();
    this.fixedAt = Math.max(serverMs, this.lastFixed);
    this.lastFixed = this.fixedAt;
  }

  release(): void {
    this.fixedAt = null;
  }

  now(): number {
    return this.fixedAt ?? Math.max(this.lastFixed, this.local() + this.offset);
  }

  wall(): number {
    return this.now();
  }
}
