/**
 * An outage is nobody's fault (issue 45): two hosts on a real PostgreSQL whose agents hold claims and keep
 * renewing them; the database is stopped for three host leases (longer than the claims' own lease too) in the
 * middle of their work. When it is back no claim of a live agent on a live host has ended: the first
 * transaction moved every running lease on by the outage, on the database's clock. The contrast: one host cut
 * off from the database while the other goes on is lost as before (host-lost), and no lease is moved on.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../../src-shared/board/events.js';
import type { PgBoard } from '../../../../src-main/board/pg/pgBoard.js';
import { outageAfterMs } from '../../../../src-main/board/pg/outage.js';
import { openCutLink, type CutLink } from '../../../helpers/cutLink.js';
import { pgHostsForFile } from '../../../helpers/pgHosts.js';
import { waitFor } from '../../../helpers/pty.js';

/** Short host leases, so three of them make an outage of about two seconds. */
const TIMING = { renewMs: 200, lifetimeMs: 600 };
/** The claims' own lease: shorter than the outage, so a claim not moved on would lapse. */
const CLAIM_LEASE_MS = 1200;
/** Three host leases, and longer than a claim's lease. */
const OUTAGE_MS = Math.max(3 * TIMING.lifetimeMs, CLAIM_LEASE_MS + 400);
/** How often an agent that is working renews its claim. */
const WORK_EVERY_MS = 100;

const hosts = pgHostsForFile({ name: 'git@example.com:team/app.git', threadId: 'thread-1', hostLease: TIMING });
const links: CutLink[] = [];
afterEach(async () => {
  for (const l of links.splice(0)) await l.close();
});
const host = hosts.host;

const seen = (b: PgBoard): BoardEvent[] => {
  const events: BoardEvent[] = [];
  b.onEvent((e) => events.push(e));
  return events;
};

/** An agent at work: it renews its claim every WORK_EVERY_MS through its own host, whatever the answer. */
function working(board: PgBoard, agentId: string, taskId: string, token: number): { ok: () => number; stop: () => Promise<void> } {
  let stop = false;
  let ok = 0;
  const loop = (async () => {
    while (!stop) {
      const r = await board.run((e) => e.renew(agentId, taskId, token));
      if (r.ok) ok++;
      await new Promise((res) => setTimeout(res, WORK_EVERY_MS));
    }
  })();
  return {
    ok: () => ok,
    stop: async () => {
      stop = true;
      await loop;
    },
  };
}

