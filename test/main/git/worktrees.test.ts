import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../../helpers/cli.js';
import { agentEnv, cliAs, Fixture, gitSync, idleAgent, sh } from '../../helpers/gitFixture.js';
import { boardEdges } from '../../helpers/boardEdges.js';
import { strayRef } from '../../../src-shared/git/taskBranch.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';

// Its tests run git and the CLI as an agent from the test process, outside any pane (peerJudges.ts).
const fx = new Fixture({ peerJudge: secretsFromTheTestProcess });
beforeAll(() => ensureBuilt());
afterEach(() => fx.cleanup());

describe('a worktree per claim', () => {
  it('a claim gets a worktree on forkbench/<board>/T-n from the base branch, outside the user folder, with the named files copied', async () => {
    const { host, folder, root } = await fx.host();
    const names = host.worktrees.require().names;
    const branch = names.branch('T-1');
    expect(branch).toMatch(/^forkbench\/[0-9a-f]{8}\/T-1$/);
    fs.writeFileSync(join(folder, '.env'), 'SECRET=1\n'); // untracked: git would not bring it
    await host.board.run((e) => e.setSettings({ copyFiles: ['.env', 'missing.cfg'] }));
    await host.board.run((e) => e.addTask({ title: 'parser' }));
    const a = await idleAgent(host);
    const { code, out } = await cliAs(host, a, ['claim', 'T-1']);
    expect(code).toBe(0);
    const wt = out.result.worktree;
    expect(wt.branch).toBe(branch);
    expect(wt.path.startsWith(join(root, 'data'))).toBe(true);
    expect(wt.path.startsWith(folder)).toBe(false);
    expect(wt.path).toBe(names.folderOf(a, 'T-1', out.result.token));
    expect(gitSync(wt.path, ['branch', '--show-current'])).toBe(branch);
    expect(gitSync(wt.path, ['rev-parse', 'HEAD'])).toBe(gitSync(folder, ['rev-parse', 'main']));
    expect(fs.readFileSync(join(wt.path, '.env'), 'utf8')).toBe('SECRET=1\n');
    expect(host.board.state.tasks.get('T-1')?.worktree).toMatchObject({ path: wt.path, branch, base: 'main' });
    expect(host.board.state.tasks.get('T-1')?.notes.map((n) => n.text).join('\n')).toMatch(/Not copied.*missing\.cfg/);
    // show tells the agent where to work, too
    const show = await cliAs(host, a, ['show', 'T-1']);
    expect(show.out.result.worktree).toEqual({ path: wt.path, branch, base: 'main' });
    expect(host.worktrees.isolation()).toEqual({ isolated: true, repoRoot: fs.realpathSync(folder), baseBranch: 'main' });
  });

  it('two agents on two tasks edit the same file in their own worktrees without seeing each other', async () => {
    const { host, folder } = await fx.host();
    await host.board.run((e) => e.addTask({ title: 'one' }));
    await host.board.run((e) => e.addTask({ title: 'two' }));
    const [a, b] = [await idleAgent(host), await idleAgent(host)];
    const wa = (await cliAs(host, a, ['claim', 'T-1'])).out.result.worktree.path as string;
    const wb = (await cliAs(host, b, ['claim', 'T-2'])).out.result.worktree.path as string;
    fs.writeFileSync(join(wa, 'notes.txt'), 'written by A\n');
    fs.writeFileSync(join(wb, 'notes.txt'), 'written by B\n');
    expect((await sh(wa, 'git commit -qam "A edits"', agentEnv(host, a))).code).toBe(0);
    expect((await sh(wb, 'git commit -qam "B edits"', agentEnv(host, b))).code).toBe(0);
    expect(fs.readFileSync(join(wa, 'notes.txt'), 'utf8')).toBe('written by A\n');
    expect(fs.readFileSync(join(wb, 'notes.txt'), 'utf8')).toBe('written by B\n');
    expect(fs.readFileSync(join(folder, 'notes.txt'), 'utf8')).toBe('line one\n');
    const names = host.worktrees.require().names;
    expect(gitSync(folder, ['log', '-1', '--format=%s', names.branch('T-1')])).toBe('A edits');
    expect(gitSync(folder, ['log', '-1', '--format=%s', names.branch('T-2')])).toBe('B edits');
  });

  it('a re-claim by another agent continues on the same branch in a fresh folder at the recorded commit; the old folder is parked and fenced', async () => {
    const { host } = await fx.host();
    await host.board.run((e) => e.addTask({ title: 'handover' }));
    const [a, b] = [await idleAgent(host), await idleAgent(host)];
    const ca = (await cliAs(host, a, ['claim', 'T-1'])).out.result;
    fs.writeFileSync(join(ca.worktree.path, 'half.txt'), 'half done\n');
    expect((await sh(ca.worktree.path, 'git add half.txt && git commit -qm half', agentEnv(host, a))).code).toBe(0);
    fs.writeFileSync(join(ca.worktree.path, 'scratch.txt'), 'not committed\n');
    expect((await cliAs(host, a, ['release', 'T-1', '--token', String(ca.token)])).code).toBe(0);
    const cb = (await cliAs(host, b, ['claim', 'T-1'])).out.result;
    expect(cb.worktree.path).not.toBe(ca.worktree.path);
    expect(cb.worktree.path).toMatch(new RegExp(`T-1-${cb.token}$`));
    const branch = host.worktrees.require().names.branch('T-1');
    expect(cb.worktree.branch).toBe(branch);
    expect(cb.token).toBeGreaterThan(ca.token);
    expect(fs.readFileSync(join(cb.worktree.path, 'half.txt'), 'utf8')).toBe('half done\n');
    // what was never committed stays in the old folder, for a person; it never reaches the new holder
    expect(fs.existsSync(join(cb.worktree.path, 'scratch.txt'))).toBe(false);
    expect(fs.readFileSync(join(ca.worktree.path, 'scratch.txt'), 'utf8')).toBe('not committed\n');
    expect(host.board.state.tasks.get('T-1')?.parked.map((p) => p.path)).toEqual([ca.worktree.path]);
    fs.writeFileSync(join(cb.worktree.path, 'half.txt'), 'all done\n');
    const commit = await sh(cb.worktree.path, 'git commit -qam finish', agentEnv(host, b));
    expect(commit.code, commit.stderr).toBe(0);
    expect(gitSync(cb.worktree.path, ['log', '--format=%s', '-2'])).toBe('finish\nhalf');
    // the old folder is off the branch and refuses everything
    const stale = await sh(ca.worktree.path, 'git add -A && git commit -qm stale', agentEnv(host, a));
    expect(stale.code).not.toBe(0);
    expect(stale.stderr).toMatch(/forkbench: refused \(stale-token\)/);
    expect(gitSync(cb.worktree.path, ['log', '-1', '--format=%s', branch])).toBe('finish');
  });

  it('survives a host restart: the worktree is found again from the journal', async () => {
    const { host, root } = await fx.host();
    await host.board.run((e) => e.addTask({ title: 'long job' }));
    const a = await idleAgent(host);
    const first = (await cliAs(host, a, ['claim', 'T-1'])).out.result.worktree.path as string;
    fs.writeFileSync(join(first, 'wip.txt'), 'uncommitted work\n');
    await host.dispose();
    fx.hosts.splice(fx.hosts.indexOf(host), 1);
    const again = await fx.host({ folder: host.folder, dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run') });
    const t = again.host.board.state.tasks.get('T-1');
    expect(t?.state).toBe('open'); // the claim ended with the host
    expect(t?.worktree?.path).toBe(first);
    const list = await again.host.worktrees.require().folders.list();
    expect(list).toEqual([expect.objectContaining({ taskId: 'T-1', path: first, held: false, missing: false, uncommitted: 1 })]);
    const b = await idleAgent(again.host);
    const c = (await cliAs(again.host, b, ['claim', 'T-1'])).out.result;
    // a new grant gets a fresh folder; the earlier one, with its uncommitted work, is parked and listed
    expect(c.worktree.path).not.toBe(first);
    expect(fs.readFileSync(join(first, 'wip.txt'), 'utf8')).toBe('uncommitted work\n');
    expect((await again.host.worktrees.require().folders.list()).map((w) => w.path).sort()).toEqual([first, c.worktree.path].sort());
  });
});

describe('bad input: clear messages, nothing lost', () => {
  it('a folder that is not a repository keeps the shared folder and says why there is no isolation', async () => {
    const { host } = await fx.host({ repo: false });
    const iso = host.worktrees.isolation();
    expect(iso.isolated).toBe(false);
    expect(iso.isolated === false && iso.reason).toMatch(/is not a git repository.*git init/);
    await host.board.run((e) => e.addTask({ title: 'plain' }));
    const a = await idleAgent(host);
    const c = await cliAs(host, a, ['claim', 'T-1']);
    expect(c.code).toBe(0);
    expect(c.out.result.worktree).toBeNull();
    expect(() => host.worktrees.require()).toThrow(/no worktrees: .*not a git repository/);
  });

  it('a detached HEAD refuses the claim with the fix, and a base branch setting mends it', async () => {
    const { host, folder } = await fx.host();
    gitSync(folder, ['checkout', '-q', '--detach']);
    await host.board.run((e) => e.addTask({ title: 'needs a base' }));
    const a = await idleAgent(host);
    const c = await cliAs(host, a, ['claim', 'T-1']);
    expect(c.code).toBe(3);
    expect(c.out.error).toMatchObject({ reason: 'bad-state' });
    expect(c.out.error?.message).toMatch(/detached HEAD.*base branch/);
    const t = host.board.state.tasks.get('T-1');
    expect(t).toMatchObject({ state: 'blocked', claim: null, lastClaim: { reason: 'no-worktree' } });
    expect(t?.blockedReason).toMatch(/detached HEAD/);
    expect(host.worktrees.isolation()).toMatchObject({ isolated: false });
    await host.board.run((e) => e.setSettings({ baseBranch: 'main' }));
    await host.board.run((e) => e.unblock('T-1'));
    const again = await cliAs(host, a, ['claim', 'T-1']);
    expect(again.code).toBe(0);
    expect(again.out.result.worktree.base).toBe('main');
  });

  it('a branch name already taken is kept aside as a stray ref, never deleted, and never blocks the claim', async () => {
    const { host, folder } = await fx.host();
    const branch = host.worktrees.require().names.branch('T-1');
    gitSync(folder, ['branch', branch]);
    fs.writeFileSync(join(folder, 'notes.txt'), 'more\n');
    gitSync(folder, ['commit', '-qam', 'second']);
    gitSync(folder, ['checkout', '-q', branch]);
    fs.writeFileSync(join(folder, 'theirs.txt'), 'a person made this branch\n');
    gitSync(folder, ['add', 'theirs.txt']);
    gitSync(folder, ['commit', '-qm', 'theirs']);
    gitSync(folder, ['checkout', '-q', 'main']);
    const before = gitSync(folder, ['rev-parse', branch]);
    await host.board.run((e) => e.addTask({ title: 'taken' }));
    const a = await idleAgent(host);
    const c = await cliAs(host, a, ['claim', 'T-1']);
    expect(c.code, JSON.stringify(c.out)).toBe(0);
    expect(gitSync(folder, ['rev-parse', strayRef(branch, before)])).toBe(before);
    expect(gitSync(folder, ['rev-parse', branch])).toBe(gitSync(folder, ['rev-parse', 'main']));
    expect(host.board.state.tasks.get('T-1')?.state).toBe('claimed');
    expect(host.board.state.tasks.get('T-1')?.notes.map((n) => n.text).join('\n')).toContain(`${branch} was at ${before.slice(0, 10)}, and Forkbench did not make it for this Thread: it is kept as ${strayRef(branch, before)}`);
  });

  it('a base branch that does not exist is named', async () => {
    const { host } = await fx.host();
    await host.board.run((e) => e.setSettings({ baseBranch: 'release/9' }));
    await host.board.run((e) => e.addTask({ title: 'x' }));
    const a = await idleAgent(host);
    const c = await cliAs(host, a, ['claim', 'T-1']);
    expect(c.out.error?.message).toMatch(/base branch 'release\/9' does not exist/);
    // a name git would refuse is refused where settings come in, at the window's edge
    const edges = await boardEdges('wt-base');
    try {
      expect(await edges.window('board.setSettings', { patch: { baseBranch: 'bad..name' } })).toMatchObject({ ok: false, error: { code: 'invalid-input' } });
      expect(edges.board.state.settings.baseBranch).toBeNull();
    } finally {
      await edges.dispose();
    }
  });

  it('a worktree deleted by hand is made again from its branch, commits kept', async () => {
    const { host } = await fx.host();
    await host.board.run((e) => e.addTask({ title: 'fragile' }));
    const a = await idleAgent(host);
    const c = (await cliAs(host, a, ['claim', 'T-1'])).out.result;
    fs.writeFileSync(join(c.worktree.path, 'kept.txt'), 'committed\n');
    expect((await sh(c.worktree.path, 'git add kept.txt && git commit -qm kept', agentEnv(host, a))).code).toBe(0);
    await cliAs(host, a, ['release', 'T-1', '--token', String(c.token)]);
    fs.rmSync(c.worktree.path, { recursive: true, force: true });
    expect((await host.worktrees.require().folders.list())[0]).toMatchObject({ taskId: 'T-1', missing: true, ahead: 1 });
    const again = await cliAs(host, a, ['claim', 'T-1']);
    expect(again.code).toBe(0);
    const path = again.out.result.worktree.path as string;
    expect(fs.readFileSync(join(path, 'kept.txt'), 'utf8')).toBe('committed\n');
    expect(host.board.state.tasks.get('T-1')?.notes.map((n) => n.text).join('\n')).toContain(`deleted by hand; it was made again from ${host.worktrees.require().names.branch('T-1')}`);
    // and it is fenced again
    fs.writeFileSync(join(path, 'kept.txt'), 'changed\n');
    const commit = await sh(path, 'git commit -qam again', agentEnv(host, a));
    expect(commit.code, commit.stderr).toBe(0);
  });
});

describe('lifecycle: parked worktrees and removal', () => {
  it('a parked worktree with uncommitted changes or unmerged commits is removed only when the person says so', async () => {
    const { host, folder } = await fx.host();
    await host.board.run((e) => e.addTask({ title: 'parked' }));
    const a = await idleAgent(host);
    const c = (await cliAs(host, a, ['claim', 'T-1'])).out.result;
    fs.writeFileSync(join(c.worktree.path, 'draft.txt'), 'draft\n');
    await expect(host.worktrees.require().folders.remove('T-1', false)).rejects.toMatchObject({ problem: 'held' });
    await cliAs(host, a, ['release', 'T-1', '--token', String(c.token)]);
    const list = await host.worktrees.require().folders.list();
    expect(list[0]).toMatchObject({ held: false, uncommitted: 1, ahead: 0 });
    await expect(host.worktrees.require().folders.remove('T-1', false)).rejects.toThrow(/1 uncommitted change: removing it loses them/);
    expect(fs.existsSync(join(c.worktree.path, 'draft.txt'))).toBe(true);
    await host.worktrees.require().folders.remove('T-1', true);
    expect(fs.existsSync(c.worktree.path)).toBe(false);
    expect(gitSync(folder, ['branch', '--list', 'forkbench/*'])).toBe('');
    expect(host.board.state.tasks.get('T-1')?.worktree).toBeNull();
    expect(await host.worktrees.require().folders.list()).toEqual([]);
  });
});
