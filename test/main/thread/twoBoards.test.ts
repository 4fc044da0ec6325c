/**
 * Issue 45, item 1 (the naming part): one Thread folder on two boards in turn, its local journal board and then a
 * shared PostgreSQL board whose task ids are the same T-1, T-2. Before, the second board's claims found the
 * first's folders (`worktrees/<agent>/T-1-1`) and branches (`forkbench/T-1`) under their names: refused, tasks
 * Blocked, and the Worktrees panel listed neither those folders nor a way to clear them. Now every folder,
 * branch, hooks folder and remote ref carries its board's key: real git, real hosts and a real PostgreSQL,
 * with the window's calls through the window router.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ThreadManager } from '../../../src-main/window/threadManager.js';
import type { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { WindowRouter } from '../../../src-main/window/windowRouter.js';
import type { WindowMethod, WindowParams, WindowResult } from '../../../src-shared/protocol/windowApi.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { agentEnv, branchOf, cliAs, cloneOfBareRemote, gitSync, idleAgent, sh } from '../../helpers/gitFixture.js';
import { startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';

let pgc: PgCluster;
let url: string;
const managers: ThreadManager[] = [];
const dirs: string[] = [];

beforeAll(() => ensureBuilt(), 300_000);
beforeAll(async () => {
  pgc = await startPgCluster({ fsync: false });
  url = await pgc.createDatabase('moved');
}, 60_000);
afterAll(() => pgc?.dispose());
afterEach(async () => {
  for (const m of managers.splice(0)) await m.dispose();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** One host process's Threads on `root`'s data folder: on the journal, or on the shared board if given. */
async function open(root: string, folder: string, shared?: { url: string; name: string }) {
  // On the shared board, the local board's tasks are not copied (`--move empty`): the shared board's own T-1 and
  // T-2 are what claim beside the local board's folders and branches.
  // Its claims are made with the agent's secret from the test process, outside any pane (peerJudges.ts).
  const threads = new ThreadManager({ dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, peerJudge: secretsFromTheTestProcess, ...(shared ? { sharedBoard: shared } : {}) }, shared ? { move: 'empty' } : {});
  managers.push(threads);
  const host = await threads.open(folder);
  const router = new WindowRouter(threads);
  /** A window's call as any window makes it; answers the call's value, or throws the refusal ({code, message}). */
  const window = async <M extends WindowMethod>(method: M, params: Omit<WindowParams<M>, 'key'>): Promise<WindowResult<M>> => {
    const r = await router.call(method, { key: host.key, ...params }, 'test-window');
    if (!r.ok) throw r.error;
    return r.value as WindowResult<M>;
  };
  return { threads, host, window };
}

/** Claim `taskId` as a new agent through the CLI: the folder and branch it was handed. */
async function claim(host: ThreadHost, taskId: string): Promise<{ agent: string; token: number; path: string; branch: string }> {
  const agent = await idleAgent(host);
  const c = await cliAs(host, agent, ['claim', taskId]);
  expect(c.code, JSON.stringify(c.out)).toBe(0);
  return { agent, token: c.out.result.token, path: c.out.result.worktree.path, branch: c.out.result.worktree.branch };
}

async function commitIn(host: ThreadHost, agent: string, path: string, line: string): Promise<string> {
  fs.appendFileSync(join(path, 'notes.txt'), `${line}\n`);
  const r = await sh(path, `git commit -qam '${line}'`, agentEnv(host, agent));
  expect(r.code, r.stderr).toBe(0);
  return gitSync(path, ['rev-parse', 'HEAD']);
}

