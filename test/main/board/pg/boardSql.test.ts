/**
 * The deciding transaction's first statement on a real PostgreSQL: it takes the board's lock, and the server
 * time it returns is read only once the lock is held. A time read while the statement still waited for another
 * host's transaction would let this host decide expiry at a moment before that host's decisions.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../../src-shared/board/events.js';
import { append, boardIdFor, inOrder, keyId, lockTimeAndLease, rowsAndKeys } from '../../../../src-main/board/pg/boardSql.js';
import { migrate } from '../../../../src-main/board/pg/migrate.js';
import { startPgCluster, type PgCluster } from '../../../helpers/pgCluster.js';
import { waitFor } from '../../../helpers/pty.js';

let pgc: PgCluster;
let a: pg.Client;
let b: pg.Client;
/** A connection that pipelines, as a host's pool's do (connectPool). */
let p: pg.Client;
let boardId: string;

beforeAll(async () => {
  // fsync off: this is about locks and clocks, not durability.
  pgc = await startPgCluster({ fsync: false });
  const url = await pgc.createDatabase('sql');
  a = new pg.Client({ connectionString: url });
  b = new pg.Client({ connectionString: url });
  p = new pg.Client({ connectionString: url, pipeline: true });
  await a.connect();
  await b.connect();
  await p.connect();
  await migrate(a);
  boardId = await boardIdFor(a, 'board');
});
afterAll(async () => {
  await a?.end();
  await b?.end();
  await p?.end();
  await pgc?.dispose();
});

const headNow = async () => Number((await a.query<{ head: string }>('SELECT head FROM forkbench.boards WHERE id = $1', [boardId])).rows[0]!.head);

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

describe('a transaction sent at once (inOrder on a pipelining connection)', () => {
  it('reads, right behind the lock, what the holder committed while it waited: its rows up to the head and its keys', async () => {
    const from = await headNow();
    await a.query('BEGIN');
    await a.query('SELECT head FROM forkbench.boards WHERE id = $1 FOR UPDATE', [boardId]);
    // All three statements go out before any answer: the read's snapshot must still be taken after the lock.
    const sent = inOrder<[unknown, Awaited<ReturnType<typeof lockTimeAndLease>>, Awaited<ReturnType<typeof rowsAndKeys>>]>(p, [
      () => p.query('BEGIN'),
      () => lockTimeAndLease(p, boardId, 'host-p', 'incarnation-p'),
      () => rowsAndKeys(p, boardId, from, [{ agentId: 'agent-1', key: 'k-1' }, { agentId: 'agent-1', key: 'k-never' }]),
    ]);
    await waitFor(() => waitsForLock(p), 10_000, 'the pipelined transaction waits for the board’s lock');
    const event = { kind: 'note', seq: from + 1, at: 0, taskId: 'T-1', text: 'landed while the other waited' } as unknown as BoardEvent;
    await append(a, boardId, [event], [{ agent: 'agent-1', key: 'k-1', hash: 'h-1', outcome: { ok: true, value: 7 } }]);
    await a.query('COMMIT');
    const [, locked, ahead] = await sent;
    await p.query('COMMIT');
    expect(locked.head).toBe(from + 1);
    expect(ahead.rows).toEqual([{ seq: from + 1, body: JSON.stringify(event) }]);
    expect([...ahead.keys.keys()]).toEqual([keyId('agent-1', 'k-1')]);
    expect(ahead.keys.get(keyId('agent-1', 'k-1'))).toMatchObject({ hash: 'h-1', outcome: { ok: true, value: 7 } });
  });

  it('throws the first failure once every statement has settled, and the connection goes on after a rollback', async () => {
    for (const c of [p, b]) {
      let ran = false;
      await expect(
        inOrder(c, [
          () => c.query('BEGIN'),
          () => c.query('SELECT 1 / 0'),
          () => {
            ran = true;
            return c.query('SELECT 1');
          },
        ]),
      ).rejects.toThrow(/division by zero/);
      // Pipelined, the statement behind the failure was sent and failed too (and was handled); sent one by
      // one, it was never sent.
      expect(ran).toBe(c === p);
      await c.query('ROLLBACK');
      expect((await c.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
    }
  });
});
