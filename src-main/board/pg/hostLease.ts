import type { ClientBase, Pool } from 'pg';
import { WriteKeyLimits } from '../writeKeys.js';
import { QUIET_MS } from './boardSql.js';
import { outageAfterMs } from './outage.js';

/**
 * How a host's lease on a shared board is timed. River's leader lease renews every 5 s with a 15 s lifetime:
 * three renewals may fail (a slow network, a busy database) before the host is presumed lost, and a lost
 * host's agents' claims end within ~20 s (its lifetime, plus up to one renewal period of another host until
 * it sweeps) instead of waiting out the agents' own 120 s leases.
 */
export const HostLeaseTimes: { readonly renewMs: number; readonly lifetimeMs: number } = {
  renewMs: 5_000,
  lifetimeMs: 15_000,
};

export type HostLeaseTiming = Partial<typeof HostLeaseTimes>;

/** Keys past their retention are pruned once in this many renewals (a minute at 5 s): pruning is a
 *  delete over an index, not worth a statement every renewal. */
const PRUNE_EVERY = 12;

export interface HostLeaseDeps {
  pool: Pool;
  boardId: string;
  hostId: string;
  incarnation: () => string;
  timing: typeof HostLeaseTimes;
  /** The database says this host's lease is over. */
  lapsed(): void;
  /** The board was quiet for an outage's length: a transaction that makes up for it (outage.ts), which a
   *  renewal must wait for, or it would judge its own lease by the clock that ran on meanwhile. */
  outageOver(): Promise<unknown>;
  /** Another host's lease is over: its claims are to be ended. */
  othersLapsed(): void;
  /** Whether the database answered this round. */
  reachable(ok: boolean, err?: Error): void;
  warn(m: string): void;
}

/**
 * This host's lease row: renewed on the server's clock while the host runs, and only while it has not lapsed
 * (a renewal never revives a lease another host may already have acted on). The same round looks for other
 * hosts that lapsed, so every host watches every other.
 */
export class HostLease {
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;
  private rounds = 0;
  private disposed = false;

  constructor(private readonly d: HostLeaseDeps) {
    this.schedule();
  }

  private schedule(): void {
    if (this.disposed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.round = this.renew().finally(() => {
        this.round = null;
        this.schedule();
      });
    }, this.d.timing.renewMs);
  }

  private async renew(): Promise<void> {
    const { pool, boardId, hostId } = this.d;
    try {
      let renewed = await this.renewUnlessQuiet();
      this.d.reachable(true);
      if (this.disposed) return;
      if (renewed === 'quiet') {
        // A failure there is acted on by the transaction itself (unreachable, or this host lapsed): the renewal
        // below then finds which.
        await this.d.outageOver().catch(() => undefined);
        renewed = await this.renewUnlessQuiet();
      }
      if (renewed !== 'renewed') this.d.lapsed();
      const others = await pool.query('SELECT 1 FROM forkbench.hosts WHERE board_id = $1 AND host_id <> $2 AND expires_at < clock_timestamp() LIMIT 1', [boardId, hostId]);
      if (others.rowCount) this.d.othersLapsed();
      if (++this.rounds % PRUNE_EVERY === 0) {
        await pool.query(`DELETE FROM forkbench.write_keys WHERE board_id = $1 AND at < clock_timestamp() - $2 * interval '1 millisecond'`, [boardId, WriteKeyLimits.retentionMs]);
        // Each agent's newest keys only, as on the journal: a flood of fresh keys costs a bounded record.
        await pool.query(
          `DELETE FROM forkbench.write_keys w USING (
             SELECT agent_id, key, row_number() OVER (PARTITION BY agent_id ORDER BY at DESC) AS n FROM forkbench.write_keys WHERE board_id = $1
           ) old WHERE w.board_id = $1 AND w.agent_id = old.agent_id AND w.key = old.key AND old.n > $2`,
          [boardId, WriteKeyLimits.perAgent],
        );
      }
    } catch (err) {
      this.d.reachable(false, err as Error);
    }
  }

  /**
   * Renew, in one statement with the look at whether the board was quiet: a renewal sent just before the
   * database stopped and run when it resumes must not be the sign of life that hides the outage from the rest.
   */
  private async renewUnlessQuiet(): Promise<'renewed' | 'lapsed' | 'quiet'> {
    const { pool, boardId, hostId } = this.d;
    const r = await pool.query<{ quiet: number; renewed: number }>(
      `WITH quiet AS (SELECT ${QUIET_MS('written_at')} AS ms FROM forkbench.boards WHERE id = $1),
            renewed AS (
              UPDATE forkbench.hosts SET expires_at = clock_timestamp() + $4 * interval '1 millisecond', renewed_at = clock_timestamp()
               WHERE board_id = $1 AND host_id = $2 AND incarnation = $3 AND expires_at > clock_timestamp()
                 AND coalesce((SELECT ms FROM quiet), 0) <= $5
               RETURNING 1)
       SELECT coalesce((SELECT ms FROM quiet), 0) AS quiet, (SELECT count(*) FROM renewed)::int AS renewed`,
      [boardId, hostId, this.d.incarnation(), this.d.timing.lifetimeMs, outageAfterMs(this.d.timing)],
    );
    const row = r.rows[0];
    if (row && row.renewed > 0) return 'renewed';
    return row && row.quiet > outageAfterMs(this.d.timing) ? 'quiet' : 'lapsed';
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.round;
  }
}

/** A host whose lease lapsed, as the sweep that removed it found it: its name, and the agents it ran. */
export interface LapsedHost {
  readonly id: string;
  readonly name: string;
  /** Every agent it ran, whose claims the caller ends `host-lost`. */
  readonly agents: readonly string[];
  /** Of those, the ones still running (not recorded gone) as it lapsed: what its notice counts. */
  readonly running: number;
}

/**
 * Inside the board's transaction: the hosts whose lease lapsed (not this one), their rows removed so a host
 * that wakes finds it must join again (and its name is free), and the agents they ran.
 */
export async function lapsedHosts(tx: ClientBase, boardId: string, self: string): Promise<LapsedHost[]> {
  const gone = await tx.query<{ host_id: string; name: string }>(
    `DELETE FROM forkbench.hosts WHERE board_id = $1 AND host_id <> $2 AND expires_at < clock_timestamp() RETURNING host_id, name`,
    [boardId, self],
  );
  if (!gone.rowCount) return [];
  const agents = await tx.query<{ agent_id: string; host_id: string; gone: boolean }>(
    'SELECT agent_id, host_id, gone FROM forkbench.agents WHERE board_id = $1 AND host_id = ANY($2::text[]) ORDER BY agent_id',
    [boardId, gone.rows.map((r) => r.host_id)],
  );
  return gone.rows
    .sort((x, y) => x.name.localeCompare(y.name))
    .map((h) => {
      const its = agents.rows.filter((a) => a.host_id === h.host_id);
      return { id: h.host_id, name: h.name, agents: its.map((a) => a.agent_id), running: its.filter((a) => !a.gone).length };
    });
}
