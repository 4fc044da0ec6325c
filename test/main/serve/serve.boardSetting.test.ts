import * as fs from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentInfo, BoardStoreView, WindowMethod, WindowParams, WindowResult } from '../../../src-shared/protocol/windowApi.js';
import { boardUrlFile, startPgCluster, PG_SUPERUSER, type PgCluster } from '../../helpers/pgCluster.js';
import { waitFor } from '../../helpers/pty.js';
import { servedHostsOfThisFile, type HostPlace, type ServeProc } from '../../helpers/serveProcess.js';

/**
 * Issue 31, the Thread's board chosen in the window (`thread.setBoard`), on real `serve` processes and a private
 * PostgreSQL: a bad URL and an unreachable one are refused in one line and the Thread stays where it was; a
 * good one (with a password in it) is kept owner-only and the Thread reopens on that board, which a second serve
 * given it by `--board-url-file` shares; a restart keeps it; null goes back to the journal, whose tasks are still there.
 * The password reaches no answer or push the window got, no line serve printed and no file but the setting's.
 */
const PASSWORD = 'Pw-never-shown-7731';
/** Where no PostgreSQL listens: a socket folder that does not exist. */
const NOWHERE = 'no-socket-here';

let pgc: PgCluster;
let boardUrl: string;
let withPassword: string;

beforeAll(async () => {
  pgc = await startPgCluster();
  boardUrl = await pgc.createDatabase('setting');
  // The private cluster trusts its socket, so the password is present but never asked for: pg sends none.
  withPassword = boardUrl.replace(`${PG_SUPERUSER}@`, `${PG_SUPERUSER}:${PASSWORD}@`);
  expect(withPassword).toContain(PASSWORD);
});
afterAll(async () => {
  await pgc?.dispose();
});
// After the database's hooks: its serves are stopped before the database is (vitest runs afterAll hooks last first).
const hosts = servedHostsOfThisFile('fb-board-setting-');
const project = (name: string) => hosts.place(name);
const start = (o: HostPlace, args: string[] = []) => hosts.start(o, { args, env: { FORKBENCH_PTY_HOST: '0' } });

/** Every answer the window got, as text: checked for the password at the end. */
const answers: string[] = [];
async function call<M extends WindowMethod>(s: ServeProc, method: M, params: WindowParams<M>): Promise<WindowResult<M>> {
  try {
    const v = await s.window.call(method, params);
    answers.push(JSON.stringify(v));
    return v;
  } catch (err) {
    answers.push((err as Error).message);
    throw err;
  }
}
/** A refused call's error as the window got it. */
async function refusal<M extends WindowMethod>(s: ServeProc, method: M, params: WindowParams<M>): Promise<{ code: string; message: string }> {
  const err = await call(s, method, params).then(
    () => null,
    (e: Error) => (JSON.parse(e.message) as { error: { code: string; message: string } }).error,
  );
  if (!err) throw new Error(`${method} was not refused`);
  return err;
}

