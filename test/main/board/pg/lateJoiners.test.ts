/**
 * Writes that queue while a host's transaction waits for the board's lock join that transaction once the lock
 * is held (pgBoard's lateJoiners, issue 45: two hosts' p99), and a late joiner that is the retry of a write the
 * board already stored (here on another host) is still answered with its first outcome, never done twice: its
 * key was not read under the lock, so the transaction checks it before committing (keysUnseen) and is decided
 * again with it read.
 *
 * The board's lock is held by a connection of the test's own (what another host's transaction does), so the
 * host's transaction is seen waiting for it in pg_stat_activity before the later writes are sent.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { PgBoard } from '../../../../src-main/board/pg/pgBoard.js';
import { BoardLimits } from '../../../../src-shared/board/limits.js';
import { pgHostsForFile } from '../../../helpers/pgHosts.js';
import { waitFor } from '../../../helpers/pty.js';

const { freshDb, host } = pgHostsForFile({ name: 'late-joiners', threadId: 'thread-1', goal: 'ship it' });

/** Each deciding transaction reads the board's time once (decisionTime): counting its calls counts them. */
function countingClock(): { now: () => number; decisions: () => number } {
  let n = 0;
  return {
    now: () => {
      n++;
      return Date.now();
    },
    decisions: () => n,
  };
}

const blockers: pg.Client[] = [];
afterEach(async () => {
  for (const c of blockers.splice(0)) await c.end().catch(() => undefined);
});

/** The board's row locked by another connection, as another host's transaction holds it; `release` commits. */
async function holdBoardLock(url: string, board: PgBoard): Promise<{ release: () => Promise<void> }> {
  const c = new pg.Client({ connectionString: url });
  blockers.push(c);
  await c.connect();
  await c.query('BEGIN');
  await c.query('SELECT head FROM forkbench.boards WHERE id = $1 FOR UPDATE', [board.boardId]);
  return { release: async () => void (await c.query('COMMIT')) };
}

/** Until one of the host's connections waits for a lock (its transaction, behind holdBoardLock's). */
async function hostWaitsForLock(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  blockers.push(c);
  await c.connect();
  await waitFor(
    async () => Number((await c.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows[0]?.n) > 0,
    10_000,
    "the host's transaction to wait for the board's lock",
  );
}

describe("writes queued while a host waits for the board's lock", () => {
  it('join the transaction that was waiting: one decision for all of them, in the order they came', async () => {
    const url = await freshDb();
    const clock = countingClock();
    const a = await host(url, 'host-a', { decisionTime: clock.now });
    const lock = await holdBoardLock(url, a);
    const before = clock.decisions();
    const first = a.run((e) => e.addTask({ title: 'first' }));
    await hostWaitsForLock(url);
    // Sent while the transaction carrying `first` waits: before, each went into the next transaction.
    const second = a.runKeyed({ agentId: 'agent-1', key: 'k-2', hash: 'h-2' }, (e) => e.addTask({ title: 'second' }, 'agent-1'), (t) => t.id);
    const third = a.run((e) => e.addTask({ title: 'third' }));
    await lock.release();
    const [r1, r2, r3] = await Promise.all([first, second, third]);
    expect([r1.ok, r2.result.ok, r2.replayed, r3.ok]).toEqual([true, true, false, true]);
    expect(clock.decisions() - before).toBe(1);
    expect([...a.state.tasks.values()].map((t) => `${t.id} ${t.title}`)).toEqual(['T-1 first', 'T-2 second', 'T-3 third']);
    // The joiner's key was stored with the rest: its retry is answered with its first outcome.
    const again = await a.runKeyed({ agentId: 'agent-1', key: 'k-2', hash: 'h-2' }, (e) => e.addTask({ title: 'second' }, 'agent-1'), (t) => t.id);
    expect(again).toEqual({ replayed: true, result: { ok: true, value: 'T-2' } });
  });

  it('a joiner that retries a write another host already stored is answered its first outcome, and done once', async () => {
    const url = await freshDb();
    const clock = countingClock();
    const a = await host(url, 'host-a', { decisionTime: clock.now });
    const b = await host(url, 'host-b');
    const key = { agentId: 'agent-1', key: 'k-once', hash: 'h-once' };
    // The first try landed through host B (its answer lost, say); the CLI sends it again, through host A.
    const landed = await b.runKeyed(key, (e) => e.addTask({ title: 'once' }, 'agent-1'), (t) => t.id);
    expect(landed).toEqual({ replayed: false, result: { ok: true, value: 'T-1' } });
    const lock = await holdBoardLock(url, a);
    const before = clock.decisions();
    const other = a.run((e) => e.addTask({ title: 'other' }));
    await hostWaitsForLock(url);
    const retry = a.runKeyed(key, (e) => e.addTask({ title: 'once' }, 'agent-1'), (t) => t.id);
    await lock.release();
    const [o, r] = await Promise.all([other, retry]);
    expect(r).toEqual({ replayed: true, result: { ok: true, value: 'T-1' } });
    expect(o).toEqual({ ok: true, value: expect.objectContaining({ id: 'T-2', title: 'other' }) });
    // Decided as new with the rest, found stored before COMMIT, and decided again with its key read: two
    // decisions, one of them rolled back.
    expect(clock.decisions() - before).toBe(2);
    expect([...a.state.tasks.values()].map((t) => t.title)).toEqual(['once', 'other']);
    expect((await a.log()).filter((e) => e.kind === 'task-added').length).toBe(2);
    // The database is as available as before: the check's failure was the board's answer, not an outage.
    expect(a.readOnlyReason).toBeNull();
  });

  it('the writes of a transaction decided again take their agent’s write quota once, not once per decision', async () => {
    const url = await freshDb();
    // The board's time stands still in every decision: the agent's quota refills by nothing while it is counted.
    const frozen = Date.now();
    const a = await host(url, 'host-a', { decisionTime: () => frozen });
    const b = await host(url, 'host-b');
    const key = { agentId: 'agent-1', key: 'k-once', hash: 'h-once' };
    await b.runKeyed(key, (e) => e.addTask({ title: 'once' }, 'agent-1'), (t) => t.id);
    const lock = await holdBoardLock(url, a);
    const other = a.run((e) => e.addTask({ title: 'other' }, 'agent-1'));
    await hostWaitsForLock(url);
    // Decided with `other`, found stored before COMMIT, rolled back: both decided again, `other` alone taking a write.
    const retry = a.runKeyed(key, (e) => e.addTask({ title: 'once' }, 'agent-1'), (t) => t.id);
    await lock.release();
    expect((await retry).replayed).toBe(true);
    expect((await other).ok).toBe(true);
    // Of its burst, agent-1 has used one write on this host (`other`): the rest are taken, and one more is refused.
    const left = BoardLimits.agentWriteBurst - 1;
    const writes = await Promise.all(Array.from({ length: left + 1 }, (_, i) => a.run((e) => e.addTask({ title: `w${i}` }, 'agent-1'))));
    expect(writes.filter((r) => r.ok)).toHaveLength(left);
    expect(writes.at(-1)).toMatchObject({ ok: false, error: { code: 'rate-limited' } });
  });
});
