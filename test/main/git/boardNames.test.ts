/**
 * The one definition of a board's git names (src-main/git/boardNames.ts, src-shared/git/taskBranch.ts): a key
 * that every host of a shared board agrees on and the folder's local board does not share; the layouts of
 * claim folders there have been; and a board made before keys, whose records keep their names.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BoardNames, boardKeyOf, claimFoldersUnder, hooksKeyOf } from '../../../src-main/git/boardNames.js';
import { HOST_ACTOR } from '../../../src-shared/board/model.js';
import { remoteTaskRef, strayRef, taskBranch } from '../../../src-shared/git/taskBranch.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { agentEnv, cliAs, Fixture, gitSync, idleAgent, sh } from '../../helpers/gitFixture.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';

// Its tests run git and the CLI as an agent from the test process, outside any pane (peerJudges.ts).
const fx = new Fixture({ peerJudge: secretsFromTheTestProcess });
beforeAll(() => ensureBuilt(), 300_000);
afterEach(() => fx.cleanup());

describe('a board’s key and names', () => {
  it('is the same for every host of a shared board, and differs from the local board of the same Thread id', () => {
    const shared = (name: string, threadId: string) => boardKeyOf({ state: { threadId }, sharedName: name });
    const local = boardKeyOf({ state: { threadId: '0123456789abcdef' }, sharedName: null });
    expect(shared('team', '0123456789abcdef')).toBe(shared('team', '0123456789abcdef'));
    expect(shared('team', '0123456789abcdef')).not.toBe(local);
    expect(shared('other', '0123456789abcdef')).not.toBe(shared('team', '0123456789abcdef'));
    for (const k of [local, shared('team', 'x')]) expect(k).toMatch(/^[0-9a-f]{8}$/);
    const names = new BoardNames(local, '/data/threads/t');
    expect(names.branch('T-3')).toBe(`forkbench/${local}/T-3`);
    expect(remoteTaskRef(names.branch('T-3'))).toBe(`refs/forkbench/tasks/${local}/T-3`);
    expect(strayRef(names.branch('T-3'), 'abc')).toBe(`refs/forkbench/stray/${local}/T-3/abc`);
    expect(names.folderOf('shell-1-0123456789ab', 'T-3', 7)).toBe(`/data/threads/t/worktrees/${local}/shell-1-0123456789ab/T-3-7`);
    expect(names.queueCheckoutOf('T-3')).toBe(`/data/threads/t/merge-queue/${local}/T-3`);
    // A branch from before keys keeps its remote and stray names.
    expect(remoteTaskRef('forkbench/T-3')).toBe('refs/forkbench/tasks/T-3');
    expect(strayRef('forkbench/T-3', 'abc')).toBe('refs/forkbench/stray/T-3/abc');
    expect(() => new BoardNames('T-3', '/data')).toThrow(/not a board key/);
  });

  it('names each layout’s hooks folder and finds each layout’s claim folders on disk', () => {
    const root = join(fx.tmp(), 'worktrees');
    const key = boardKeyOf({ state: { threadId: 't' }, sharedName: null });
    const made = [join(root, key, 'shell-1-0123456789ab', 'T-3-7'), join(root, 'shell-2-0123456789ab', 'T-2-2'), join(root, 'T-1-1')];
    for (const d of made) fs.mkdirSync(d, { recursive: true });
    fs.mkdirSync(join(root, key, 'shell-1-0123456789ab', 'not-a-claim'));
    fs.writeFileSync(join(root, key, 'shell-1-0123456789ab', 'acks.log'), '');
    expect(made.map(hooksKeyOf)).toEqual([`${key}/T-3-7`, 'T-2-2', 'T-1-1']);
    expect(claimFoldersUnder(root).sort((a, b) => a.path.localeCompare(b.path))).toEqual(
      [
        { path: made[0], board: key, agent: 'shell-1-0123456789ab', taskId: 'T-3', token: 7 },
        { path: made[1], board: null, agent: 'shell-2-0123456789ab', taskId: 'T-2', token: 2 },
        { path: made[2], board: null, agent: null, taskId: 'T-1', token: 1 },
      ].sort((a, b) => (a.path as string).localeCompare(b.path as string)),
    );
    expect(claimFoldersUnder(join(root, 'none'))).toEqual([]);
  });
});

describe('a board made before keys', () => {
  it('keeps the branch its record names: a new claim works on forkbench/T-1 in a folder under the board’s key, and the old folder is parked', async () => {
    const { host, folder } = await fx.host();
    const names = host.worktrees.require().names;
    await host.board.run((e) => e.addTask({ title: 'from before' }));
    // What the board and the repository held before keys: a folder and a branch under the old names.
    const old = join(names.worktreesRoot, 'shell-1-0123456789ab', 'T-1-1');
    gitSync(folder, ['worktree', 'add', '-q', '-b', 'forkbench/T-1', old, 'main']);
    fs.appendFileSync(join(old, 'notes.txt'), 'before keys\n');
    gitSync(old, ['commit', '-qam', 'before keys']);
    const before = gitSync(folder, ['rev-parse', 'forkbench/T-1']);
    const recorded = await host.board.run((e) =>
      e.recordWorktree('T-1', { path: old, branch: 'forkbench/T-1', base: 'main', baseCommit: gitSync(folder, ['rev-parse', 'main']) }, HOST_ACTOR, {
        sha: before,
        tree: gitSync(folder, ['rev-parse', `${before}^{tree}`]),
        token: 0,
        by: HOST_ACTOR,
      }),
    );
    expect(recorded.ok).toBe(true);
    const a = await idleAgent(host);
    const c = await cliAs(host, a, ['claim', 'T-1']);
    expect(c.code, JSON.stringify(c.out)).toBe(0);
    expect(c.out.result.worktree.branch).toBe('forkbench/T-1');
    expect(c.out.result.worktree.branch).not.toBe(taskBranch(names.key, 'T-1'));
    expect(c.out.result.worktree.path).toBe(names.folderOf(a, 'T-1', c.out.result.token));
    const wt = c.out.result.worktree.path as string;
    expect(gitSync(wt, ['rev-parse', 'HEAD'])).toBe(before);
    fs.appendFileSync(join(wt, 'notes.txt'), 'after keys\n');
    const commit = await sh(wt, 'git commit -qam "after keys"', agentEnv(host, a));
    expect(commit.code, commit.stderr).toBe(0);
    await expect.poll(() => host.board.state.tasks.get('T-1')?.record?.sha, { timeout: 10_000 }).toBe(gitSync(folder, ['rev-parse', 'forkbench/T-1']));
    // The old folder is this board's, parked and off the branch: listed as the board's, not as another board's.
    expect(host.board.state.tasks.get('T-1')?.parked.map((p) => p.path)).toEqual([old]);
    expect(gitSync(old, ['rev-parse', '--abbrev-ref', 'HEAD'])).toBe('HEAD');
    expect((await host.worktrees.require().folders.list()).map((w) => w.path).sort()).toEqual([old, wt].sort());
    expect(await host.worktrees.require().folders.others()).toEqual([]);
  });
});
