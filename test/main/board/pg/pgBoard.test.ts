/**
 * The board on a real PostgreSQL, opened by two hosts (two PgBoards, each with its own pool, as two machines
 * would be): one board, one order, one fence; tokens increase across hosts; keys land once; a database lost
 * mid-run refuses writes `board-unavailable` and comes back by itself with nothing acknowledged lost; a host
 * that stops renewing its own lease has its agents' claims ended `host-lost` by the other.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../../src-shared/board/events.js';
import { PgBoard } from '../../../../src-main/board/pg/pgBoard.js';
import { pgHostsForFile } from '../../../helpers/pgHosts.js';
import { waitFor } from '../../../helpers/pty.js';

/** Two hosts (or more) on one board, as two machines: each a pool and a data folder of its own. */
const hosts = pgHostsForFile({ name: 'git@example.com:team/app.git', threadId: 'thread-1', goal: 'ship it' });
const { freshDb, host } = hosts;

const seen = (b: PgBoard) => {
  const events: BoardEvent[] = [];
  b.onEvent((e) => events.push(e));
  return events;
};

describe('the board on PostgreSQL, two hosts', () => {
  it('is one board: a task added on A is seen on B, a claim on B fences A, tokens increase across hosts', async () => {
    const url = await freshDb();
    const a = await host(url, 'host-a');
    const b = await host(url, 'host-b');
    const onB = seen(b);
    expect(a.state.goal).toBe('ship it');
    expect(b.state.threadId).toBe('thread-1');
    const added = await a.run((e) => e.addTask({ title: 'first' }));
    expect(added.ok).toBe(true);
    await waitFor(() => onB.some((e) => e.kind === 'task-added'), 5000, 'B hears of the task');
    expect(b.state.tasks.get('T-1')?.title).toBe('first');
    a.hostAgent('agent-a');
    b.hostAgent('agent-b');
    const gb = await b.run((e) => e.claim('agent-b', 'T-1'));
    expect(gb.ok).toBe(true);
    // A decides after catching up under the board's lock: the claim B made is there, whatever A had heard.
    const ga = await a.run((e) => e.claim('agent-a', 'T-1'));
    expect(ga.ok ? 'granted' : ga.error.code).toBe('bad-state');
    await a.run((e) => e.addTask({ title: 'second' }));
    const g2 = await a.run((e) => e.claim('agent-a', 'T-2'));
    expect(g2.ok && gb.ok && g2.value.token > gb.value.token).toBe(true);
    // Both hosts hold the same log, in the same order.
    await waitFor(() => b.state.seq === a.state.seq, 5000, 'B catches up');
    expect(await a.log()).toEqual(await b.log());
    expect((await a.log()).map((e) => e.seq)).toEqual([...Array(a.state.seq).keys()].map((i) => i + 1));
  });

  it('two hosts granting the same task at the same moment: exactly one grant', async () => {
    const url = await freshDb();
    const a = await host(url, 'host-a');
    const b = await host(url, 'host-b');
    for (let i = 0; i < 20; i++) await a.run((e) => e.addTask({ title: `t${i}` }));
    // Each agent ends up holding about half of the 20: the person lets one agent claim that many.
    expect((await a.run((e) => e.setSettings({ claimLimit: 20 }))).ok).toBe(true);
    a.hostAgent('agent-a');
    b.hostAgent('agent-b');
    let grants = 0;
    for (let i = 1; i <= 20; i++) {
      const [ra, rb] = await Promise.all([a.run((e) => e.claim('agent-a', `T-${i}`)), b.run((e) => e.claim('agent-b', `T-${i}`))]);
      grants += Number(ra.ok) + Number(rb.ok);
      expect(Number(ra.ok) + Number(rb.ok)).toBe(1);
    }
    expect(grants).toBe(20);
    const log = await a.log();
    const tokens = log.filter((e) => e.kind === 'grant').map((e) => (e as { token: number }).token);
    expect(tokens).toEqual([...tokens].sort((x, y) => x - y));
    expect(new Set(tokens).size).toBe(20);
  });

  it('a key lands once, on either host; a key reused for another request is refused', async () => {
    const url = await freshDb();
    const a = await host(url, 'host-a');
    const b = await host(url, 'host-b');
    const k = { agentId: 'agent-a', key: 'k-1', hash: 'h-add-x' };
    const first = await a.runKeyed(k, (e) => e.addTask({ title: 'x' }, 'agent-a'), (t) => ({ id: t.id }));
    // The same request again, here and (as after a host restart) on the other host: the first outcome.
    const again = await a.runKeyed(k, (e) => e.addTask({ title: 'x' }, 'agent-a'), (t) => ({ id: t.id }));
    const elsewhere = await b.runKeyed(k, (e) => e.addTask({ title: 'x' }, 'agent-a'), (t) => ({ id: t.id }));
    expect(first).toEqual({ replayed: false, result: { ok: true, value: { id: 'T-1' } } });
    expect(again).toEqual({ replayed: true, result: { ok: true, value: { id: 'T-1' } } });
    expect(elsewhere).toEqual({ replayed: true, result: { ok: true, value: { id: 'T-1' } } });
    const reused = await a.runKeyed({ ...k, hash: 'h-other' }, (e) => e.addTask({ title: 'y' }, 'agent-a'), (t) => ({ id: t.id }));
    expect(reused.result.ok ? 'ok' : reused.result.error.code).toBe('key-reused');
    expect(a.state.tasks.size).toBe(1);
    // Two tries of one key in one transaction: still one task.
    const k2 = { agentId: 'agent-a', key: 'k-2', hash: 'h-add-z' };
    const both = await Promise.all([0, 1].map(() => a.runKeyed(k2, (e) => e.addTask({ title: 'z' }, 'agent-a'), (t) => ({ id: t.id }))));
    expect(both.map((r) => r.result)).toEqual([{ ok: true, value: { id: 'T-2' } }, { ok: true, value: { id: 'T-2' } }]);
    expect(await a.replay(k2)).toEqual({ ok: true, value: { id: 'T-2' } });
  });

  it('the database restarted (-m immediate) mid-run: writes are refused board-unavailable, then it recovers by itself; nothing acknowledged is lost', async () => {
    const url = await freshDb();
    const a = await host(url, 'host-a');
    let lost = 0;
    let back = 0;
    a.onReadOnly(() => lost++);
    a.onAvailable(() => back++);
    const acked: string[] = [];
    let stop = false;
    const refused: string[] = [];
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        const r = await a.run((e) => e.addTask({ title: `w${i}` }));
        if (r.ok) acked.push(r.value.title);
        else refused.push(r.error.code);
      }
    })();
    await waitFor(() => acked.length >= 20, 10_000, 'writes land');
    await hosts.pgc.stopServer('immediate');
    await waitFor(() => refused.length > 0, 10_000, 'a write refused while the database is down');
    expect(new Set(refused)).toEqual(new Set(['board-unavailable']));
    expect(a.readOnlyReason).toMatch(/cannot be reached/);
    await hosts.pgc.startServer();
    const at = acked.length;
    await waitFor(() => acked.length >= at + 20, 20_000, 'writes land again');
    stop = true;
    await writer;
    expect(lost).toBe(1);
    expect(back).toBeGreaterThanOrEqual(1);
    // Every acknowledged write is on the board after the crash, once.
    const fresh = await host(url, 'host-c');
    const titles = [...fresh.state.tasks.values()].map((t) => t.title);
    for (const t of acked) expect(titles).toContain(t);
    expect(new Set(titles).size).toBe(titles.length);
  });

  it('a host that stops renewing its lease has its agents’ claims ended host-lost by another host', async () => {
    const url = await freshDb();
    const timing = { renewMs: 100, lifetimeMs: 600 };
    const a = await host(url, 'host-a', { hostLease: timing });
    const b = await host(url, 'host-b', { hostLease: timing });
    await a.run((e) => e.addTask({ title: 'held by b' }));
    b.hostAgent('agent-b');
    expect((await b.run((e) => e.claim('agent-b', 'T-1'))).ok).toBe(true);
    const onA = seen(a);
    // B goes silent without a word (as a crash would): its lease stops being renewed.
    const started = performance.now();
    await b.close();
    const ended = await waitFor(() => onA.find((e) => e.kind === 'claim-ended'), 10_000, 'B’s claim ended');
    expect(ended).toMatchObject({ taskId: 'T-1', agentId: 'agent-b', reason: 'host-lost', to: 'open' });
    expect(performance.now() - started).toBeLessThan(timing.lifetimeMs + 5 * timing.renewMs + 1000);
    expect(a.state.tasks.get('T-1')?.claim).toBeNull();
  });

  it('a host’s clock running fast or slow changes no decision: expiry is the database server’s', async () => {
    const url = await freshDb();
    // One host's clock runs three times too fast (its sweep timer fires early), another's three times too slow
    // (its timer fires late): both decide on the server's time, read after the board's lock.
    const start = performance.now();
    const fast = await host(url, 'host-fast', { localClock: () => start + (performance.now() - start) * 3 });
    fast.hostAgent('agent-f');
    await fast.run((e) => e.setSettings({ leaseMs: 2000 }));
    await fast.run((e) => e.addTask({ title: 'one' }));
    const onFast = seen(fast);
    const asked = performance.now();
    const g = await fast.run((e) => e.claim('agent-f', 'T-1'));
    if (!g.ok) throw new Error(g.error.message);
    const ended = await waitFor(() => onFast.find((e) => e.kind === 'claim-ended'), 10_000, 'the lapse');
    // In real time too: a host deciding on its own clock would lapse it after a third of the lease.
    expect(performance.now() - asked).toBeGreaterThanOrEqual(2000);
    // Not a millisecond before its deadline on the server's clock, though this host's clock was far ahead.
    expect(ended).toMatchObject({ reason: 'lapsed' });
    const deadline = (await fast.log()).find((e) => e.kind === 'grant')?.deadline as number;
    expect(ended.mono).toBeGreaterThanOrEqual(deadline);
    await fast.close();

    const slow = await host(url, 'host-slow', { localClock: () => start + (performance.now() - start) / 3 });
    slow.hostAgent('agent-s');
    await slow.run((e) => e.addTask({ title: 'two' }));
    const h = await slow.run((e) => e.claim('agent-s', 'T-2'));
    if (!h.ok) throw new Error(h.error.message);
    // This host believes a third of the lease has passed; the server knows it is over: the write is refused.
    await new Promise((r) => setTimeout(r, 2500));
    const late = await slow.run((e) => e.renew('agent-s', 'T-2', h.value.token));
    expect(late.ok ? 'renewed' : late.error.code).toBe('lapsed');
  });

  it('a host stopped inside its transaction, the board’s lock held, does not stall the board', async () => {
    const url = await freshDb();
    // A's connections answer nothing once A is "stopped" (its process alive, its sockets open, as SIGSTOP
    // leaves them); the stop lands as A appends its decision, after it took the board's lock.
    let stopped = false;
    const never = new Promise<never>(() => undefined);
    class StoppablePool extends pg.Pool {
      override async connect(): Promise<pg.PoolClient> {
        const c = await super.connect();
        const query = c.query.bind(c) as (...a: unknown[]) => Promise<unknown>;
        (c as unknown as { query: (...a: unknown[]) => Promise<unknown> }).query = (...a: unknown[]) => {
          if (armed && typeof a[0] === 'string' && a[0].includes('INSERT INTO forkbench.events')) stopped = true;
          return stopped ? never : query(...a);
        };
        return c;
      }
      override query(...a: unknown[]): never {
        if (stopped) return never as never;
        return (super.query as (...a: unknown[]) => never)(...a);
      }
    }
    let armed = false;
    const timing = { renewMs: 200, lifetimeMs: 600 };
    const poolA = new StoppablePool({ connectionString: url, max: 4 });
    poolA.on('error', () => undefined);
    const dirA = hosts.tmp('fb-pgboard-');
    const a = await PgBoard.open({ pool: poolA, name: 'git@example.com:team/app.git', dir: dirA, hostId: 'host-a', hostName: 'host-a', threadId: 'thread-1', warn: () => undefined, hostLease: timing });
    const b = await host(url, 'host-b', { hostLease: timing });
    await a.run((e) => e.addTask({ title: 'held by a' }));
    await a.run((e) => e.addTask({ title: 'for b' }));
    a.hostAgent('agent-a');
    b.hostAgent('agent-b');
    expect((await a.run((e) => e.claim('agent-a', 'T-1'))).ok).toBe(true);
    armed = true;
    void a.run((e) => e.note('agent-a', 'T-1', 'never lands'));
    await waitFor(() => stopped, 5000, 'A to stop inside its transaction');
    const stoppedAt = performance.now();
    // The server ends A's idle transaction (2 s at the least): B's writes go on, and B ends A's claim host-lost.
    const claimB = await b.run((e) => e.claim('agent-b', 'T-2'));
    expect(claimB.ok ? 'granted' : claimB.error).toBe('granted');
    expect(performance.now() - stoppedAt).toBeLessThan(10_000);
    await waitFor(() => b.state.tasks.get('T-1')?.lastClaim?.reason === 'host-lost', 10_000, 'B to end A’s claim host-lost');
    expect((await b.log()).some((e) => e.kind === 'note' && e.text === 'never lands')).toBe(false);
    // A is left stopped; its board is not closed (its pool's statements never answer).
    void poolA;
  }, 60_000);

  it('a busy host told by the database that its lease lapsed joins again as a new incarnation, ends its claims host-lost, and its writes land again', async () => {
    const url = await freshDb();
    const a = await host(url, 'host-a', { hostLease: { renewMs: 60_000, lifetimeMs: 120_000 } });
    a.hostAgent('agent-a');
    await a.run((e) => e.addTask({ title: 'held' }));
    expect((await a.run((e) => e.claim('agent-a', 'T-1'))).ok).toBe(true);
    let lapsed = -1;
    a.onHostLapsed((n) => (lapsed = n));
    let stop = false;
    const codes: string[] = [];
    // Writes keep coming, so every transaction has company in the queue.
    const writers = [0, 1, 2, 3].map(async (w) => {
      for (let i = 0; !stop; i++) {
        const r = await a.run((e) => e.addTask({ title: `w${w}-${i}` }));
        codes.push(r.ok ? 'ok' : r.error.code);
      }
    });
    await waitFor(() => codes.length > 20, 10_000, 'writes');
    // The database says A's lease is over (as after a pause longer than it).
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`UPDATE forkbench.hosts SET expires_at = clock_timestamp() - interval '1 second' WHERE host_id = 'host-a'`);
    await c.end();
    await waitFor(() => lapsed >= 0, 10_000, 'A to join again');
    const at = codes.length;
    await waitFor(() => codes.slice(at).filter((x) => x === 'ok').length > 20, 10_000, 'writes to land again');
    stop = true;
    await Promise.all(writers);
    expect(lapsed).toBe(1);
    expect(a.state.tasks.get('T-1')?.lastClaim?.reason).toBe('host-lost');
  }, 60_000);
});
