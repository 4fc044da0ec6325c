import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tokenCheck } from '../../../src-renderer/state/reviewVerdict.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { paneText } from '../../helpers/events.js';
import { agentEnv, branchOf, cliAs, Fixture, gitSync, idleAgent, nextEvent, sh } from '../../helpers/gitFixture.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';

// Its tests run git and the CLI as an agent from the test process, outside any pane (peerJudges.ts).
const fx = new Fixture({ peerJudge: secretsFromTheTestProcess });
beforeAll(() => ensureBuilt());
afterEach(() => fx.cleanup());

/** A task claimed by a real agent process, with one commit of `files` in its worktree, submitted for review. */
async function submitted(files: Record<string, string>, o: { verify?: string } = {}) {
  const ctx = await fx.host();
  const { host } = ctx;
  await host.board.run((e) => e.addTask({ title: 'change notes', verify: o.verify ?? null }));
  const a = await idleAgent(host);
  const c = (await cliAs(host, a, ['claim', 'T-1'])).out.result as { token: number; worktree: { path: string } };
  const wt = c.worktree.path;
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(join(wt, name), text);
  const commit = await sh(wt, 'git add -A && git commit -qm "the change"', agentEnv(host, a));
  expect(commit.code, commit.stderr).toBe(0);
  return { ...ctx, a, token: c.token, wt, done: () => cliAs(host, a, ['done', 'T-1', '--token', String(c.token)]) };
}

const notes = (host: { board: { state: { tasks: Map<string, { notes: readonly { text: string }[] }> } } }) =>
  (host.board.state.tasks.get('T-1')?.notes ?? []).map((n) => n.text).join('\n');

