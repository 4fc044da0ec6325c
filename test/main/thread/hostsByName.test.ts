import * as fs from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Notice } from '../../../src-shared/notices/notices.js';
import type { WindowPush } from '../../../src-shared/protocol/windowApi.js';
import { PgBoard } from '../../../src-main/board/pg/pgBoard.js';
import { HostNameTakenError } from '../../../src-main/board/pg/hostName.js';
import { hostLeaseOf } from '../../../src-main/board/openBoard.js';
import type { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { hostFixture } from '../../helpers/hosts.js';
import { startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';
import { waitFor } from '../../helpers/pty.js';

/**
 * Issue 45, item 5: hosts by name. Three hosts of one machine name on one PostgreSQL board (as three data
 * folders, or three machines all called "buildbox") are told apart by name; a name a person chose is one
 * host's only, the database deciding between two that ask at once; a host that leaves, and one that is lost,
 * is said once in the windows of every other host. Real ThreadHosts (each its own data folder, so its own host
 * id) on a real PostgreSQL.
 */
const fixture = hostFixture('hosts-by-name');
let pgc: PgCluster;
let db = 0;
/** A short host lease, so a host that stops renewing is lost in a second or two: given to each host. */
const HOST_LEASE = hostLeaseOf('1500');
const pools: pg.Pool[] = [];
const boards: PgBoard[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  pgc = await startPgCluster({ fsync: false });
});
afterAll(async () => {
  await pgc?.dispose();
});
afterEach(async () => {
  await fixture.cleanup();
  for (const b of boards.splice(0)) await b.close();
  for (const p of pools.splice(0)) await p.end();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A fresh database, and the setting that opens one board in it from any host. */
async function sharedBoard() {
  const url = await pgc.createDatabase(`names${++db}`);
  return { url, name: 'one board of three hosts' };
}

/** `n` hosts of this machine (each its own data folder) on one board. */
async function hosts(n: number): Promise<{ all: ThreadHost[]; url: string }> {
  const setting = await sharedBoard();
  const all: ThreadHost[] = [];
  for (let i = 0; i < n; i++) all.push(await fixture.open({ sharedBoard: setting, hostLease: HOST_LEASE }));
  return { all, url: setting.url };
}

const pgOf = (h: ThreadHost) => h.board as PgBoard;

/** Every notice a host's windows were pushed, from now on. */
function pushed(h: ThreadHost): Notice[] {
  const got: Notice[] = [];
  h.notices.onPush.event((p: WindowPush) => p.type === 'notify' && got.push(p));
  return got;
}

describe('hosts by name on a shared board', () => {
  it('three hosts of one machine name get three names, each the machine name and a tag of its id; each lists the others’ agents by them', async () => {
    const { all, url } = await hosts(3);
    const names = all.map((h) => pgOf(h).hostName);
    expect(new Set(names).size).toBe(3);
    for (const n of names) expect(n).toMatch(new RegExp(`^${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-[0-9a-f]{4}$`));
    // The names are each host's for good: the tag comes from the id its data folder keeps.
    const rows = await new pg.Pool({ connectionString: url, max: 1 });
    pools.push(rows);
    expect((await rows.query<{ name: string }>('SELECT name FROM forkbench.hosts ORDER BY name')).rows.map((r) => r.name)).toEqual([...names].sort());
    all.forEach((h, i) => h.board.membership!.hostAgent(`agent-${i}`, { name: 'shell 1', profile: 'shell' }));
    // Each window lists the other two hosts' "shell 1", each on its own host's name.
    for (const [i, h] of all.entries()) {
      await waitFor(() => h.board.membership!.peers().length === 2, 20_000, `host ${i} to list the others' agents`);
      expect(h.board.membership!.peers().map((p) => [p.id, p.host]).sort()).toEqual(all.flatMap((_, j) => (j === i ? [] : [[`agent-${j}`, names[j]]])).sort());
      expect(all[(i + 1) % 3]!.roster.nameOf(`agent-${i}`)).toBe(`shell 1 on ${names[i]}`);
    }
  });

  it('a name a person chose is one host’s: two asking for it at once, the database gives it to one and refuses the other, which wrote nothing', async () => {
    const { url, name } = await sharedBoard();
    const open = async (hostId: string) => {
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      pool.on('error', () => undefined);
      pools.push(pool);
      const dir = fs.mkdtempSync(join(tmpdir(), 'fb-hostname-'));
      dirs.push(dir);
      const b = await PgBoard.open({ pool, name, dir, hostId, hostName: 'buildbox', hostNameChosen: 'alpha', threadId: 't', goal: '', warn: () => undefined });
      boards.push(b);
      return b;
    };
    const [x, y] = await Promise.allSettled([open('host-x'), open('host-y')]);
    const won = [x, y].filter((r) => r.status === 'fulfilled');
    const lost = [x, y].filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.reason).toBeInstanceOf(HostNameTakenError);
    expect((lost[0]!.reason as Error).message).toBe(
      `another host of the shared board "${name}" runs under the name "alpha": give this one another name (serve --host-name NAME), or stop that one first. Nothing was written to the board.`,
    );
    const winner = (won[0] as PromiseFulfilledResult<PgBoard>).value;
    expect(winner.hostName).toBe('alpha');
    const rows = await pools[0]!.query<{ host_id: string; name: string }>('SELECT host_id, name FROM forkbench.hosts');
    // The refused host left no row: the name and its lease are the winner's alone.
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0]!.name).toBe('alpha');
    // Once the winner leaves, the name is free: the other host takes it.
    await winner.close();
    const loser = rows.rows[0]!.host_id === 'host-x' ? 'host-y' : 'host-x';
    expect((await open(loser)).hostName).toBe('alpha');
  });

  it('a host that leaves, and one that is lost, is said once in the windows of every other host, by its name', async () => {
    const { all } = await hosts(3);
    const [stays, leaves, lost] = all as [ThreadHost, ThreadHost, ThreadHost];
    const names = all.map((h) => pgOf(h).hostName);
    const onStays = pushed(stays);
    const onLost = pushed(lost);
    const onLeaves = pushed(leaves);
    // The host that will be lost runs an agent holding a claim; the one that leaves, an agent holding none.
    lost.board.membership!.hostAgent('agent-lost', { name: 'shell 1', profile: 'shell' });
    leaves.board.membership!.hostAgent('agent-leaves', { name: 'shell 1', profile: 'shell' });
    const t = await lost.board.run((e) => e.addTask({ title: 'held on the lost host' }));
    if (!t.ok) throw new Error(t.error.message);
    expect((await lost.board.run((e) => e.claim('agent-lost', t.value.id))).ok).toBe(true);
    await waitFor(() => stays.board.membership!.peers().length === 2 && lost.board.membership!.peers().length === 1, 20_000, 'every host to list the others’ agents');

    // Left: its stop ends its claims and its lease at once.
    await leaves.dispose();
    const leftNotice = (n: Notice) => n.title === `Host ${names[1]} left the board`;
    await waitFor(() => onStays.some(leftNotice) && onLost.some(leftNotice), 20_000, 'the others to hear it left');
    expect(onStays.find(leftNotice)?.body).toBe(`${names[1]} stopped and left the shared board: its agent is no longer listed here.`);
    await waitFor(() => stays.board.membership!.peers().every((p) => p.host !== names[1]), 20_000, 'its agent to leave the list');

    // Lost: it goes with its agent holding a claim (kept, as serve --keep-agents does), and never comes back.
    await lost.leave();
    const lostNotice = (n: Notice) => n.title === `Host ${names[2]} was lost`;
    await waitFor(() => onStays.some(lostNotice), 20_000, 'the remaining host to hear it was lost');
    expect(onStays.find(lostNotice)?.body).toBe(
      `${names[2]} stopped renewing its lease on the shared board (it crashed, was paused or cut off): its agent is no longer listed here, and 1 claim was ended (host-lost): its task is free to claim.`,
    );
    expect(stays.board.state.tasks.get(t.value.id)?.claim).toBeNull();
    expect(stays.board.logTail(20).filter((e) => e.kind === 'host-gone')).toMatchObject([
      { host: { name: names[1] }, how: 'left', agents: 1, claims: 0 },
      { host: { name: names[2] }, how: 'lost', agents: 1, claims: 1 },
    ]);

    // Once: another round trip of the board later, each was said once in each window, and kept once for a
    // window opened later; the host that went was told nothing of itself.
    const t2 = await stays.board.run((e) => e.addTask({ title: 'after' }));
    expect(t2.ok).toBe(true);
    expect(onStays.filter(leftNotice)).toHaveLength(1);
    expect(onStays.filter(lostNotice)).toHaveLength(1);
    expect(onLost.filter(leftNotice)).toHaveLength(1);
    expect(stays.notices.current().filter((n) => leftNotice(n) || lostNotice(n))).toHaveLength(2);
    expect(onLeaves.filter(leftNotice)).toHaveLength(0);
  });
});
