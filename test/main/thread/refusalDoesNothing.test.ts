import * as fs from 'node:fs';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { errorOf } from '../../../src-main/base/procedureServer.js';
import { InstalledProfiles } from '../../../src-main/window/installedProfiles.js';
import { ThreadApi } from '../../../src-main/window/threadApi.js';
import { hostFixture } from '../../helpers/hosts.js';
import { startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';
import { waitFor } from '../../helpers/pty.js';

/**
 * Issue 45, item 3: every refusal means nothing was done. A relaunch refused while the shared board's
 * database is down started the new agent anyway (launched first, then the dead tab's close failed on its board
 * write), so a person who tried again got two; a close refused so had already ended the agent (its secret dead,
 * its tab exited) while its process ran on; and a window write whose pooled connection the server dropped
 * was answered with the driver's raw words rather than `board-unavailable`. Real hosts on a real PostgreSQL,
 * real panes.
 */
const fixture = hostFixture('refusal-nothing');
let pgc: PgCluster;
/** The server this file stopped: a test that fails in its outage leaves it running again for the next. */
let stopped = false;
afterEach(async () => {
  if (stopped) await pgc.startServer();
  stopped = false;
  await fixture.cleanup();
});
beforeAll(async () => {
  pgc = await startPgCluster({ fsync: false });
});
afterAll(() => pgc?.dispose());

/** An odd length of sleep: its processes are this test's agents and no other test's (sleep takes seconds). */
const SLEEP = '86393';
const AGENT = `exec sleep ${SLEEP}`;

/** The processes of this machine running `sleep SLEEP`: an agent's, sandboxed or not (/proc shows them all). */
function sleepers(): number[] {
  const out: number[] = [];
  for (const pid of fs.readdirSync('/proc').filter((f) => /^\d+$/.test(f))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${SLEEP}\0`) out.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** What a window is answered for what a handler threw. */
async function answerOf(p: Promise<unknown>): Promise<{ code: string; message: string } | 'done'> {
  try {
    await p;
    return 'done';
  } catch (err) {
    return errorOf(err);
  }
}

describe('a refusal leaves nothing done (shared board)', () => {
  it('a relaunch refused while the database is stopped starts no agent and keeps the one dead tab; once it is back, the relaunch leaves one agent', async () => {
    const url = await pgc.createDatabase('relaunch');
    const host = await fixture.open({ sharedBoard: { url, name: 'relaunch' } });
    const roster = host.roster;
    const first = await roster.launch('custom', { command: AGENT });
    await waitFor(() => sleepers().length === 1, 20_000, 'the agent to run');
    // It ends by itself (as a crashed CLI would): its tab stays, exited, for a relaunch.
    await roster.get(first.id)!.session.kill();
    await waitFor(() => roster.agents().find((a) => a.id === first.id)?.status === 'exited', 20_000, 'the agent to exit');
    await waitFor(() => sleepers().length === 0, 20_000, 'its process to be gone');

    await pgc.stopServer('fast');
    stopped = true;
    const refused = await answerOf(roster.relaunch(first.id));
    expect(refused).toMatchObject({ code: 'board-unavailable' });
    // Nothing was done: no agent started (now or a moment later) and the dead tab is as it was.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(sleepers()).toEqual([]);
    expect(roster.agents().map((a) => ({ id: a.id, status: a.status }))).toEqual([{ id: first.id, status: 'exited' }]);
    expect([...roster.all()].filter((p) => p.agent.alive)).toEqual([]);

    await pgc.startServer();
    stopped = false;
    const next = await waitFor(
      async () => {
        const r = await answerOf(roster.relaunch(first.id));
        return r === 'done' ? true : r.code === 'board-unavailable' ? false : Promise.reject(new Error(JSON.stringify(r)));
      },
      30_000,
      'the relaunch to be taken once the database is back',
    );
    expect(next).toBe(true);
    await waitFor(() => sleepers().length === 1, 20_000, 'the relaunched agent to run');
    const listed = roster.agents();
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ status: 'running' });
    expect(listed[0]!.id).not.toBe(first.id);
  }, 120_000);

  it('a close refused while the database is stopped leaves the agent running, its secret good and its tab there; once it is back, the close ends it', async () => {
    const url = await pgc.createDatabase('close');
    const host = await fixture.open({ sharedBoard: { url, name: 'close' } });
    const roster = host.roster;
    const agent = await roster.launch('custom', { command: AGENT });
    await waitFor(() => sleepers().length === 1, 20_000, 'the agent to run');
    const secret = roster.agent(agent.id)!.secret;

    await pgc.stopServer('fast');
    stopped = true;
    expect(await answerOf(roster.close(agent.id))).toMatchObject({ code: 'board-unavailable' });
    expect(roster.isRunning(agent.id)).toBe(true);
    expect(roster.authenticate(secret)?.id).toBe(agent.id);
    expect(roster.agents().map((a) => ({ id: a.id, status: a.status }))).toEqual([{ id: agent.id, status: 'running' }]);
    expect(sleepers()).toHaveLength(1);

    await pgc.startServer();
    stopped = false;
    await waitFor(async () => {
      const r = await answerOf(roster.close(agent.id));
      return r === 'done' || (r.code === 'board-unavailable' ? false : Promise.reject(new Error(JSON.stringify(r))));
    }, 30_000, 'the close to be taken once the database is back');
    expect(roster.agents()).toEqual([]);
    expect(roster.authenticate(secret)).toBeNull();
    await waitFor(() => sleepers().length === 0, 20_000, 'its process to be gone');
  }, 120_000);

  it('a window write racing the Thread’s close is answered board-unavailable, and nothing of it lands', async () => {
    const url = await pgc.createDatabase('closing');
    const host = await fixture.open({ sharedBoard: { url, name: 'closing' } });
    const thread = new ThreadApi(host, new InstalledProfiles(), { kind: 'postgres', where: 'test', name: 'closing', fixed: false, host: 'test host' });
    const key = thread.key;
    await thread.addTask({ key, title: 'before the close' });
    // The close has begun (its lease and follower winding down) as the person's click arrives.
    const closing = host.board.close();
    const answer = await answerOf(thread.addTask({ key, title: 'during the close' }));
    await closing;
    expect(answer).toMatchObject({ code: 'board-unavailable' });
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const titles = (await c.query<{ body: string }>(`SELECT body FROM forkbench.events WHERE body LIKE '%task-added%'`)).rows.map((r) => (JSON.parse(r.body) as { title: string }).title);
      expect(titles).toEqual(['before the close']);
    } finally {
      await c.end();
    }
  }, 60_000);

  it('a task’s history read while the database is stopped is answered board-unavailable, never the driver’s raw error', async () => {
    const url = await pgc.createDatabase('history');
    const host = await fixture.open({ sharedBoard: { url, name: 'history' } });
    const thread = new ThreadApi(host, new InstalledProfiles(), { kind: 'postgres', where: 'test', name: 'history', fixed: false, host: 'test host' });
    const key = thread.key;
    const task = await thread.addTask({ key, title: 'read during an outage' });
    expect((await thread.taskHistory({ key, taskId: task.id })).length).toBeGreaterThan(0);
    // Pooled connections the server drops (a crash) and a server that takes no new ones (stopped) alike.
    await pgc.stopServer('immediate');
    stopped = true;
    expect(await answerOf(thread.taskHistory({ key, taskId: task.id }))).toMatchObject({ code: 'board-unavailable' });
    expect(await answerOf(thread.taskHistory({ key, taskId: task.id }))).toMatchObject({ code: 'board-unavailable' });
    await pgc.startServer();
    stopped = false;
    await waitFor(async () => (await answerOf(thread.taskHistory({ key, taskId: task.id }))) !== 'done' ? false : true, 30_000, 'the history read again once the database is back');
  }, 60_000);

  it.each([
    ['ended by the server (pg_terminate_backend)', 'terminated'],
    ['lost in a crash of the server (restart -m immediate)', 'crashed'],
  ] as const)('a window write whose connection is %s while it is in flight is answered board-unavailable, never the driver’s raw error', async (_how, db) => {
    const url = await pgc.createDatabase(db);
    const host = await fixture.open({ sharedBoard: { url, name: db } });
    const thread = new ThreadApi(host, new InstalledProfiles(), { kind: 'postgres', where: 'test', name: db, fixed: false, host: 'test' });
    const key = thread.key;
    const task = await thread.addTask({ key, title: 'dragged during a restart' });
    // The look-up of a drag's key waits on this lock: the write is in flight on its pooled connection when the
    // server ends that connection (as a restart does).
    const holder = new pg.Client({ connectionString: url });
    const watcher = new pg.Client({ connectionString: url });
    // A crash of the server ends these too: each says so as an 'error' event, which nothing here needs.
    for (const c of [holder, watcher]) c.on('error', () => undefined);
    await holder.connect();
    await watcher.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE forkbench.write_keys IN ACCESS EXCLUSIVE MODE');
      const answer = answerOf(thread.assignTask({ key, taskId: task.id, agentId: 'a-nobody', writeKey: 'drag-during-restart' }));
      const waiting = `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'SELECT agent_id, key, hash, outcome FROM forkbench.write_keys%'`;
      // Watched from outside the lock's transaction: inside one, pg_stat_activity is read once and kept.
      await waitFor(async () => (await watcher.query(waiting)).rowCount === 1, 20_000, 'the drag to wait on the lock');
      if (db === 'terminated') await watcher.query(`SELECT pg_terminate_backend(pid) FROM (${waiting}) w`);
      else await pgc.restartImmediate();
      expect(await answer).toMatchObject({ code: 'board-unavailable' });
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end().catch(() => undefined);
      await watcher.end().catch(() => undefined);
    }
    // The database is there: the same drag sent again is decided (the agent is unknown: refused for that).
    const again = () => answerOf(thread.assignTask({ key, taskId: task.id, agentId: 'a-nobody', writeKey: 'drag-during-restart' }));
    await waitFor(async () => {
      const r = await again();
      return r !== 'done' && r.code === 'no-such-agent';
    }, 30_000, 'the drag sent again to be decided');
  }, 60_000);
});