describe('two boards in one Thread folder', () => {
  it('the shared board claims T-1 and T-2 beside the local board’s folders and branches and those from before boards were named; each panel lists its own', async () => {
    const { root, folder } = cloneOfBareRemote('fb-two-boards-');
    dirs.push(root);

    // The local board: T-1 committed and parked, T-2 parked with a change never committed.
    const local = await open(root, folder);
    const localNames = local.host.worktrees.require().names;
    for (const title of ['parser', 'lexer']) await local.host.board.run((e) => e.addTask({ title }));
    const l1 = await claim(local.host, 'T-1');
    const l1sha = await commitIn(local.host, l1.agent, l1.path, 'local work');
    const l2 = await claim(local.host, 'T-2');
    fs.writeFileSync(join(l2.path, 'draft.txt'), 'never committed\n');
    expect(l1.branch).toBe(localNames.branch('T-1'));
    expect(l1.path).toBe(localNames.folderOf(l1.agent, 'T-1', l1.token));

    // What a host from before boards were named left: its folder and branch under the names the shared
    // board's ids would have had then (worktrees/<agent>/T-1-1, forkbench/T-1).
    const oldFolder = join(localNames.worktreesRoot, 'shell-1-0123456789ab', 'T-1-1');
    gitSync(folder, ['worktree', 'add', '-q', '-b', 'forkbench/T-1', oldFolder, 'main']);
    fs.appendFileSync(join(oldFolder, 'notes.txt'), 'old scheme\n');
    gitSync(oldFolder, ['commit', '-qam', 'old scheme']);
    const oldSha = gitSync(oldFolder, ['rev-parse', 'HEAD']);
    // And from before agents had folders (worktrees/T-2-2): detached, with a commit on no branch.
    const oldest = join(localNames.worktreesRoot, 'T-2-2');
    gitSync(folder, ['worktree', 'add', '-q', '--detach', oldest, 'main']);
    fs.appendFileSync(join(oldest, 'notes.txt'), 'on no branch\n');
    gitSync(oldest, ['commit', '-qam', 'on no branch']);
    await local.threads.dispose();
    managers.splice(managers.indexOf(local.threads), 1);

    // The same folder on a shared board, from the same data folder: its own key, its own T-1 and T-2.
    const shared = await open(root, folder, { url, name: 'moved' });
    const names = shared.host.worktrees.require().names;
    expect(names.key).toMatch(/^[0-9a-f]{8}$/);
    expect(names.key).not.toBe(localNames.key);
    expect(names.worktreesRoot).toBe(localNames.worktreesRoot);
    for (const title of ['parser again', 'lexer again']) await shared.host.board.run((e) => e.addTask({ title }));
    const s1 = await claim(shared.host, 'T-1');
    const s2 = await claim(shared.host, 'T-2');
    // Tokens start again at 1 on the new board: the same T-1-1 as the old folder, in a folder of its own.
    expect(s1.token).toBe(1);
    expect(s1.path).toBe(names.folderOf(s1.agent, 'T-1', 1));
    expect(s1.branch).toBe(branchOf(shared.host, 'T-1'));
    expect([l1.path, oldFolder]).not.toContain(s1.path);
    expect(s2.path).not.toBe(l2.path);
    expect(s2.branch).toBe(branchOf(shared.host, 'T-2'));
    for (const id of ['T-1', 'T-2']) expect(shared.host.board.state.tasks.get(id)?.state).toBe('claimed');
    expect((await shared.host.board.log()).filter((e) => e.kind === 'blocked' || (e.kind === 'claim-ended' && e.reason === 'no-worktree'))).toEqual([]);
    // It starts from main, not from either earlier board's work, and its commits are fenced as its own.
    expect(gitSync(s1.path, ['rev-parse', 'HEAD'])).toBe(gitSync(folder, ['rev-parse', 'main']));
    const s1sha = await commitIn(shared.host, s1.agent, s1.path, 'shared work');
    await expect.poll(() => shared.host.board.state.tasks.get('T-1')?.record?.sha, { timeout: 10_000 }).toBe(s1sha);
    // Its agent's fence refuses a move of the other boards' branches as of any branch not its own.
    for (const theirs of [localNames.branch('T-1'), 'forkbench/T-1']) {
      const moved = await sh(s1.path, `git update-ref refs/heads/${theirs} HEAD`, agentEnv(shared.host, s1.agent));
      expect(moved.code).not.toBe(0);
      expect(moved.stderr).toContain(`refs/heads/${theirs} is not the branch of T-1`);
    }
    // Nothing of the other boards moved: their branches and files are as they were.
    expect(gitSync(folder, ['rev-parse', localNames.branch('T-1')])).toBe(l1sha);
    expect(gitSync(folder, ['rev-parse', 'forkbench/T-1'])).toBe(oldSha);
    expect(fs.readFileSync(join(l2.path, 'draft.txt'), 'utf8')).toBe('never committed\n');

    // The shared board's panel: exactly its own folders; the others apart, each with its board.
    const listed = await shared.window('worktree.list', {});
    expect(listed.map((w) => w.path).sort()).toEqual([s1.path, s2.path].sort());
    const others = await shared.window('worktree.others', {});
    expect(others.map((o) => [o.path, o.board, o.thisBoard, o.taskId, o.token]).sort()).toEqual(
      [
        [l1.path, localNames.key, false, 'T-1', l1.token],
        [l2.path, localNames.key, false, 'T-2', l2.token],
        [oldFolder, null, false, 'T-1', 1],
        [oldest, null, false, 'T-2', 2],
      ].sort(),
    );
    const other = (path: string) => others.find((o) => o.path === path);
    expect(other(l1.path)).toMatchObject({ branch: localNames.branch('T-1'), uncommitted: 0, unreachable: false });
    expect(other(l2.path)).toMatchObject({ branch: localNames.branch('T-2'), uncommitted: 1, unreachable: false });
    expect(other(oldFolder)).toMatchObject({ branch: 'forkbench/T-1', uncommitted: 0, unreachable: false });
    expect(other(oldest)).toMatchObject({ branch: null, uncommitted: 0, unreachable: true });

    // Clearing: never this board's folder, nor a path that is no claim folder; a folder with a change never
    // committed only when the person says so; the branch always stays.
    await expect(shared.window('worktree.clear', { path: s1.path, force: true })).rejects.toMatchObject({ code: 'no-worktree' });
    await expect(shared.window('worktree.clear', { path: folder, force: true })).rejects.toMatchObject({ code: 'no-worktree' });
    await expect(shared.window('worktree.clear', { path: l2.path, force: false })).rejects.toMatchObject({ code: 'uncommitted', message: expect.stringContaining('1 uncommitted change') });
    expect(fs.existsSync(join(l2.path, 'draft.txt'))).toBe(true);
    await expect(shared.window('worktree.clear', { path: oldest, force: false })).rejects.toMatchObject({ code: 'uncommitted', message: expect.stringContaining('a commit on no branch') });
    expect(fs.existsSync(oldest)).toBe(true);
    expect(await shared.window('worktree.clear', { path: oldFolder, force: false })).toBeNull();
    expect(await shared.window('worktree.clear', { path: l2.path, force: true })).toBeNull();
    for (const gone of [oldFolder, l2.path]) expect(fs.existsSync(gone)).toBe(false);
    expect(gitSync(folder, ['worktree', 'list', '--porcelain'])).not.toContain(oldFolder);
    expect(gitSync(folder, ['rev-parse', 'forkbench/T-1'])).toBe(oldSha);
    expect((await shared.window('worktree.others', {})).map((o) => o.path).sort()).toEqual([l1.path, oldest].sort());
    // This board's folders and records are untouched by all of it.
    expect((await shared.window('worktree.list', {})).map((w) => w.path).sort()).toEqual([s1.path, s2.path].sort());
    expect(shared.host.board.state.tasks.get('T-1')?.record?.sha).toBe(s1sha);
    await shared.threads.dispose();
    managers.splice(managers.indexOf(shared.threads), 1);

    // Back on the local board: its own folders are its list, the shared board's are the others, and its parked
    // T-1 goes on from its record on its own branch.
    const back = await open(root, folder);
    expect(back.host.worktrees.require().names.key).toBe(localNames.key);
    expect((await back.window('worktree.list', {})).map((w) => w.path).sort()).toEqual([l1.path, l2.path].sort());
    expect((await back.window('worktree.others', {})).map((o) => [o.path, o.board]).sort()).toEqual(
      [
        [s1.path, names.key],
        [s2.path, names.key],
        [oldest, null],
      ].sort(),
    );
    const again = await claim(back.host, 'T-1');
    expect(again.branch).toBe(localNames.branch('T-1'));
    expect(gitSync(again.path, ['rev-parse', 'HEAD'])).toBe(l1sha);
  }, 240_000);
});