type Task = { id: string; title: string; claim: { agentId: string } | null; lastClaim: { reason: string } | null };
type Snap = { store: BoardStoreView; board: { tasks: Task[] } };
const taskOf = async (s: ServeProc, key: string, id: string) => (await snapshot(s, key)).board.tasks.find((t) => t.id === id);
const paneText = (s: ServeProc, agentId: string) => s.window.pushes.map((p) => (p.type === 'pane-data' && p.agentId === agentId ? p.data : '')).join('');
const snapshot = async (s: ServeProc, key: string) => (await call(s, 'thread.snapshot', { key })) as unknown as Snap;
const titles = async (s: ServeProc, key: string) => (await snapshot(s, key)).board.tasks.map((t) => t.title);

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe('the Thread’s board, set in the window', () => {
  it('refuses a bad or unreachable URL in one line with nothing changed; reopens on a good one, kept 0600 across a restart; null goes back to the journal; the password reaches no page, log or other file', async () => {
    const a = project('a');
    let sa = await start(a);
    expect((await snapshot(sa, a.key)).store).toEqual({ kind: 'journal' });
    await call(sa, 'task.add', { key: a.key, title: 'on this computer' });

    // Not a PostgreSQL URL, and one where nothing listens: one line each, the password not repeated, and the
    // Thread is not reopened (no push) and stays on its journal with its task.
    const bad = await refusal(sa, 'thread.setBoard', { key: a.key, url: `mysql://u:${PASSWORD}@h/db` });
    expect(bad.code).toBe('invalid-input');
    expect(bad.message).toMatch(/PostgreSQL URL/);
    const unreachable = await refusal(sa, 'thread.setBoard', { key: a.key, url: `postgresql://u:${PASSWORD}@/nosuchdb?host=${join(hosts.root, NOWHERE)}` });
    expect(unreachable.code).toBe('board-unavailable');
    expect(unreachable.message).toMatch(/^cannot open the board at .*\/nosuchdb: /);
    for (const m of [bad.message, unreachable.message]) expect(m).not.toMatch(/\n/);
    const badName = await refusal(sa, 'thread.setBoard', { key: a.key, url: withPassword, name: ' padded ' });
    expect(badName).toMatchObject({ code: 'invalid-input', message: expect.stringMatching(/^a board name takes/) });
    expect(sa.window.pushes.some((p) => p.type === 'thread-reopened')).toBe(false);
    const settingFile = join(a.at, 'data', 'threads', a.key, 'board-setting.json');
    expect(fs.existsSync(settingFile)).toBe(false);

    // One that connects but whose board cannot open (a newer Forkbench's schema): the Thread, closed for the
    // switch, opens again on its journal and the setting is as it was.
    const newer = await pgc.createDatabase('newer');
    const admin = new pg.Client({ connectionString: newer });
    await admin.connect();
    await admin.query('CREATE SCHEMA forkbench; CREATE TABLE forkbench.schema_version (version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL); INSERT INTO forkbench.schema_version VALUES (999999, $$future$$, $$x$$)');
    await admin.end();
    const unopenable = await refusal(sa, 'thread.setBoard', { key: a.key, url: newer.replace(`${PG_SUPERUSER}@`, `${PG_SUPERUSER}:${PASSWORD}@`), move: 'empty' });
    expect(unopenable).toMatchObject({ code: 'board-unavailable', message: expect.stringMatching(/^the Thread stays on its board: .*upgrade Forkbench/) });
    expect((await snapshot(sa, a.key)).store).toEqual({ kind: 'journal' });
    expect(await titles(sa, a.key)).toEqual(['on this computer']);
    expect(fs.existsSync(settingFile)).toBe(false);

    // A good one, without saying what happens to the local board's task: refused, nothing changed (issue 45).
    const unsaid = await refusal(sa, 'thread.setBoard', { key: a.key, url: withPassword, name: 'team' });
    expect(unsaid).toMatchObject({ code: 'move-needed', message: expect.stringMatching(/local board has 1 task: /) });
    expect(fs.existsSync(settingFile)).toBe(false);
    // Started empty: the Thread reopens on the (empty) shared board and every window is told.
    const reopenedBefore = sa.window.pushes.filter((p) => p.type === 'thread-reopened').length;
    const switched = await call(sa, 'thread.setBoard', { key: a.key, url: withPassword, name: 'team', move: 'empty' });
    expect(switched.carried).toBeNull();
    const set = switched.store;
    const where = `${pgc.socketDir}/setting`;
    // This host's name on the board: its machine's, with a tag of its id (issue 45).
    expect(set).toEqual({ kind: 'postgres', where, name: 'team', fixed: false, host: expect.stringMatching(/^.+-[0-9a-f]{4}$/) });
    await waitFor(() => sa.window.pushes.filter((p) => p.type === 'thread-reopened' && p.key === a.key).length > reopenedBefore, 10_000, 'the reopened push');
    expect((await snapshot(sa, a.key)).store).toEqual(set);
    expect(await titles(sa, a.key)).toEqual([]);
    await call(sa, 'task.add', { key: a.key, title: 'on the shared board' });
    expect(fs.statSync(settingFile).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(settingFile, 'utf8')).toContain(PASSWORD);

    // A second host given that board on its command line meets A there; its store is fixed, not the window's.
    const b = project('b');
    const sb = await start(b, ['--board-url-file', boardUrlFile(b.at, boardUrl), '--board-name', 'team']);
    await waitFor(async () => (await titles(sb, b.key)).includes('on the shared board'), 10_000, 'B to see A’s task');
    expect((await snapshot(sb, b.key)).store).toEqual({ kind: 'postgres', where, name: 'team', fixed: true, host: expect.stringMatching(/^.+-[0-9a-f]{4}$/) });
    expect((await refusal(sb, 'thread.setBoard', { key: b.key, url: null })).message).toMatch(/started with a board/);

    // A restart of A keeps the setting: it opens on the shared board again.
    const errA1 = sa.err();
    sa.proc.kill('SIGINT');
    await sa.exit;
    sa = await start(a);
    expect((await snapshot(sa, a.key)).store).toEqual(set);
    expect(await titles(sa, a.key)).toEqual(['on the shared board']);

    // An agent of A's claims the shared task (its environment, all of it in the pane, holds no password).
    const agent: AgentInfo = await call(sa, 'agent.launch', { key: a.key, profile: 'shell', cols: 120, rows: 30 });
    await call(sa, 'agent.input', { key: a.key, agentId: agent.id, data: `env; forkbench claim T-1; echo "CLAIM"=$?=END\r` });
    await waitFor(() => /CLAIM=\d+=END/.test(paneText(sa, agent.id)), 30_000, 'the claim on A');
    expect(paneText(sa, agent.id)).toContain('CLAIM=0=END');
    await waitFor(async () => (await taskOf(sb, b.key, 'T-1'))?.claim?.agentId === agent.id, 10_000, 'B to see the claim');

    // Back to the journal: A's claims on the shared board end as the Thread moves (board-moved); the file goes,
    // and the journal's own task is there as it was.
    expect(await call(sa, 'thread.setBoard', { key: a.key, url: null })).toEqual({ store: { kind: 'journal' }, carried: null });
    expect((await snapshot(sa, a.key)).store).toEqual({ kind: 'journal' });
    expect(await titles(sa, a.key)).toEqual(['on this computer']);
    expect(fs.existsSync(settingFile)).toBe(false);
    await waitFor(async () => (await taskOf(sb, b.key, 'T-1'))?.lastClaim?.reason === 'board-moved', 10_000, 'B to see the claim end');

    sa.proc.kill('SIGINT');
    await sa.exit;
    sb.proc.kill('SIGINT');
    await sb.exit;
    // Nowhere else: not in what either window got, what either serve printed, or any file in A's data folder.
    const seen = [...answers, JSON.stringify(sa.window.pushes), JSON.stringify(sb.window.pushes), errA1, sa.err(), sb.err()].join('\n');
    expect(seen).not.toContain(PASSWORD);
    for (const f of filesUnder(join(a.at, 'data'))) expect(fs.readFileSync(f, 'latin1'), f).not.toContain(PASSWORD);
  }, 180_000);
});
