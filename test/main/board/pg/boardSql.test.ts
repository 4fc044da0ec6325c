/**
 * The deciding transaction's first statement on a real PostgreSQL: it takes the board's lock, and the server
 * time it returns is read only once the lock is held. A time read while the statement still waited for another
 * host's transaction would let this host decide expiry at a moment before that host's decisions.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boardIdFor, lockTimeAndLease } from '../../../../src-main/board/pg/boardSql.js';
import { migrate } from '../../../../src-main/board/pg/migrate.js';
import { startPgCluster, type PgCluster } from '../../../helpers/pgCluster.js';
import { waitFor } from '../../../helpers/pty.js';

let pgc: PgCluster;
let a: pg.Client;
let b: pg.Client;
let boardId: string;

beforeAll(async () => {
  // fsync off: this is about locks and clocks, not durability.
  pgc = await startPgCluster({ fsync: false });
  const url = await pgc.createDatabase('sql');
  a = new pg.Client({ connectionString: url });
  b = new pg.Client({ connectionString: url });
  await a.connect();
  await b.connect();
  await migrate(a);
  boardId = await boardIdFor(a, 'board');
});
afterAll(async () => {
  await a?.end();
  await b?.end();
  await pgc?.dispose();
});

/** Whether `c`'s backend waits for a lock now. */
async function waitsForLock(c: pg.Client): Promise<boolean> {
  const pid = (c as unknown as { processID: number }).processID;
  const r = await a.query('SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted', [pid]);
  return r.rowCount === 1;
}

describe('lockTimeAndLease', () => {
  // Both ways another host's transaction ends: having moved the board's head (a write), or not (nothing to
  // write). Without an update PostgreSQL does not re-evaluate the waiting row, so a time read in the locking
  // scan itself would be from before the wait.
  for (const holderWrites of [false, true]) {
    it(`reads the server's time after the board's lock is granted (the holder ${holderWrites ? 'wrote' : 'wrote nothing'})`, async () => {
      await a.query('BEGIN');
      await a.query('SELECT head FROM forkbench.boards WHERE id = $1 FOR UPDATE', [boardId]);
      await b.query('BEGIN');
      const decided = lockTimeAndLease(b, boardId, 'host-b', 'incarnation-b');
      await waitFor(() => waitsForLock(b), 10_000, 'B waits for the board’s lock');
      if (holderWrites) await a.query('UPDATE forkbench.boards SET head = head + 1 WHERE id = $1', [boardId]);
      const released = (await a.query<{ t: number }>('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS t')).rows[0]!.t;
      await a.query('COMMIT');
      const got = await decided;
      await b.query('COMMIT');
      expect(got.now).toBeGreaterThan(released);
      expect(got.hostLive).toBe(false);
      expect(got.head).toBe(Number((await a.query<{ head: string }>('SELECT head FROM forkbench.boards WHERE id = $1', [boardId])).rows[0]!.head));
    });
  }
});
