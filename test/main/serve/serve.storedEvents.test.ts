import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';
import { waitFor } from '../../helpers/pty.js';
import { servedHostsOfThisFile, type ServeProc } from '../../helpers/serveProcess.js';

/**
 * Issue 42, on real `serve` processes and a private PostgreSQL: an event inserted into the shared board's
 * database with SQL (a 10-year lease for an agent of nobody's), while two hosts run, is set aside by both; each
 * window gets one notice naming it (its position, kind and why), and both hosts keep taking writes. Before,
 * such an event was applied as it was, and one no host could apply stopped every host's writes.
 */
const NAME = 'quarantine board';
const TEN_YEARS_MS = 10 * 365 * 24 * 3_600_000;
let pgc: PgCluster;
let url: string;
beforeAll(async () => {
  pgc = await startPgCluster();
  url = await pgc.createDatabase('events');
});
afterAll(async () => {
  await pgc?.dispose();
});
const hosts = servedHostsOfThisFile('fb-stored-events-');

type Snap = { board: { seq: number; tasks: Array<{ id: string; title: string; claim: { agentId: string } | null }> } };
const snap = async (s: ServeProc, key: string) => (await s.window.call('thread.snapshot', { key })) as Snap;

describe('an event inserted into the shared board’s database by hand', () => {
  it('is set aside by every host, each window is told once which and why, and every host keeps writing', async () => {
    const pa = hosts.place('a');
    const pb = hosts.place('b');
    const env = { FORKBENCH_BOARD_URL: url, FORKBENCH_PTY_HOST: '0' };
    const a = await hosts.start(pa, { args: ['--board-name', NAME], env });
    const b = await hosts.start(pb, { args: ['--board-name', NAME], env });
    await a.window.call('task.add', { key: pa.key, title: 'shared' });
    await waitFor(async () => (await snap(b, pb.key)).board.tasks.length === 1, 10_000, 'B to see the task');

    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const { rows } = await c.query<{ id: string; head: string }>('SELECT id, head FROM forkbench.boards WHERE name = $1', [NAME]);
    const last = await c.query<{ body: string }>('SELECT body FROM forkbench.events WHERE board_id = $1 AND seq = $2', [rows[0]!.id, rows[0]!.head]);
    const mono = (JSON.parse(last.rows[0]!.body) as { mono: number }).mono;
    const seq = Number(rows[0]!.head) + 1;
    const grant = { kind: 'grant', taskId: 'T-1', agentId: 'shell-intruder', token: 99, deadline: mono + TEN_YEARS_MS, by: 'shell-intruder', at: Date.now(), mono, seq };
    await c.query('WITH e AS (INSERT INTO forkbench.events (board_id, seq, task_id, body) VALUES ($1, $2, $3, $4)) UPDATE forkbench.boards SET head = $2 WHERE id = $1', [rows[0]!.id, seq, 'T-1', JSON.stringify(grant)]);
    await c.query("SELECT pg_notify('forkbench_board', $1)", [`${rows[0]!.id}:${seq}`]);
    await c.end();

    for (const [s, key] of [[a, pa.key], [b, pb.key]] as const) {
      const notice = await waitFor(() => s.window.pushes.find((p) => p.type === 'notify' && p.about.startsWith(`quarantine:${key}:`)), 15_000, 'the notice');
      expect(notice).toMatchObject({ title: 'Board event set aside: project' });
      expect((notice as { body: string }).body).toContain(`Event #${seq} (grant) in the shared board's database was not applied: its lease runs 87,600 h, past the board's longest (12 h).`);
      expect((await snap(s, key)).board.tasks[0]!.claim ?? null).toBeNull();
    }
    // Both still write, at positions after it.
    await a.window.call('task.add', { key: pa.key, title: 'after, on A' });
    await b.window.call('task.add', { key: pb.key, title: 'after, on B' });
    await waitFor(async () => (await snap(a, pa.key)).board.tasks.length === 3, 10_000, 'A to see B’s task');
    for (const [s, key] of [[a, pa.key], [b, pb.key]] as const) {
      expect(s.window.pushes.filter((p) => p.type === 'notify' && p.about.startsWith(`quarantine:${key}:`))).toHaveLength(1);
      expect((await snap(s, key)).board.seq).toBeGreaterThan(seq);
      s.proc.kill('SIGINT');
      await s.exit;
    }
  }, 120_000);
});
