/**
 * Issue 31, two ThreadHosts (two machines' hosts, each with its own clone, data and runtime folders) on one
 * PostgreSQL board: a claim's git worktree is made by the host that runs the claiming agent, in its own
 * clone, and by no other. Before, every host followed every grant and made (and recorded) a worktree for it,
 * so host A gave B's agent a folder on A's disk.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { gitSync, makeRepo } from '../../helpers/gitFixture.js';
import { startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';
import { waitFor } from '../../helpers/pty.js';
import { openTestHost } from '../../helpers/testHost.js';

let pgc: PgCluster;
let url: string;
const hosts: ThreadHost[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  pgc = await startPgCluster({ fsync: false });
  url = await pgc.createDatabase('trees');
});
afterAll(() => pgc?.dispose());
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.dispose();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A host on a clone of `origin`, sharing the board named after origin's URL (the default name). */
async function hostOn(origin: string): Promise<{ host: ThreadHost; folder: string }> {
  const root = fs.mkdtempSync(join(tmpdir(), 'fb-shared-trees-'));
  dirs.push(root);
  const folder = join(root, 'clone');
  gitSync(root, ['clone', '-q', origin, folder]);
  const { host } = await openTestHost({ closedBy: 'caller', folder, dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, sharedBoard: { url } });
  hosts.push(host);
  return { host, folder };
}

describe('worktrees on a shared board', () => {
  it('only the claiming agent’s host makes its worktree, in its own clone', async () => {
    const originRoot = fs.mkdtempSync(join(tmpdir(), 'fb-shared-origin-'));
    dirs.push(originRoot);
    const origin = join(originRoot, 'origin');
    fs.mkdirSync(origin);
    makeRepo(origin);
    const a = await hostOn(origin);
    const b = await hostOn(origin);
    expect(b.host.board.state.threadId).toBe(a.host.board.state.threadId);
    await a.host.board.run((e) => e.addTask({ title: 'work on b' }));
    b.host.board.membership!.hostAgent('agent-b');
    const g = await b.host.board.run((e) => e.claim('agent-b', 'T-1'));
    expect(g.ok).toBe(true);
    const wt = await waitFor(() => b.host.board.state.tasks.get('T-1')?.worktree ?? undefined, 20_000, 'the worktree recorded');
    // B's folder, in B's clone's repository.
    expect(fs.existsSync(wt.path)).toBe(true);
    expect(gitSync(b.folder, ['worktree', 'list', '--porcelain'])).toContain(`worktree ${wt.path}`);
    // A saw the grant and made nothing: its clone has no worktree but its own checkout.
    await waitFor(() => a.host.board.state.tasks.get('T-1')?.worktree?.path === wt.path, 10_000, 'A to follow the record');
    await a.host.worktrees.git?.idle();
    const listed = gitSync(a.folder, ['worktree', 'list', '--porcelain']).split('\n').filter((l) => l.startsWith('worktree '));
    expect(listed).toEqual([`worktree ${a.folder}`]);
    // One folder made and recorded, none refused or blocked.
    const log = await a.host.board.log();
    expect(log.filter((e) => e.kind === 'worktree-set')).toHaveLength(1);
    expect(log.filter((e) => e.kind === 'blocked' || e.kind === 'claim-ended')).toEqual([]);
    // Each host's Worktrees panel lists its own folders: B's lists it, A's does not (nor as another board's),
    // and A cannot remove it; both name its branch alike.
    expect(wt.branch).toBe(a.host.worktrees.require().names.branch('T-1'));
    expect((await b.host.worktrees.require().folders.list()).map((w) => w.path)).toEqual([wt.path]);
    expect(await a.host.worktrees.require().folders.list()).toEqual([]);
    expect(await a.host.worktrees.require().folders.others()).toEqual([]);
    await b.host.board.run((e) => e.release('agent-b', 'T-1'));
    await waitFor(() => a.host.board.state.tasks.get('T-1')?.claim === null, 10_000, 'A to see the release');
    await expect(a.host.worktrees.require().folders.remove('T-1', true)).rejects.toMatchObject({ problem: 'no-worktree', message: expect.stringContaining("is another host's") });
    expect(fs.existsSync(wt.path)).toBe(true);
    expect(a.host.board.state.tasks.get('T-1')?.worktree?.path).toBe(wt.path);
  }, 60_000);
});