describe('a database outage ends no claim', () => {
  it('the database stopped for three host leases while agents on two hosts hold claims and keep working: after it returns no claim has ended', async () => {
    expect(OUTAGE_MS).toBeGreaterThan(outageAfterMs(TIMING));
    const url = await hosts.freshDb();
    const a = await host(url, 'host-a');
    const b = await host(url, 'host-b');
    expect((await a.run((e) => e.setSettings({ leaseMs: CLAIM_LEASE_MS, claimLimit: 4 }))).ok).toBe(true);
    for (let i = 1; i <= 4; i++) expect((await a.run((e) => e.addTask({ title: `t${i}` }))).ok).toBe(true);
    const onA = seen(a);
    const onB = seen(b);
    let lapsedA = 0;
    let lapsedB = 0;
    a.onHostLapsed(() => lapsedA++);
    b.onHostLapsed(() => lapsedB++);
    const agents = [
      { board: a, id: 'agent-a1', task: 'T-1' },
      { board: a, id: 'agent-a2', task: 'T-2' },
      { board: b, id: 'agent-b1', task: 'T-3' },
      { board: b, id: 'agent-b2', task: 'T-4' },
    ];
    const tokens = new Map<string, number>();
    for (const g of agents) {
      g.board.hostAgent(g.id);
      const r = await g.board.run((e) => e.claim(g.id, g.task));
      if (!r.ok) throw new Error(r.error.message);
      tokens.set(g.task, r.value.token);
    }
    const work = agents.map((g) => working(g.board, g.id, g.task, tokens.get(g.task) as number));
    await waitFor(() => work.every((w) => w.ok() >= 3), 10_000, 'every agent at work');

    // Stopped in the middle of the agents' renewals: some are in flight as the server goes.
    await hosts.pgc.stopServer('immediate');
    const stoppedAt = performance.now();
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    await hosts.pgc.startServer();
    const outage = performance.now() - stoppedAt;

    // Every claim is moved on once, on both hosts (one host's transaction did it; the other follows it).
    const movedOn = (events: BoardEvent[]) => events.filter((e) => e.kind === 'renew' && e.via === 'outage');
    await waitFor(() => movedOn(onA).length === 4 && movedOn(onB).length === 4, 20_000, 'the outage made up for on both hosts');
    const after = work.map((w) => w.ok());
    await waitFor(() => work.every((w, i) => w.ok() >= (after[i] as number) + 3), 10_000, 'the agents’ renewals land again');
    await Promise.all(work.map((w) => w.stop()));

    expect(onA.filter((e) => e.kind === 'claim-ended')).toEqual([]);
    expect(onB.filter((e) => e.kind === 'claim-ended')).toEqual([]);
    expect([lapsedA, lapsedB]).toEqual([0, 0]);
    for (const g of agents) {
      expect(a.state.tasks.get(g.task)?.claim).toMatchObject({ agentId: g.id, token: tokens.get(g.task) });
      expect(b.state.tasks.get(g.task)?.claim).toMatchObject({ agentId: g.id, token: tokens.get(g.task) });
    }
    // Moved on by about the outage as the database measured it: at least its stop, at most what the test saw.
    const log = await a.log();
    for (const e of movedOn(log)) {
      if (e.kind !== 'renew') continue;
      const before = log.filter((x): x is Extract<BoardEvent, { kind: 'renew' | 'grant' }> => (x.kind === 'renew' || x.kind === 'grant') && x.taskId === e.taskId && x.seq < e.seq).at(-1);
      const by = e.deadline - (before?.deadline ?? 0);
      expect(by).toBeGreaterThanOrEqual(OUTAGE_MS - 50);
      expect(by).toBeLessThanOrEqual(outage + 5_000);
    }
    // The outage is made up for once: a later quiet-free run moves nothing again.
    expect(movedOn(log)).toHaveLength(4);
  }, 60_000);

  it('a host that left is not brought back when a board left quiet is made up for', async () => {
    const url = await hosts.freshDb();
    const a = await host(url, 'host-a');
    expect((await a.run((e) => e.addTask({ title: 'one' }))).ok).toBe(true);
    await a.close();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const endOf = async (id: string) => (await c.query<{ at: string }>('SELECT expires_at::text AS at FROM forkbench.hosts WHERE host_id = $1', [id])).rows[0]?.at;
    try {
      const ended = await endOf('host-a');
      // Nobody on the board for longer than an outage: the next host's join makes up for the quiet.
      await new Promise((r) => setTimeout(r, 2 * outageAfterMs(TIMING)));
      const b = await host(url, 'host-b');
      expect(b.state.tasks.get('T-1')?.title).toBe('one');
      expect(await endOf('host-a')).toBe(ended);
      const live = await c.query<{ host_id: string }>('SELECT host_id FROM forkbench.hosts WHERE expires_at > clock_timestamp() ORDER BY host_id');
      expect(live.rows.map((r) => r.host_id)).toEqual(['host-b']);
    } finally {
      await c.end();
    }
  }, 30_000);

  it('a host cut off from the database while another goes on is still lost: its claims end host-lost and no lease is moved on', async () => {
    const db = 'cut-off';
    const url = await hosts.pgc.createDatabase(db);
    const link = await openCutLink(hosts.pgc.socketDir);
    links.push(link);
    const a = await host(url, 'host-a');
    const b = await host(link.url(db), 'host-b');
    expect((await a.run((e) => e.setSettings({ leaseMs: 60_000 }))).ok).toBe(true);
    expect((await a.run((e) => e.addTask({ title: 'held by b' }))).ok).toBe(true);
    b.hostAgent('agent-b');
    expect((await b.run((e) => e.claim('agent-b', 'T-1'))).ok).toBe(true);
    const onA = seen(a);
    let lapsedB = 0;
    b.onHostLapsed(() => lapsedB++);

    link.cut();
    const ended = await waitFor(() => onA.find((e) => e.kind === 'claim-ended'), 20_000, 'B’s claim ended by A');
    expect(ended).toMatchObject({ taskId: 'T-1', agentId: 'agent-b', reason: 'host-lost' });
    // Cut off for three of its leases while A renews: no outage, for A or for B when it is back.
    await new Promise((r) => setTimeout(r, 3 * TIMING.lifetimeMs));
    link.mend();
    await waitFor(() => lapsedB > 0, 20_000, 'B to learn its lease lapsed and join again');
    expect(onA.filter((e) => e.kind === 'renew' && e.via === 'outage')).toEqual([]);
    expect((await a.log()).filter((e) => e.kind === 'renew' && e.via === 'outage')).toEqual([]);
    expect(b.state.tasks.get('T-1')?.claim).toBeNull();
  }, 60_000);
});
