import type { Client, Pool } from 'pg';
import { NOTIFY_CHANNEL } from './boardSql.js';

/** A connection of its own for LISTEN, made anew after each loss. */
export type ListenClientFactory = () => Client;

export const FollowTimes = {
  /** The safety net under LISTEN: a host that missed a wake-up (a pooler that cannot LISTEN, a dropped
   *  connection) still sees other hosts' changes within this, and other hosts' agents come and go in its
   *  window within it. Cheap: an indexed read that finds nothing new, and one small join. */
  pollMs: 2_000,
  /** Between attempts to LISTEN again after the connection was lost. */
  relistenMs: 1_000,
} as const;

export interface FollowerDeps {
  pool: Pool;
  listen?: ListenClientFactory;
  boardId: string;
  pollMs?: number;
  /** Whether a head is past this host's position. */
  behind(head: number): boolean;
  /** Catch up now (and look again at what else a poll looks at). */
  wake(): void;
  warn(m: string): void;
}

/**
 * Tells a host when other hosts appended to the board. LISTEN/NOTIFY is a wake-up only (delivered at commit,
 * no replay for a listener that was away): after every (re)connect the host catches up, and a slow poll of
 * the board's head is the safety net.
 */
export class BoardFollower {
  private client: Client | null = null;
  private poll: NodeJS.Timeout | null = null;
  private relisten: NodeJS.Timeout | null = null;
  private disposed = false;

  constructor(private readonly d: FollowerDeps) {
    if (d.listen) void this.listen();
    this.poll = setInterval(() => this.d.wake(), d.pollMs ?? FollowTimes.pollMs);
  }

  private async listen(): Promise<void> {
    if (this.disposed || !this.d.listen) return;
    const c = this.d.listen();
    this.client = c;
    const lost = () => {
      if (this.client !== c) return;
      this.client = null;
      c.end().catch(() => undefined);
      if (!this.disposed) this.relisten = setTimeout(() => void this.listen(), FollowTimes.relistenMs);
    };
    c.on('error', lost);
    c.on('end', lost);
    c.on('notification', (n) => {
      const [board, head] = (n.payload ?? '').split(':');
      if (board === this.d.boardId && this.d.behind(Number(head))) this.d.wake();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${NOTIFY_CHANNEL}`);
      // What committed while no one listened is read now.
      this.d.wake();
    } catch {
      lost();
    }
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.poll) clearInterval(this.poll);
    if (this.relisten) clearTimeout(this.relisten);
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => undefined);
  }
}
