/**
 * A host killed inside a grant's `git worktree add` leaves the folder's admin folder with HEAD.lock (seen in the
 * two-host chaos run: B killed mid-grant, its clone kept .git/worktrees/T-3-3/HEAD.lock for good). The board
 * never named that folder, so no agent's git runs there: the next start of the Thread removes its locks, and
 * leaves the folder itself, and every folder the board names, where they are.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { gitSync, idleAgent, makeRepo } from '../../helpers/gitFixture.js';
import { openTestHost } from '../../helpers/testHost.js';

const hosts: ThreadHost[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.dispose();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function openThread(root: string, folder: string): Promise<ThreadHost> {
  const { host: h } = await openTestHost({ closedBy: 'caller', folder, dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false });
  hosts.push(h);
  return h;
}

/** T-1 claimed, so the board names its folder; then the host stops. Returns that folder. */
async function namedFolderThenStop(first: ThreadHost): Promise<string> {
  await first.board.run((e) => e.addTask({ title: 'named' }));
  const agent = await idleAgent(first);
  const c = await first.board.run((e) => e.claim(agent, 'T-1'));
  const named = (await first.worktrees.worktreeOf('T-1', (c.ok && c.value.token) as number))!.path;
  await first.dispose();
  hosts.splice(hosts.indexOf(first), 1);
  return named;
}

describe('a grant its host stopped inside', () => {
  it('leaves locks that the next start removes, where no task names the folder; the folders stay', async () => {
    const root = fs.mkdtempSync(join(tmpdir(), 'fb-interrupted-'));
    dirs.push(root);
    const folder = join(root, 'project');
    makeRepo(folder);
    const open = () => openThread(root, folder);
    const named = await namedFolderThenStop(await open());
    const dir = join(named, '..');

    // What a kill inside `git worktree add` leaves: the folder, its admin folder, HEAD.lock there.
    const cut = join(dir, 'T-9-9');
    gitSync(folder, ['worktree', 'add', '--quiet', '--detach', cut, 'HEAD']);
    const adminOf = (p: string) => join(folder, '.git', fs.readFileSync(join(p, '.git'), 'utf8').trim().split('/.git/')[1] as string);
    const cutLock = join(adminOf(cut), 'HEAD.lock');
    fs.writeFileSync(cutLock, '');

    const again = await open();
    expect(again.worktrees.git).not.toBeNull();
    expect(fs.existsSync(cutLock)).toBe(false);
    expect(fs.existsSync(cut)).toBe(true);
    expect(fs.existsSync(named)).toBe(true);
  }, 60_000);

  it('killed before its checkout (HEAD at nothing, which breaks every fetch): the next start makes git forget it', async () => {
    const root = fs.mkdtempSync(join(tmpdir(), 'fb-interrupted-'));
    dirs.push(root);
    const folder = join(root, 'project');
    makeRepo(folder);
    const remote = join(root, 'remote.git');
    gitSync(root, ['clone', '--quiet', '--bare', folder, remote]);
    gitSync(folder, ['remote', 'add', 'origin', remote]);
    const open = () => openThread(root, folder);
    const named = await namedFolderThenStop(await open());

    // What `git worktree add` has written when it is killed before its checkout (seen in the two-host chaos
    // run, B's T-6-17): the admin folder, its HEAD the null id, locked "initializing".
    const cut = join(named, '..', 'T-6-17');
    gitSync(folder, ['worktree', 'add', '--quiet', '--detach', cut, 'HEAD']);
    const admin = join(folder, '.git', 'worktrees', 'T-6-17');
    fs.writeFileSync(join(admin, 'HEAD'), `${'0'.repeat(40)}\n`);
    fs.writeFileSync(join(admin, 'locked'), 'initializing');
    const fetch = () => spawnSync('git', ['fetch', '--quiet', 'origin'], { cwd: folder, encoding: 'utf8' });
    expect(fetch().stderr).toMatch(/bad object worktrees\/T-6-17\/HEAD/);

    const again = await open();
    expect(again.worktrees.git).not.toBeNull();
    expect(fs.existsSync(admin)).toBe(false);
    expect(fetch().status).toBe(0);
    expect(fs.existsSync(cut)).toBe(true);
    expect(gitSync(folder, ['worktree', 'list', '--porcelain'])).toContain(named);
  }, 60_000);
});
