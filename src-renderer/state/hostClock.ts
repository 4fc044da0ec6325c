import { remainingMs } from '../../src-shared/board/lease.js';

/**
 * The host's board clock, as seen from the renderer. Deadlines are host board-clock readings; the renderer
 * only knows `performance.now()`. Every snapshot (`boardNow`) and every live event (`mono`, the board time
 * the host decided it) is a reading of the host clock taken no later than we received it, so
 *   hostTime <= localReceipt + trueOffset   =>   trueOffset >= hostTime - localReceipt.
 * Each observation is a lower bound on the offset; the best estimate is the largest. It approaches the
 * true offset from below, so a countdown drawn with it ends slightly late, never early (as the host's own
 * `remainingMs` a claim view carries does for agents). No per-second traffic is needed: remaining = deadline - now().
 */
export class HostClock {
  private offset: number | null = null;

  constructor(private readonly localNow: () => number = () => performance.now()) {}

  /** A fresh snapshot: forget what was learnt before (the host may have restarted and its board clock
   *  resumed from where its journal stopped), then take this reading as the first lower bound. */
  reset(hostTime: number, localAt: number = this.localNow()): void {
    this.offset = hostTime - localAt;
  }

  /** A live reading (an event's `mono`): raise the offset if it proves the host clock is further along. */
  observe(hostTime: number, localAt: number = this.localNow()): void {
    const o = hostTime - localAt;
    if (this.offset === null || o > this.offset) this.offset = o;
  }

  get synced(): boolean {
    return this.offset !== null;
  }

  /** The host board clock now (estimated). Before any reading it is the local clock, which nothing uses. */
  now(localAt: number = this.localNow()): number {
    return localAt + (this.offset ?? 0);
  }

  /** Milliseconds left until a host deadline, never negative. */
  remaining(deadline: number, localAt: number = this.localNow()): number {
    return remainingMs({ deadline }, this.now(localAt));
  }
}
