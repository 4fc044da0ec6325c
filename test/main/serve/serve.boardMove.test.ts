import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { migrate } from '../../../src-main/board/pg/migrate.js';
import { threadDirOf } from '../../../src-main/thread/threadHost.js';
import { boardUrlFile, startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';
import { waitFor } from '../../helpers/pty.js';
import { servedHostsOfThisFile, type ServeProc } from '../../helpers/serveProcess.js';

/**
 * Issue 45, item 1, on real `serve` processes and a private PostgreSQL: a Thread whose local board has tasks,
 * opened by a host started with a shared board (`--board-url-file`), does not open until the person says what
 * happens to them (`--move copy|empty`), and nothing is written. With `--move copy`, the copy is cut off mid-
 * transaction twice, rows of it already inserted: once by the database dropping the connection
 * (pg_terminate_backend), once by a kill -9 of the host. Each leaves nothing of the copy; the next start, with no
 * flag (the choice was kept as pending), copies, and copies exactly once; a start after that copies nothing.
 *
 * To cut a copy off mid-transaction on cue, the test's own session holds an advisory lock that a trigger it adds
 * to the board's events table waits on for a carried task's row: the copy's statement stops there, its first
 * rows inserted, its transaction open, until the test lets go.
 */
const TASKS = 300;
/** The advisory lock the test's trigger waits on: any number no one else uses in this private cluster. */
const HOLD = 4545;

let pgc: PgCluster;
let url: string;
let admin: pg.Client;

beforeAll(async () => {
  pgc = await startPgCluster();
  url = await pgc.createDatabase('move');
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
  // The board's schema now, so the test's trigger can stand on it before any host starts.
  await migrate(admin);
  await admin.query(`
    CREATE FUNCTION public.hold_carried() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.body LIKE '%"kind":"task-copied"%' THEN PERFORM pg_advisory_xact_lock_shared(${HOLD}); END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER hold_carried BEFORE INSERT ON forkbench.events FOR EACH ROW EXECUTE FUNCTION public.hold_carried();`);
}, 120_000);
afterAll(async () => {
  await admin?.end().catch(() => undefined);
  await pgc?.dispose();
});
const hosts = servedHostsOfThisFile('fb-board-move-');

/** `serve` on the shared board, as a child of the test's own (its pid is what kill -9 needs before it prints a link). */
function serveRaw(at: string, project: string, args: string[]): { proc: ChildProcess; err: () => string; exit: Promise<number | null> } {
  const proc = spawn(process.execPath, [join(import.meta.dirname, '..', '..', '..', 'bin', 'forkbench.cjs'), 'serve', project, ...args], {
    env: { ...process.env, FORKBENCH_PTY_HOST: '0', FORKBENCH_DATA_DIR: join(at, 'data'), XDG_RUNTIME_DIR: join(at, 'run') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  proc.stdout!.resume();
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, err: () => err, exit };
}

const count = async (sql: string): Promise<number> => Number((await admin.query<{ n: string }>(sql)).rows[0]!.n);
const carriedRows = () => count(`SELECT count(*) AS n FROM forkbench.events WHERE body LIKE '%"kind":"task-copied"%'`);
/** The backend of a copy stopped at the test's trigger, once there is one. */
async function stoppedCopy(): Promise<number> {
  let pid = 0;
  await waitFor(
    async () => {
      const r = await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND query LIKE '%forkbench.events%'`);
      pid = r.rows[0]?.pid ?? 0;
      return pid !== 0;
    },
    60_000,
    'the copy to reach its first carried task',
  );
  return pid;
}
const backendGone = (pid: number) => waitFor(async () => (await count(`SELECT count(*) AS n FROM pg_stat_activity WHERE pid = ${pid}`)) === 0, 30_000, `backend ${pid} to end`);

describe('serve --board on a Thread whose local board has tasks', () => {
  it('refuses without --move, naming it; a copy cut off by a dropped connection or a kill -9 leaves nothing, and the next start copies exactly once', async () => {
    const a = hosts.place('a');
    const journal = await JournalBoard.open({ dir: threadDirOf(join(a.at, 'data'), a.key), threadId: a.key, goal: 'the backlog' });
    for (let i = 1; i <= TASKS; i++) await journal.run((e) => e.addTask({ title: `task ${i}`, body: `body ${i}` }));
    await journal.run((e) => e.userNote('T-7', 'a note that travels'));
    await journal.close();
    const args = ['--board-url-file', boardUrlFile(a.at, url), '--board-name', 'moved'];

    // No choice: refused in one message naming the flag, and nothing reached the board.
    const unsaid = serveRaw(a.at, a.project, args);
    expect(await unsaid.exit).toBe(1);
    expect(unsaid.err()).toMatch(new RegExp(`local board \\(on this computer\\) has ${TASKS} tasks.*--move copy.*--move empty`));
    expect(await count(`SELECT count(*) AS n FROM forkbench.boards`)).toBe(0);

    // The database drops the copy's connection mid-transaction: the open fails, nothing of the copy is there.
    await admin.query('SELECT pg_advisory_lock($1)', [HOLD]);
    const dropped = serveRaw(a.at, a.project, [...args, '--move', 'copy']);
    const cut = await stoppedCopy();
    await admin.query('SELECT pg_terminate_backend($1)', [cut]);
    expect(await dropped.exit).toBe(1);
    expect(dropped.err()).toMatch(/cannot open .*project/);
    await backendGone(cut);
    expect(await carriedRows()).toBe(0);

    // Again with no flag (the choice was kept, pending), and the host is killed -9 mid-copy.
    const killed = serveRaw(a.at, a.project, args);
    const stopped = await stoppedCopy();
    killed.proc.kill('SIGKILL');
    await killed.exit;
    await admin.query('SELECT pg_advisory_unlock($1)', [HOLD]);
    // Its statement runs on once let go; with its client gone, no COMMIT can come: the transaction is rolled back.
    await backendGone(stopped);
    expect(await carriedRows()).toBe(0);

    // The next start finishes the move: every task, once.
    let s: ServeProc = await hosts.start(a, { args, env: { FORKBENCH_PTY_HOST: '0' } });
    expect(s.err()).toMatch(new RegExp(`copied ${TASKS} tasks of the local board of ${a.project}`));
    const snap = async () => (await s.window.call('thread.snapshot', { key: a.key })) as unknown as { board: { goal: string; tasks: Array<{ id: string; title: string; copiedFrom?: { taskId: string } }> } };
    let board = (await snap()).board;
    expect(board.tasks).toHaveLength(TASKS);
    expect(board.goal).toBe('the backlog');
    expect(board.tasks.every((t) => t.copiedFrom?.taskId === t.id && t.title === `task ${t.id.slice(2)}`)).toBe(true);
    expect(await carriedRows()).toBe(TASKS);
    expect((await s.window.call('task.details', { key: a.key, taskId: 'T-7' })).notes.map((n) => n.text)).toEqual(['a note that travels']);

    // And a start after that copies nothing again.
    s.proc.kill('SIGINT');
    await s.exit;
    s = await hosts.start(a, { args, env: { FORKBENCH_PTY_HOST: '0' } });
    board = (await snap()).board;
    expect(board.tasks).toHaveLength(TASKS);
    expect(await carriedRows()).toBe(TASKS);
    expect(await count(`SELECT count(*) AS n FROM forkbench.events WHERE body LIKE '%"kind":"board-copied"%'`)).toBe(1);
    s.proc.kill('SIGINT');
    await s.exit;
  }, 300_000);
});