describe('review shows the work, approval merges it', () => {
  it('the diff lists files and the patch; approve merges into the base and removes the worktree and branch', async () => {
    const { host, folder, wt, token, done } = await submitted({ 'notes.txt': 'line one\nline two\n', 'new.txt': 'new file\n' });
    expect((await done()).code).toBe(0);
    const d = await host.worktrees.require().review.diff('T-1');
    expect(d).toMatchObject({ branch: branchOf(host, 'T-1'), base: 'main', commits: 1, headToken: token, finalToken: token, truncated: false, uncommitted: 0 });
    expect(d.files).toEqual([
      { path: 'new.txt', status: 'A', added: 1, deleted: 0 },
      { path: 'notes.txt', status: 'M', added: 1, deleted: 0 },
    ]);
    expect(d.patch).toContain('+line two');
    const before = gitSync(folder, ['rev-parse', 'main']);
    await host.worktrees.approve('T-1');
    expect(host.board.state.tasks.get('T-1')?.state).toBe('done');
    expect(fs.readFileSync(join(folder, 'notes.txt'), 'utf8')).toBe('line one\nline two\n');
    expect(gitSync(folder, ['rev-parse', 'main^1'])).toBe(before);
    expect(gitSync(folder, ['log', '-1', '--format=%B', 'main'])).toMatch(new RegExp(String.raw`^Merge ${branchOf(host, 'T-1')}: change notes[\s\S]*Forkbench-Token: \d+`));
    expect(gitSync(folder, ['status', '--porcelain'])).toBe('');
    expect(fs.existsSync(wt)).toBe(false);
    expect(gitSync(folder, ['branch', '--list', 'forkbench/*'])).toBe('');
    expect(host.board.state.tasks.get('T-1')?.worktree).toBeNull();
    expect(notes(host)).toMatch(new RegExp(String.raw`Merged ${branchOf(host, 'T-1')} into main as [0-9a-f]{10}\.`));
  });

  it('after the merge, the agent that said done is told in its pane that its worktree is gone and where to go', async () => {
    const { host, folder } = await fx.host();
    await host.board.run((e) => e.addTask({ title: 'change notes' }));
    const a = (await host.roster.launch('custom', { command: 'exec cat' })).id;
    const c = (await cliAs(host, a, ['claim', 'T-1'])).out.result as { token: number; worktree: { path: string } };
    fs.writeFileSync(join(c.worktree.path, 'n.txt'), 'n\n');
    expect((await sh(c.worktree.path, 'git add -A && git commit -qm n', agentEnv(host, a))).code).toBe(0);
    expect((await cliAs(host, a, ['done', 'T-1', '--token', String(c.token)])).code).toBe(0);
    const told = paneText(host, a, /T-1 "change notes" landed: it was approved and merged; its worktree folder \S+ is removed\. If your shell was in it: cd '([^']+)'/);
    await host.worktrees.approve('T-1');
    const m = /cd '([^']+)'/.exec(await told);
    expect(m?.[1]).toBe(folder);
    expect(fs.existsSync(c.worktree.path)).toBe(false);
  });

  it('the page and the host give one verdict: a branch with no commits is approved without a merge, and the page says so first', async () => {
    const ctx = await fx.host();
    const { host, folder } = ctx;
    await host.board.run((e) => e.addTask({ title: 'nothing to do after all' }));
    const a = await idleAgent(host);
    const c = (await cliAs(host, a, ['claim', 'T-1'])).out.result as { token: number };
    expect((await cliAs(host, a, ['done', 'T-1', '--token', String(c.token)])).code).toBe(0);
    const d = await host.worktrees.require().review.diff('T-1');
    expect(d).toMatchObject({ commits: 0, headTask: 'T-1' });
    expect(tokenCheck(d)).toEqual({ ok: true, message: `${branchOf(host, 'T-1')} has no commits of its own: approving merges nothing.` });
    const before = gitSync(folder, ['rev-parse', 'main']);
    await host.worktrees.approve('T-1');
    expect(host.board.state.tasks.get('T-1')?.state).toBe('done');
    expect(gitSync(folder, ['rev-parse', 'main'])).toBe(before);
  });

  it('done with no commit under its token is taken, with a warning that approval merges nothing of the agent\'s', async () => {
    const { host } = await fx.host();
    await host.board.run((e) => e.addTask({ title: 'forgot to commit' }));
    const a = await idleAgent(host);
    const c = (await cliAs(host, a, ['claim', 'T-1'])).out.result as { token: number };
    const r = await cliAs(host, a, ['done', 'T-1', '--token', String(c.token)]);
    expect(r.code).toBe(0);
    expect((r.out.result as { warning?: string }).warning).toMatch(new RegExp(`no commit is recorded for T-1 under token ${c.token}`));
    expect(host.board.state.tasks.get('T-1')?.state).toBe('review');
    // with a commit of its own, no warning
    const s = await submitted({ 'x.txt': 'x\n' });
    expect(((await s.done()).out.result as { warning?: string }).warning).toBeUndefined();
  });

  it('approval refuses a head written under an earlier claim: base untouched, the task back with its holder (merge queue)', async () => {
    const { host, folder, done } = await submitted({ 'notes.txt': 'by A\n' });
    const b = await idleAgent(host);
    const moved = await host.board.run((e) => e.assign('T-1', b));
    expect(moved.ok).toBe(true);
    if (!moved.ok) return;
    await host.worktrees.worktreeOf('T-1', moved.value.token);
    expect((await done()).code).toBe(3); // A's claim is over
    expect((await cliAs(host, b, ['done', 'T-1', '--token', String(moved.value.token)])).code).toBe(0);
    const before = gitSync(folder, ['rev-parse', 'main']);
    expect(tokenCheck(await host.worktrees.require().review.diff('T-1')).ok).toBe(false);
    await expect(host.worktrees.approve('T-1')).rejects.toMatchObject({ problem: 'wrong-token' });
    expect(gitSync(folder, ['rev-parse', 'main'])).toBe(before);
    // Issue 34: the merge queue sends the work back to its holder with the reason, where it stayed in review.
    expect(host.board.state.tasks.get('T-1')).toMatchObject({ state: 'claimed', queued: null, claim: { agentId: b } });
    expect(notes(host)).toMatch(new RegExp(String.raw`Review: Merge queue: ${branchOf(host, 'T-1')}'s last commit [0-9a-f]{10} was written under token 1, but the work under review was submitted under token 2`));
  });

  it('a merge conflict sends the task back to its agent with the files (merge queue) and leaves the base branch untouched', async () => {
    const { host, folder, done } = await submitted({ 'notes.txt': 'the agent says\n' });
    fs.writeFileSync(join(folder, 'notes.txt'), 'the person says\n');
    gitSync(folder, ['commit', '-qam', 'meanwhile on main']);
    expect((await done()).code).toBe(0);
    const before = gitSync(folder, ['rev-parse', 'main']);
    await expect(host.worktrees.approve('T-1')).rejects.toMatchObject({ problem: 'merge-conflict' });
    expect(gitSync(folder, ['rev-parse', 'main'])).toBe(before);
    expect(fs.readFileSync(join(folder, 'notes.txt'), 'utf8')).toBe('the person says\n');
    expect(gitSync(folder, ['status', '--porcelain'])).toBe('');
    expect(host.board.state.tasks.get('T-1')).toMatchObject({ state: 'claimed', queued: null });
    expect(notes(host)).toMatch(new RegExp(String.raw`Review: Merge queue: ${branchOf(host, 'T-1')} does not merge cleanly into main: conflicts in notes\.txt\. main is untouched`));
  });

  it("uncommitted changes on the base are never overwritten: the merge waits and says which files", async () => {
    const { host, folder, done } = await submitted({ 'notes.txt': 'agent\n' });
    fs.writeFileSync(join(folder, 'notes.txt'), 'unsaved work of the person\n');
    expect((await done()).code).toBe(0);
    const before = gitSync(folder, ['rev-parse', 'main']);
    await expect(host.worktrees.approve('T-1')).rejects.toMatchObject({ problem: 'base-dirty' });
    expect(fs.readFileSync(join(folder, 'notes.txt'), 'utf8')).toBe('unsaved work of the person\n');
    expect(gitSync(folder, ['rev-parse', 'main'])).toBe(before);
    expect(host.board.state.tasks.get('T-1')?.state).toBe('review');
    expect(notes(host)).toMatch(/uncommitted changes on main in notes\.txt that the merge would overwrite/);
    // once the person commits or stashes, the same approval goes through
    gitSync(folder, ['stash', '-q']);
    await host.worktrees.approve('T-1');
    expect(fs.readFileSync(join(folder, 'notes.txt'), 'utf8')).toBe('agent\n');
  });

  it('a dirty base is named when a worktree is made from it', async () => {
    const { host, folder } = await fx.host();
    fs.writeFileSync(join(folder, 'notes.txt'), 'not committed\n');
    await host.board.run((e) => e.addTask({ title: 'x' }));
    const a = await idleAgent(host);
    const wt = (await cliAs(host, a, ['claim', 'T-1'])).out.result.worktree.path as string;
    expect(fs.readFileSync(join(wt, 'notes.txt'), 'utf8')).toBe('line one\n');
    expect(notes(host)).toMatch(/has 1 uncommitted change on main: the worktree starts from main's last commit [0-9a-f]{10} without them/);
  });

  it('uncommitted leftovers in the worktree are kept after the merge, and said so', async () => {
    const { host, wt, done } = await submitted({ 'notes.txt': 'merged part\n' });
    fs.writeFileSync(join(wt, 'leftover.txt'), 'never committed\n');
    expect((await done()).code).toBe(0);
    expect((await host.worktrees.require().review.diff('T-1')).uncommitted).toBe(1);
    await host.worktrees.approve('T-1');
    expect(host.board.state.tasks.get('T-1')?.state).toBe('done');
    expect(fs.readFileSync(join(wt, 'leftover.txt'), 'utf8')).toBe('never committed\n');
    expect(notes(host)).toMatch(/still has 1 uncommitted change that was not part of the merge: it is kept/);
    expect((await host.worktrees.require().folders.list())[0]).toMatchObject({ taskId: 'T-1', held: false, uncommitted: 1 });
  });

  it('a verify command runs in the worktree, and its pass merges', async () => {
    const { host, folder, done } = await submitted({ 'proof.txt': 'made by the agent\n' }, { verify: 'test -f proof.txt' });
    const approved = nextEvent(host, (e) => e.kind === 'approved');
    expect((await done()).code).toBe(0);
    await approved;
    await nextEvent(host, (e) => e.kind === 'worktree-removed');
    expect(fs.readFileSync(join(folder, 'proof.txt'), 'utf8')).toBe('made by the agent\n');
  });
});
