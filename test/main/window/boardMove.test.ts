/**
 * Issue 45, item 1, through the window's door (ThreadManager.setBoard) with a real shell agent and a real
 * PostgreSQL: a Thread on its local board, an agent holding T-1, moved onto a shared board another host already
 * uses. Without saying what happens to the local tasks the switch is refused and nothing changes. With `copy`:
 * the answer maps each old id to its new one, the claim ended `board-moved` (on both boards), and the restart
 * summary of the agent names what it held on the board it held it on, with the id it has here, never by the
 * new board's T-1. Back on the local board, everything is where it was.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Refusal } from '../../../src-main/base/procedureServer.js';
import { PgBoard } from '../../../src-main/board/pg/pgBoard.js';
import { ThreadManager } from '../../../src-main/window/threadManager.js';
import { startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';
import { ensureBuilt } from '../../helpers/cli.js';

let pgc: PgCluster;
const roots: string[] = [];
const managers: ThreadManager[] = [];
const boards: Array<{ board: PgBoard; pool: pg.Pool }> = [];
beforeAll(async () => {
  ensureBuilt();
  pgc = await startPgCluster();
}, 120_000);
afterAll(() => pgc?.dispose());
afterEach(async () => {
  for (const m of managers.splice(0)) await m.dispose();
  for (const { board, pool } of boards.splice(0)) {
    await board.close();
    await pool.end();
  }
  for (const d of roots.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Another host on the shared board `name`, with tasks of its own. */
async function otherHost(url: string, name: string, titles: string[]): Promise<PgBoard> {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => undefined);
  const dir = fs.mkdtempSync(join(tmpdir(), 'fb-move-other-'));
  roots.push(dir);
  const board = await PgBoard.open({ pool, name, dir, hostId: 'other-host', hostName: 'other', threadId: 'theirs', goal: 'their goal', warn: () => undefined });
  boards.push({ board, pool });
  for (const title of titles) await board.run((e) => e.addTask({ title }));
  return board;
}

describe('a Thread moved onto a shared board through the window’s door', () => {
  it('is refused until told what happens to its tasks; copied, the map comes back, the claim ended board-moved, and the ended agent is named by the board it held on', async () => {
    const url = await pgc.createDatabase('door');
    await otherHost(url, 'team', ['theirs 1', 'theirs 2', 'theirs 3']);
    const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-move-'));
    roots.push(root);
    const folder = join(root, 'project');
    const home = join(root, 'home');
    for (const d of [folder, home]) fs.mkdirSync(d);
    const threads = new ThreadManager({ dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, env: { PATH: process.env.PATH, HOME: home, LANG: 'C.UTF-8' } });
    managers.push(threads);
    let host = await threads.open(folder);
    for (const title of ['local 1', 'local 2']) await host.board.run((e) => e.addTask({ title }));
    const agent = await host.roster.launch('shell');
    expect((await host.board.run((e) => e.assign('T-1', agent.id))).ok).toBe(true);

    const unsaid = await threads.setBoard({ key: host.key, url, name: 'team' }).catch((e: unknown) => e);
    expect(unsaid).toBeInstanceOf(Refusal);
    expect(unsaid).toMatchObject({ code: 'move-needed', message: expect.stringMatching(/local board has 2 tasks/) });
    // Nothing changed: the same Thread, on its journal, its agent still holding T-1.
    expect(threads.get(host.key)).toBe(host);
    expect(host.board.state.tasks.get('T-1')?.claim?.agentId).toBe(agent.id);

    const moved = await threads.setBoard({ key: host.key, url, name: 'team', move: 'copy' });
    expect(moved.store).toMatchObject({ kind: 'postgres', name: 'team' });
    expect(moved.carried?.copied).toEqual([
      ['T-1', 'T-4'],
      ['T-2', 'T-5'],
    ]);
    host = threads.get(host.key)!;
    expect(host.board.state.tasks.get('T-1')?.title).toBe('theirs 1');
    expect(host.board.state.tasks.get('T-4')).toMatchObject({ title: 'local 1', state: 'open', copiedFrom: { taskId: 'T-1' }, lastClaim: { agentId: agent.id, reason: 'board-moved' } });
    // The summary of the ended agent: what it held, on the board it held it on, and where that task is here.
    const lastRun = () => host.roster.agents().find((a) => a.id === agent.id)?.lastRun;
    expect(lastRun()).toEqual({ how: 'host-stopped', held: ['T-1'], titles: { 'T-1': 'local 1' }, elsewhere: 'the board on this computer', now: { 'T-1': 'T-4' }, exit: null, at: expect.any(Number) });

    // Back on the local board: whole, its claim ended as the Thread moved, the summary of its own board plain.
    const back = await threads.setBoard({ key: host.key, url: null });
    expect(back).toEqual({ store: { kind: 'journal' }, carried: null });
    host = threads.get(host.key)!;
    expect([...host.board.state.tasks.values()].map((t) => t.title)).toEqual(['local 1', 'local 2']);
    expect(host.board.state.tasks.get('T-1')?.lastClaim?.reason).toBe('board-moved');
    expect(lastRun()).toEqual({ how: 'host-stopped', held: ['T-1'], titles: { 'T-1': 'local 1' }, exit: null, at: expect.any(Number) });
  }, 120_000);
});
