import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { CLI, ensureBuilt } from '../../helpers/cli.js';
import { QUEUE_CHECKOUTS } from '../../../src-main/thread/queueLanding.js';
import { paneText } from '../../helpers/events.js';
import { waitFor } from '../../helpers/pty.js';
import { alive } from '../../helpers/processes.js';
import { WorktreeGitGate } from '../../helpers/worktreeGitGate.js';
import { agentEnv, branchOf, cliAs, Fixture, gitSync, idleAgent, nextEvent, sh } from '../../helpers/gitFixture.js';
import { ownSleep, sleepersOf, VerifyMailbox } from '../../helpers/verifyMailbox.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';

// Its tests run git and the CLI as an agent from the test process, outside any pane (peerJudges.ts).
const fx = new Fixture({ peerJudge: secretsFromTheTestProcess });
const killed: ChildProcess[] = [];
/** How each test's verify (contained: no file of the test's reaches it) says what it does and waits. */
let box: VerifyMailbox;
/** What a test's verify may leave running: `sleep` for a duration of this process's own (verifyMailbox.ts). */
const SLEEPER = ownSleep(0);
beforeAll(() => ensureBuilt());
beforeEach(async () => {
  box = await VerifyMailbox.open();
});
afterEach(async () => {
  for (const c of killed.splice(0)) if (c.pid && alive(c.pid)) process.kill(-c.pid, 'SIGKILL');
  // Ended after the test whatever it found.
  for (const pid of sleepersOf(SLEEPER)) process.kill(pid, 'SIGKILL');
  box.close();
  await fx.cleanup();
});
const HOST_DRIVER = join(import.meta.dirname, '..', '..', 'helpers', 'gitHostDriver.mjs');

/**
 * The Thread's verify command for these tests, committed on main: each task's file passes alone, and the two
 * together clash, so only the merge of the second onto the first fails. It prints where it runs, so the test
 * sees it ran in a checkout of its own, not in the agent's worktree nor the person's folder.
 */
const CHECK = `echo "checking in $(pwd)"
if [ -f a.txt ] && [ -f b.txt ]; then echo "a.txt and b.txt clash: keep one"; exit 1; fi
echo ok
`;

/** A Thread on a fresh repository with check.sh on main and the Thread's verify command set to run it. */
async function threadWithCheck(verify = 'sh check.sh') {
  const ctx = await fx.host();
  fs.writeFileSync(join(ctx.folder, 'check.sh'), CHECK);
  gitSync(ctx.folder, ['add', 'check.sh']);
  gitSync(ctx.folder, ['commit', '-qm', 'the check']);
  await ctx.host.board.run((e) => e.setSettings({ verify }));
  return ctx;
}

/** An agent (a real process) claims `taskId`, commits `files` in its worktree and says done. */
async function workDone(host: ThreadHost, taskId: string, files: Record<string, string>) {
  const a = await idleAgent(host);
  const c = (await cliAs(host, a, ['claim', taskId])).out.result as { token: number; worktree: { path: string } };
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(join(c.worktree.path, name), text);
  const commit = await sh(c.worktree.path, 'git add -A && git commit -qm "the change"', agentEnv(host, a));
  expect(commit.code, commit.stderr).toBe(0);
  return { a, token: c.token, wt: c.worktree.path, done: () => cliAs(host, a, ['done', taskId, '--token', String(c.token)]) };
}

/**
 * A Thread whose verify passes in the agent's worktree at once, and on the merge of T-1 ("one") says it
 * started and waits at a gate: a verify of minutes, during which the test stops or kills its host.
 */
async function slowVerifyOfOne() {
  const ctx = await threadWithCheck();
  const slow = `if [ -f one.txt ] && git log -1 --format=%s | grep -q '^Merge'; then ${box.say('started')}; ${box.waitAt('go')}; fi; sh check.sh`;
  await ctx.host.board.run((e) => e.setSettings({ verify: slow }));
  await ctx.host.board.run((e) => e.addTask({ title: 'one' }));
  return { ctx, open: () => box.openGate('go'), started: () => box.heard('started') > 0 };
}

