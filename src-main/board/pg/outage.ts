import type { ClientBase } from 'pg';
import { QUIET_MS } from './boardSql.js';
import type { HostLeaseTimes } from './hostLease.js';

/**
 * An outage is nobody's fault. While the database cannot be reached no host can renew its lease and no agent
 * its claims, though every one of them may be working; when it answers again, each lease would be judged by a
 * clock that ran on while nobody could speak. So, as etcd extends every lease when a new leader takes over,
 * the first transaction after an outage (any host's, under the board's lock) moves every deadline that was
 * still running when the board went quiet on by the outage's length, measured on the database's clock; then
 * the normal rules apply.
 *
 * What tells an outage from a host that stopped: the board is quiet only when no host renewed and nothing was
 * written. A host that was itself stopped or cut off while others went on finds the board was never quiet,
 * and its lease is judged as before.
 */

/**
 * How long the board must have been quiet to count as an outage: two renewal periods. Every live host renews
 * once a period, so a board with any host running is never quiet for longer than one period and the time a
 * renewal takes; a bound at one period would take a late renewal for an outage and extend every lease by a few
 * seconds, again and again, and a claim of a dead agent would never run out.
 */
export function outageAfterMs(timing: typeof HostLeaseTimes): number {
  return 2 * timing.renewMs;
}

/** How long the board has been quiet, read afresh (a new statement sees renewals committed while it waited). */
export async function quietMs(tx: ClientBase, boardId: string): Promise<number> {
  const r = await tx.query<{ quiet: number }>(`SELECT ${QUIET_MS('written_at')} AS quiet FROM forkbench.boards WHERE id = $1`, [boardId]);
  return r.rows[0]?.quiet ?? 0;
}

/**
 * Inside the board's transaction, with its lock held: every host whose lease still ran when the board went
 * quiet gets the outage added to it (a host lapsed before then stays lapsed), and this host learns whether its
 * own lease holds now. The caller extends the claims in the same transaction and writes, which ends the quiet.
 */
export async function extendHosts(tx: ClientBase, boardId: string, quiet: number, hostId: string, incarnation: string): Promise<{ hosts: number; hostLive: boolean }> {
  const r = await tx.query<{ live: boolean }>(
    `UPDATE forkbench.hosts SET expires_at = expires_at + $2 * interval '1 millisecond'
      WHERE board_id = $1 AND expires_at > clock_timestamp() - $2 * interval '1 millisecond'
      RETURNING (host_id = $3 AND incarnation = $4 AND expires_at > clock_timestamp()) AS live`,
    [boardId, quiet, hostId, incarnation],
  );
  return { hosts: r.rowCount ?? 0, hostLive: r.rows.some((row) => row.live) };
}
