/**
 * Issue 42: events read from a shared board's database are checked like input. Whoever holds the database's
 * role can append anything to forkbench.events; before this, one event no host could apply made every host
 * refuse writes (each transaction follows the log first, and failed on it), a restarted host would not open
 * the board, and a 10-year lease was simply applied. Here bad events are inserted with SQL, as such a person
 * would, while two hosts run and before a third opens: each host sets them aside (named: position, kind, why),
 * every host keeps answering, and the 10-year lease is held by nobody.
 */
import fs from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Limits } from '../../../../src-shared/board/limits.js';
import { PgBoard } from '../../../../src-main/board/pg/pgBoard.js';
import { QUARANTINE_FILE } from '../../../../src-main/board/quarantine.js';
import { appendBySql } from '../../../helpers/boardRows.js';
import { startPgCluster, type PgCluster } from '../../../helpers/pgCluster.js';
import { waitFor } from '../../../helpers/pty.js';

const NAME = 'git@example.com:team/quarantine.git';
const TEN_YEARS_MS = 10 * 365 * 24 * 3_600_000;
let pgc: PgCluster;
let dbCount = 0;
const open: Array<{ board: PgBoard; pool: pg.Pool }> = [];
const dirs: string[] = [];

beforeAll(async () => {
  pgc = await startPgCluster();
});
afterAll(() => pgc?.dispose());
afterEach(async () => {
  for (const { board, pool } of open.splice(0)) {
    await board.close();
    await pool.end();
  }
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function host(url: string, hostId: string, at?: string): Promise<PgBoard> {
  const pool = new pg.Pool({ connectionString: url, max: 4, pipeline: true });
  pool.on('error', () => undefined);
  const dir = at ?? fs.mkdtempSync(join(os.tmpdir(), 'fb-quarantine-'));
  if (!at) dirs.push(dir);
  // A short poll: the inserted rows send no NOTIFY, as an outsider's would not.
  const board = await PgBoard.open({ pool, listenClient: () => new pg.Client({ connectionString: url }), name: NAME, dir, hostId, hostName: hostId, threadId: 't', goal: '', pollMs: 100, warn: () => undefined });
  open.push({ board, pool });
  return board;
}

describe('events a shared board’s database holds are checked before any host applies them', () => {
  it('a 10-year lease, a task added twice and an unknown field, inserted while two hosts run: each is set aside and named, every host keeps writing', async () => {
    const url = await pgc.createDatabase('running');
    const a = await host(url, 'host-a');
    const b = await host(url, 'host-b');
    expect((await a.run((e) => e.addTask({ title: 'one' }))).ok).toBe(true);
    expect((await a.run((e) => e.addTask({ title: 'two' }))).ok).toBe(true);
    await waitFor(() => b.state.tasks.size === 2, 5000, 'B to see both tasks');

    const lease = await appendBySql(url, NAME, (seq, mono) => ({ kind: 'grant', taskId: 'T-1', agentId: 'shell-intruder', token: 1, deadline: mono + TEN_YEARS_MS, by: 'shell-intruder', at: Date.now(), mono }));
    const twice = await appendBySql(url, NAME, (_seq, mono) => ({ kind: 'task-added', taskId: 'T-2', title: 'again', body: '', verify: null, by: 'user', at: Date.now(), mono }));
    const unknown = await appendBySql(url, NAME, (_seq, mono) => ({ kind: 'note', taskId: 'T-2', by: 'user', text: 'hi', approvedBy: 'user', at: Date.now(), mono }));

    for (const h of [a, b]) {
      await waitFor(() => h.state.seq >= unknown, 10_000, 'the host to follow past the inserted events');
      expect(h.quarantine.found().map((q) => [q.seq, q.kind, q.why])).toEqual([
        [lease, 'grant', `its lease runs 87,600 h, past the board's longest (${Limits.maxLeaseMs / 3_600_000} h)`],
        [twice, 'task-added', 'T-2 was added already'],
        [unknown, 'note', 'it has a field its kind does not (approvedBy)'],
      ]);
      expect(h.state.tasks.get('T-1')?.claim).toBeNull();
      expect(h.state.tasks.get('T-2')?.title).toBe('two');
      expect(h.readOnlyReason).toBeNull();
      expect(JSON.parse(fs.readFileSync(join(h.dir, QUARANTINE_FILE), 'utf8')).events).toHaveLength(3);
    }
    // Both hosts still decide, at the positions after the ones set aside.
    a.hostAgent('agent-a');
    b.hostAgent('agent-b');
    const ga = await a.run((e) => e.claim('agent-a', 'T-1'));
    expect(ga).toMatchObject({ ok: true, value: { token: 1 } });
    const gb = await b.run((e) => e.claim('agent-b', 'T-2'));
    expect(gb).toMatchObject({ ok: true, value: { token: 2 } });
    expect(b.state.seq).toBeGreaterThan(unknown);
  }, 60_000);

  it('a row past the head (the next append’s place) and rows that are not events: the hosts go on writing', async () => {
    const url = await pgc.createDatabase('strays');
    const a = await host(url, 'host-a');
    expect((await a.run((e) => e.addTask({ title: 'one' }))).ok).toBe(true);
    // Past the head, head not moved: the position the next write takes.
    const stray = await appendBySql(url, NAME, (_seq, mono) => ({ kind: 'note', taskId: 'T-1', by: 'user', text: 'planted', at: Date.now(), mono }), { moveHead: false });
    const added = await a.run((e) => e.addTask({ title: 'two' }));
    expect(added.ok).toBe(true);
    expect(a.state.seq).toBe(stray);
    expect(a.state.tasks.get('T-1')?.notes).toEqual([]);
    expect(a.quarantine.found()).toEqual([expect.objectContaining({ seq: stray, kind: 'note', why: expect.stringMatching(/stored past the board's last event/) })]);
    // Not JSON at all, at the next position with the head moved.
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query("WITH b AS (UPDATE forkbench.boards SET head = head + 1 WHERE name = $1 RETURNING id, head) INSERT INTO forkbench.events (board_id, seq, body) SELECT id, head, '{not json' FROM b", [NAME]);
    await c.end();
    expect((await a.run((e) => e.addTask({ title: 'three' }))).ok).toBe(true);
    expect(a.quarantine.found().at(-1)).toMatchObject({ kind: null, why: 'it is not JSON' });
    expect([...a.state.tasks.values()].map((t) => t.title)).toEqual(['one', 'two', 'three']);
  }, 60_000);

  it('a host opening a board that holds a bad event opens it, names the event once, and later opens say nothing new', async () => {
    const url = await pgc.createDatabase('before-open');
    const a = await host(url, 'host-a');
    expect((await a.run((e) => e.addTask({ title: 'one' }))).ok).toBe(true);
    const { board: closing, pool } = open.splice(0, 1)[0]!;
    await closing.close();
    await pool.end();
    const lease = await appendBySql(url, NAME, (_seq, mono) => ({ kind: 'grant', taskId: 'T-1', agentId: 'x', token: 1, deadline: mono + TEN_YEARS_MS, by: 'x', at: Date.now(), mono }));
    const c = await host(url, 'host-c');
    expect(c.quarantine.found()).toEqual([expect.objectContaining({ seq: lease, kind: 'grant', store: 'database' })]);
    expect(c.state.tasks.get('T-1')?.claim).toBeNull();
    expect((await c.run((e) => e.addTask({ title: 'after' }))).ok).toBe(true);
    // Told once: the same host opening again still skips it, and has nothing new to tell.
    const again = open.splice(0, 1)[0]!;
    await again.board.close();
    await again.pool.end();
    const reopened = await host(url, 'host-c', c.dir);
    expect(reopened.quarantine.found()).toEqual([]);
    expect(reopened.quarantine.all().map((q) => q.seq)).toEqual([lease]);
    expect(reopened.state.tasks.get('T-1')?.claim).toBeNull();
    expect([...reopened.state.tasks.values()].map((t) => t.title)).toEqual(['one', 'after']);
  }, 60_000);
});