const notesOf = (host: ThreadHost, id: string) => (host.board.state.tasks.get(id)?.notes ?? []).map((n) => n.text);

describe('the merge queue with real git and a real verify command', () => {
  it('a task whose merge fails the verify goes back to its agent with the output; the base never moves to it', async () => {
    const { host, folder } = await threadWithCheck();
    await host.board.run((e) => e.addTask({ title: 'add a' }));
    await host.board.run((e) => e.addTask({ title: 'add b' }));
    const one = await workDone(host, 'T-1', { 'a.txt': 'a\n' });
    const two = await workDone(host, 'T-2', { 'b.txt': 'b\n' });
    // Each passes the check in its own worktree when it says done (verify-on-done), which approves it: queued.
    const queuedBoth = nextEvent(host, (e) => e.kind === 'queued' && e.taskId === 'T-2');
    // Its agent's pane is told what became of the work, the verify's tail with it (issue 44).
    const told = paneText(host, two.a, /T-2 "add b" was sent back to you by the merge queue \(its merge failed the verify\)[\s\S]*a\.txt and b\.txt clash: keep one[\s\S]*full lease/, 60_000);
    expect((await one.done()).code).toBe(0);
    expect((await two.done()).code).toBe(0);
    await queuedBoth;
    const sentBack = nextEvent(host, (e) => e.kind === 'returned' && e.taskId === 'T-2');
    await host.queue?.idle();
    await sentBack;
    await host.queue?.idle();
    // T-1 landed: main has a.txt and the merge; T-2's merge failed the check on the merge result, not alone.
    expect(host.board.state.tasks.get('T-1')?.state).toBe('done');
    expect(fs.readFileSync(join(folder, 'a.txt'), 'utf8')).toBe('a\n');
    expect(fs.existsSync(join(folder, 'b.txt'))).toBe(false);
    expect(gitSync(folder, ['log', '-1', '--format=%s', 'main'])).toBe(`Merge ${branchOf(host, 'T-1')}: add a`);
    // Back to its agent, whose claim still runs, with the output's tail as the reason and a note.
    const t2 = host.board.state.tasks.get('T-2');
    expect(t2).toMatchObject({ state: 'claimed', queued: null, claim: { agentId: two.a }, sentBack: { by: 'verify' } });
    expect(t2?.sentBack?.reason).toMatch(/^Merge queue: the merge onto main failed its verify, so main was not moved\. Verify `sh check\.sh` exited with 1/);
    expect(t2?.sentBack?.reason).toContain('a.txt and b.txt clash: keep one');
    // It ran in a checkout of its own under the Thread's data folder, which is gone again.
    const ranIn = /checking in (\S+)/.exec(t2?.sentBack?.reason ?? '')?.[1] ?? '';
    expect(ranIn).toBe(host.worktrees.require().names.queueCheckoutOf('T-2'));
    expect(ranIn.startsWith(host.board.dir)).toBe(true);
    expect(fs.existsSync(ranIn)).toBe(false);
    expect(gitSync(folder, ['worktree', 'list', '--porcelain'])).not.toContain('merge-queue');
    // The agent's own worktree and branch are as it left them, ready for its next try.
    expect(fs.readFileSync(join(two.wt, 'b.txt'), 'utf8')).toBe('b\n');
    expect(notesOf(host, 'T-2')).toContainEqual(expect.stringMatching(/^Review: Merge queue: the merge onto main failed its verify/));
    // Its own outcome: a cause on the send-back and a notice that says so, never a lapse.
    expect(t2?.sentBack?.cause).toBe('verify-failed');
    expect(host.notices.current().map((n) => n.title)).toContain('Verify failed on the merge: T-2');
    await told;
  }, 120_000);

  it("queued tasks land in dependency order whatever the person's order, unchecked without a verify command, and why says where each waits", async () => {
    const { host, folder } = await fx.host();
    await host.board.run((e) => e.addTask({ title: 'first' }));
    await host.board.run((e) => e.addTask({ title: 'second' }, 'user', ['T-1']));
    const one = await workDone(host, 'T-1', { 'one.txt': '1\n' });
    const a2 = await idleAgent(host);
    const c2 = (await cliAs(host, a2, ['claim', 'T-2', '--force'])).out.result as { token: number; worktree: { path: string } };
    fs.writeFileSync(join(c2.worktree.path, 'two.txt'), '2\n');
    expect((await sh(c2.worktree.path, 'git add -A && git commit -qm two', agentEnv(host, a2))).code).toBe(0);
    expect((await one.done()).code).toBe(0);
    expect((await cliAs(host, a2, ['done', 'T-2', '--token', String(c2.token)])).code).toBe(0);
    // The person approves T-2 first: it waits in the queue, held, until T-1 it waits on is done.
    // Approval checks that this host can show the work (a git read, issue 45) before it queues: wait for the queueing.
    const queued = nextEvent(host, (e) => e.kind === 'queued' && e.taskId === 'T-2', 20_000, 'T-2 queued');
    const second = host.worktrees.approve('T-2');
    await queued;
    await host.queue?.idle();
    expect(host.board.state.tasks.get('T-2')).toMatchObject({ state: 'review', queued: { by: 'user' } });
    const why = await cliAs(host, a2, ['why', 'T-2']);
    expect(why.out.result.reasons[0]).toMatchObject({ code: 'queued', text: 'T-2 is approved and waits in the merge queue, position 1 of 1, next to land; it lands only once T-1 is done' });
    const first = host.worktrees.approve('T-1');
    await Promise.all([first, second]);
    expect(gitSync(folder, ['log', '--first-parent', '--format=%s', '-2', 'main']).split('\n')).toEqual([`Merge ${branchOf(host, 'T-2')}: second`, `Merge ${branchOf(host, 'T-1')}: first`]);
    expect(notesOf(host, 'T-1').filter((n) => n.startsWith('Merge queue:'))).toEqual([]);
  }, 120_000);

  it('a host stopped while the head entry verifies lands it again from the start when the Thread opens again', async () => {
    const { ctx, open, started } = await slowVerifyOfOne();
    const one = await workDone(ctx.host, 'T-1', { 'one.txt': '1\n' });
    const landing = nextEvent(ctx.host, (e) => e.kind === 'queue-landing');
    expect((await one.done()).code).toBe(0);
    await landing;
    await waitFor(started, 60_000, 'the verify on the merge to start');
    await ctx.host.dispose();
    expect(fs.existsSync(join(ctx.folder, 'one.txt'))).toBe(false);
    open();
    const again = await fx.host({ folder: ctx.folder, dataRoot: join(ctx.root, 'data'), runtimeRoot: join(ctx.root, 'run') });
    expect(again.host.board.state.tasks.get('T-1')?.queued?.landing).toBeTruthy();
    await waitFor(() => again.host.board.state.tasks.get('T-1')?.state === 'done', 60_000, 'T-1 landed after the restart');
    await again.host.queue?.idle();
    expect(fs.readFileSync(join(ctx.folder, 'one.txt'), 'utf8')).toBe('1\n');
    expect(notesOf(again.host, 'T-1')).toContain('Merge queue: landing T-1 again from the start (its host stopped while landing it).');
  }, 120_000);

  it('a host killed -9 while the head entry verifies: the next start lands it again from the start, in a clean checkout', async () => {
    const { ctx, open, started } = await slowVerifyOfOne();
    await ctx.host.dispose();
    const data = join(ctx.root, 'data');
    const run = join(ctx.root, 'run');
    // The host in a process group of its own: the kill takes it and the verify it runs, as a machine dies.
    const child = spawn(process.execPath, [HOST_DRIVER, ctx.folder, data, run], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
    killed.push(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const line = await waitFor(() => out.includes('\n') && out.split('\n')[0], 60_000, 'the host in its own process to hand out T-1');
    const a = JSON.parse(line as string) as { agentId: string; secret: string; socket: string; wt: string };
    const env = { FORKBENCH_SOCKET: a.socket, FORKBENCH_SECRET: a.secret, FORKBENCH_AGENT_ID: a.agentId };
    fs.writeFileSync(join(a.wt, 'one.txt'), '1\n');
    const commit = await sh(a.wt, 'git add -A && git commit -qm "the change"', env);
    expect(commit.code, commit.stderr).toBe(0);
    const done = await sh(process.cwd(), `'${process.execPath}' '${CLI}' done T-1 --json`, env);
    expect(done.code, done.stderr).toBe(0);
    await waitFor(started, 60_000, 'the verify on the merge to start');
    process.kill(-child.pid!, 'SIGKILL');
    await waitFor(() => !alive(child.pid!), 10_000, 'the host to be gone');
    // Killed mid-verify: the base never moved, and the half-used checkout is still there.
    expect(fs.existsSync(join(ctx.folder, 'one.txt'))).toBe(false);
    expect(fs.existsSync(join(data, 'threads'))).toBe(true);

    open();
    const again = await fx.host({ folder: ctx.folder, dataRoot: data, runtimeRoot: run });
    expect(again.host.board.state.tasks.get('T-1')?.queued?.landing).toBeTruthy();
    await waitFor(() => again.host.board.state.tasks.get('T-1')?.state === 'done', 60_000, 'T-1 landed after the kill');
    await again.host.queue?.idle();
    expect(gitSync(ctx.folder, ['show', 'main:one.txt'])).toBe('1');
    expect(notesOf(again.host, 'T-1')).toContain('Merge queue: landing T-1 again from the start (its host stopped while landing it).');
    expect(gitSync(ctx.folder, ['worktree', 'list', '--porcelain'])).not.toContain(QUEUE_CHECKOUTS);
  }, 150_000);

  it("a reassign while the head entry's verify runs wins: its merge is discarded, the base stays, and the queue lands the next approval", async () => {
    const { ctx, open, started } = await slowVerifyOfOne();
    const { host, folder } = ctx;
    await host.board.run((e) => e.addTask({ title: 'two' }));
    const one = await workDone(host, 'T-1', { 'one.txt': '1\n' });
    const two = await workDone(host, 'T-2', { 'two.txt': '2\n' });
    const before = gitSync(folder, ['rev-parse', 'main']);
    // Its verify-on-done passes in the agent's worktree and approves it: queued, and its merge's verify holds.
    expect((await one.done()).code).toBe(0);
    await waitFor(started, 60_000, 'the verify on the merge of T-1 to start');
    const other = await idleAgent(host);
    const left = nextEvent(host, (e) => e.kind === 'unqueued' && e.taskId === 'T-1');
    const moved = await host.board.run((e) => e.assign('T-1', other));
    expect(moved.ok).toBe(true);
    // The approval left the queue in the reassign's own step, saying why.
    expect(host.board.state.tasks.get('T-1')?.queued ?? null).toBeNull();
    expect(await left).toMatchObject({ kind: 'unqueued', reason: expect.stringMatching(/^it was reassigned to .*; the approval was for [0-9a-f]{7,} under token \d+$/) });
    expect((await two.done()).code).toBe(0);
    open();
    await waitFor(() => host.board.state.tasks.get('T-2')?.state === 'done', 60_000, 'T-2 to land after T-1 was taken back');
    await host.queue?.idle();
    // Only T-2's merge reached main; T-1 is its new holder's, unapproved.
    expect(gitSync(folder, ['log', '--first-parent', '--format=%s', `${before}..main`])).toBe(`Merge ${branchOf(host, 'T-2')}: two`);
    expect(gitSync(folder, ['ls-tree', '--name-only', 'main'])).not.toContain('one.txt');
    expect(host.board.state.tasks.get('T-1')).toMatchObject({ state: 'claimed', claim: { agentId: other }, queued: null });
  }, 150_000);

  it('a release and a reject asked while git holds the landing\'s move of the base are refused, naming the landing, and the approval lands', async () => {
    const { host, folder, root } = await fx.host();
    await host.board.run((e) => e.addTask({ title: 'one' }));
    // The host's git runs no hook of the repository's, so git is held at its start instead: the moment the board
    // agrees to the landing (its listeners run before the queue goes on), every git in the repository waits on a
    // fifo its config includes, as a slow disk or a busy repository would, until the test lets it go.
    const gate = new WorktreeGitGate(folder, root, 'repository');
    const agreed = host.board.onEvent((e) => {
      if (e.kind === 'queue-committed' && e.taskId === 'T-1') gate.arm();
    });
    const one = await workDone(host, 'T-1', { 'one.txt': '1\n' });
    expect((await one.done()).code).toBe(0);
    const approval = host.worktrees.approve('T-1');
    await waitFor(() => gate.entered(), 60_000, "git to hold the landing's move of main");
    agreed.dispose();
    const release = await host.board.run((e) => e.userRelease('T-1'));
    const reject = await host.board.run((e) => e.rejectReview('T-1', 'not like this'));
    // The board agreed to the landing before git moved main: a take-back now would be answered and lose.
    for (const r of [release, reject]) expect(r).toMatchObject({ ok: false, error: { code: 'bad-state', message: expect.stringMatching(/^T-1's approved work is landing now/) } });
    gate.release();
    await approval;
    expect(host.board.state.tasks.get('T-1')?.state).toBe('done');
    expect(gitSync(folder, ['show', 'main:one.txt'])).toBe('1');
  }, 120_000);

  // Issue 42, item 4: a test that leaves `setsid -f sleep 3600` holding the output pipe kept the verify from
  // ever finishing, and every entry behind it from landing, also after a restart.
  it('a verify whose test leaves `setsid -f sleep 3600` holding its output lands all the same, and the sleeper is ended', async () => {
    const ctx = await threadWithCheck();
    // The check goes on once its sleeper has started (else the verify could end it before it does).
    const said = `f=$(mktemp); setsid -f sh -c "echo > $f; exec sleep ${SLEEPER}"; while [ ! -s $f ]; do sleep 0.01; done; rm $f; ${box.say('sleeper')}`;
    await ctx.host.board.run((e) => e.setSettings({ verify: `${said}; sh check.sh` }));
    await ctx.host.board.run((e) => e.addTask({ title: 'one' }));
    const one = await workDone(ctx.host, 'T-1', { 'one.txt': '1\n' });
    expect((await one.done()).code).toBe(0);
    await waitFor(() => ctx.host.board.state.tasks.get('T-1')?.state === 'done', 60_000, 'T-1 verified (in its worktree, then on the merge) and landed');
    await ctx.host.queue?.idle();
    expect(gitSync(ctx.folder, ['show', 'main:one.txt'])).toBe('1');
    // Both verifies ran (on done, and on the merge), and neither left its sleeper running.
    expect(box.heard('sleeper')).toBe(2);
    expect(sleepersOf(SLEEPER)).toEqual([]);
  }, 120_000);

  it('a head whose verify never ends, taken out by the person, ends with its whole tree, and the next entry lands', async () => {
    const ctx = await threadWithCheck();
    // On the merge of T-1 only, the check starts a detached helper and hangs: a wedged test suite.
    const stuck = `if [ -f one.txt ] && git log -1 --format=%s | grep -q '^Merge'; then setsid -f sleep ${SLEEPER}; ${box.say('hung')}; exec sleep ${SLEEPER}; fi; sh check.sh`;
    await ctx.host.board.run((e) => e.setSettings({ verify: stuck }));
    await ctx.host.board.run((e) => e.addTask({ title: 'one' }));
    await ctx.host.board.run((e) => e.addTask({ title: 'two' }));
    const one = await workDone(ctx.host, 'T-1', { 'one.txt': '1\n' });
    expect((await one.done()).code).toBe(0);
    await waitFor(() => box.heard('hung') === 1 && sleepersOf(SLEEPER).length === 2, 60_000, 'the verify on the merge of T-1 to hang');
    const two = await workDone(ctx.host, 'T-2', { 'two.txt': '2\n' });
    expect((await two.done()).code).toBe(0);
    await waitFor(() => ctx.host.board.state.tasks.get('T-2')?.queued, 60_000, 'T-2 approved by its verify and queued behind T-1');
    // The person takes the stuck head out, as the window's button does.
    expect((await ctx.host.board.run((e) => e.unqueue('T-1', 'taken out by a person: it stays in review'))).ok).toBe(true);
    await waitFor(() => ctx.host.board.state.tasks.get('T-2')?.state === 'done', 60_000, 'T-2 to land once the stuck head was taken out');
    await ctx.host.queue?.idle();
    expect(ctx.host.board.state.tasks.get('T-1')).toMatchObject({ state: 'review', queued: null });
    expect(gitSync(ctx.folder, ['show', 'main:two.txt'])).toBe('2');
    expect(fs.existsSync(join(ctx.folder, 'one.txt'))).toBe(false);
    expect(sleepersOf(SLEEPER)).toEqual([]);
  }, 150_000);

  // Issue 42, item 3: an agent's commit that replaced check.sh with `exit 0` passed verify, was approved "by
  // verify" and landed what the check forbids; every later merge then ran the agent's `exit 0`.
  it('work that rewrites the check it is verified by is not approved by verify, and the queue checks its merge with the base’s check', async () => {
    const { host, folder } = await threadWithCheck();
    await host.board.run((e) => e.addTask({ title: 'add a and b' }));
    const w = await workDone(host, 'T-1', { 'a.txt': 'a\n', 'b.txt': 'b\n', 'check.sh': 'exit 0\n' });
    expect((await w.done()).code).toBe(0);
    const note = await waitFor(() => notesOf(host, 'T-1').find((n) => n.startsWith('Verify did not approve')), 60_000, 'verify’s word on T-1');
    expect(note).toMatch(/^Verify did not approve T-1: its work changes check\.sh, which verify runs \(`sh check\.sh` names it/);
    expect(note).toContain('+exit 0');
    expect(host.board.state.tasks.get('T-1')).toMatchObject({ state: 'review', queued: null });
    // The person approves anyway: the queue checks the merge with main's check.sh, which refuses a and b.
    await expect(host.worktrees.approve('T-1')).rejects.toThrow(/failed its verify/);
    expect(host.board.state.tasks.get('T-1')?.sentBack?.reason).toMatch(/a\.txt and b\.txt clash/);
    expect(gitSync(folder, ['show', 'main:check.sh'])).toBe(CHECK.trim());
    expect(fs.existsSync(join(folder, 'a.txt'))).toBe(false);
  }, 120_000);

  it('a file the Thread lists as verify’s own (a config the check reads) is the base’s too', async () => {
    const { host } = await threadWithCheck();
    await host.board.run((e) => e.setSettings({ verifyFiles: ['check.conf'] }));
    await host.board.run((e) => e.addTask({ title: 'loosen the check' }));
    const w = await workDone(host, 'T-1', { 'check.conf': 'skip everything\n' });
    expect((await w.done()).code).toBe(0);
    const note = await waitFor(() => notesOf(host, 'T-1').find((n) => n.startsWith('Verify did not approve')), 60_000, 'verify’s word on T-1');
    expect(note).toMatch(/^Verify did not approve T-1: its work changes check\.conf,/);
    expect(host.board.state.tasks.get('T-1')).toMatchObject({ state: 'review', queued: null });
  }, 120_000);
});

