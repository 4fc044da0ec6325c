import * as fs from 'node:fs';
import { basename, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src-main/base/clock.js';
import type { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { agentEnv, cliAs, Fixture, gitSync, idleAgent, sh } from '../../helpers/gitFixture.js';
import { parkedRef, strayRef } from '../../../src-shared/git/taskBranch.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';
import { filesAtSync as filesAt, filesOf } from '../../helpers/parkedChaos.js';
import { manualTimers } from '../../helpers/manualTimers.js';
import { ParkedConstants } from '../../../src-main/git/parkedWork.js';
import { DiskUseConstants } from '../../../src-main/git/diskUse.js';
import type { BoardEvent } from '../../../src-shared/board/events.js';

// Its tests run git and the CLI as an agent from the test process, outside any pane (peerJudges.ts).
const fx = new Fixture({ peerJudge: secretsFromTheTestProcess });
beforeAll(() => ensureBuilt());
afterEach(() => fx.cleanup());

/** The grace these tests set: the shortest a Thread may have, so the clock moves past it in one step. */
const GRACE_MS = 1_000;

/** A task claimed by `a`, then given to `b` by a person: `a`'s folder is parked. Returns both folders. */
async function parkOne(host: ThreadHost, a: string, b: string, taskId: string): Promise<{ parked: string; live: string; token: number }> {
  const c = (await cliAs(host, a, ['claim', taskId])).out.result as { token: number; worktree: { path: string } };
  return { parked: c.worktree.path, token: c.token, live: await handOver(host, taskId, b) };
}

async function handOver(host: ThreadHost, taskId: string, to: string): Promise<string> {
  const r = await host.board.run((e) => e.assign(taskId, to));
  expect(r.ok).toBe(true);
  const token = host.board.state.tasks.get(taskId)?.claim?.token as number;
  const wt = await host.worktrees.worktreeOf(taskId, token);
  return wt?.path as string;
}

describe('parked folders: bounded, nothing lost (issue 47 item 5)', () => {
  it('a parked folder with uncommitted, staged and untracked work is saved under refs/forkbench/parked/ file by file (ignored files not), recorded with its author, then removed; its index is saved as it was', async () => {
    const clock = new ManualClock();
    const { host, folder } = await fx.host({ parked: { clock } });
    fs.appendFileSync(join(folder, '.git', 'info', 'exclude'), '*.log\n');
    await host.board.run((e) => e.setSettings({ parkedGraceMs: GRACE_MS }));
    await host.board.run((e) => e.addTask({ title: 'work' }));
    const [a, b] = [await idleAgent(host), await idleAgent(host)];
    const c = (await cliAs(host, a, ['claim', 'T-1'])).out.result as { token: number; worktree: { path: string } };
    const wt = c.worktree.path;
    fs.writeFileSync(join(wt, 'a.txt'), 'committed a\n');
    fs.writeFileSync(join(wt, 'b.txt'), 'committed b\n');
    expect((await sh(wt, 'git add a.txt b.txt && git commit -qm ab', agentEnv(host, a))).code).toBe(0);
    const head = gitSync(wt, ['rev-parse', 'HEAD']);
    // Every kind of work a folder can hold: a tracked file changed, one deleted, a new file staged and then
    // changed again (index and files differ), untracked files in a new folder, binary bytes, an ignored file.
    fs.writeFileSync(join(wt, 'notes.txt'), 'line one\nline two, not committed\n');
    fs.rmSync(join(wt, 'b.txt'));
    fs.writeFileSync(join(wt, 's.txt'), 'staged\n');
    expect((await sh(wt, 'git add s.txt', agentEnv(host, a))).code).toBe(0);
    fs.writeFileSync(join(wt, 's.txt'), 'staged, then changed\n');
    fs.mkdirSync(join(wt, 'new', 'deep'), { recursive: true });
    fs.writeFileSync(join(wt, 'new', 'deep', 'u.txt'), 'untracked\n');
    fs.writeFileSync(join(wt, 'new', 'bin.dat'), Buffer.from([0, 255, 1, 254, 10, 13]));
    fs.writeFileSync(join(wt, 'debug.log'), 'ignored\n');
    const live = await handOver(host, 'T-1', b);
    expect(host.board.state.tasks.get('T-1')?.parked.map((p) => p.path)).toEqual([wt]);
    const before = filesOf(wt, (rel) => rel === 'debug.log');
    const indexBefore = fs.readFileSync(join(folder, '.git', 'worktrees', `T-1-${c.token}`, 'index'));
    const parked = host.worktrees.require().parked;

    // First seen parked now; within its grace nothing happens.
    expect((await parked.sweep()).removed).toEqual([]);
    clock.advance(GRACE_MS - 1);
    expect((await parked.sweep()).removed).toEqual([]);
    expect(fs.existsSync(wt)).toBe(true);

    clock.advance(1);
    const out = await parked.sweep();
    const ref = parkedRef(host.worktrees.require().names.branch('T-1'), c.token);
    expect(ref).toMatch(/^refs\/forkbench\/parked\/[0-9a-f]{8}\/T-1\/\d+$/);
    expect(out).toEqual({ saved: [ref], removed: [wt], kept: [] });
    expect(fs.existsSync(wt)).toBe(false);
    const t = host.board.state.tasks.get('T-1');
    expect(t?.parked).toEqual([]);
    const sha = gitSync(folder, ['rev-parse', ref]);
    expect(t?.saved).toEqual([expect.objectContaining({ ref, sha, path: wt, token: c.token, author: a, files: 5 })]);
    // File by file: the saved commit's tree is the folder's files exactly (b.txt deleted, debug.log ignored).
    expect(filesAt(folder, sha)).toEqual(before);
    expect(before.get('new/bin.dat')).toBe(Buffer.from([0, 255, 1, 254, 10, 13]).toString('latin1'));
    // Its first parent is the folder's HEAD; its second, the index as it was: s.txt as staged, notes.txt and
    // b.txt as committed (their changes were never staged).
    expect(gitSync(folder, ['rev-parse', `${sha}^1`])).toBe(head);
    const index = filesAt(folder, `${sha}^2`);
    expect(index.get('s.txt')).toBe('staged\n');
    expect(index.get('notes.txt')).toBe('line one\n');
    expect(index.get('b.txt')).toBe('committed b\n');
    expect(index.has('new/deep/u.txt')).toBe(false);
    // The folder's own index was never written by the save (it was read, copied, and left).
    expect(indexBefore.length).toBeGreaterThan(0);
    // The holder's folder and the task's branch are untouched; git forgot the removed folder.
    expect(fs.existsSync(live)).toBe(true);
    expect(gitSync(folder, ['rev-parse', host.worktrees.require().names.branch('T-1')])).toBe(head);
    expect(gitSync(folder, ['worktree', 'list', '--porcelain'])).not.toContain(wt);
    expect(fs.readdirSync(parked.trash)).toEqual([]);
    // The board says what happened, in its log.
    expect((await host.board.log()).some((e) => e.kind === 'worktree-saved' && e.saved.ref === ref && e.by === 'forkbench')).toBe(true);
  });

  it('a clean parked folder is removed with no ref; one whose head no ref has is kept aside under refs/forkbench/stray/ first', async () => {
    const clock = new ManualClock();
    const { host, folder } = await fx.host({ parked: { clock } });
    await host.board.run((e) => e.setSettings({ parkedGraceMs: GRACE_MS }));
    await host.board.run((e) => e.addTask({ title: 'clean' }));
    await host.board.run((e) => e.addTask({ title: 'stray' }));
    const [a, b] = [await idleAgent(host), await idleAgent(host)];
    const clean = await parkOne(host, a, b, 'T-1');
    const stray = await parkOne(host, a, b, 'T-2');
    // A commit in the parked folder past its fence (hooks off): on no ref, recorded by nobody.
    fs.writeFileSync(join(stray.parked, 'late.txt'), 'late\n');
    gitSync(stray.parked, ['-c', 'core.hooksPath=/dev/null', 'add', 'late.txt']);
    gitSync(stray.parked, ['-c', 'core.hooksPath=/dev/null', '-c', 'user.name=x', '-c', 'user.email=x@x', 'commit', '-qm', 'late']);
    const late = gitSync(stray.parked, ['rev-parse', 'HEAD']);
    expect(gitSync(folder, ['for-each-ref', '--contains', late])).toBe('');
    const parked = host.worktrees.require().parked;
    await parked.sweep(); // both first seen parked now
    clock.advance(GRACE_MS);
    const out = await parked.sweep();
    expect(out.saved).toEqual([]);
    expect(out.removed.sort()).toEqual([clean.parked, stray.parked].sort());
    expect(fs.existsSync(clean.parked) || fs.existsSync(stray.parked)).toBe(false);
    expect(gitSync(folder, ['rev-parse', strayRef(host.worktrees.require().names.branch('T-2'), late)])).toBe(late);
    expect(gitSync(folder, ['for-each-ref', 'refs/forkbench/parked/'])).toBe('');
    expect(host.board.state.tasks.get('T-1')?.saved ?? []).toEqual([]);
  });

  it('the latest folder of a task nobody holds goes too after its grace (saved if it holds work); the board keeps its record and the next claim starts fresh at it', async () => {
    const clock = new ManualClock();
    const { host, folder } = await fx.host({ parked: { clock } });
    await host.board.run((e) => e.setSettings({ parkedGraceMs: GRACE_MS }));
    await host.board.run((e) => e.addTask({ title: 'idle' }));
    const a = await idleAgent(host);
    const c = (await cliAs(host, a, ['claim', 'T-1'])).out.result as { token: number; worktree: { path: string } };
    fs.writeFileSync(join(c.worktree.path, 'wip.txt'), 'work in progress\n');
    expect((await cliAs(host, a, ['release', 'T-1', '--token', String(c.token)])).code).toBe(0);
    const parked = host.worktrees.require().parked;
    await parked.sweep(); // first seen idle now
    clock.advance(GRACE_MS);
    const out = await parked.sweep();
    expect(out.removed).toEqual([c.worktree.path]);
    const t = host.board.state.tasks.get('T-1');
    expect(t?.worktree?.path).toBe(c.worktree.path);
    expect(t?.saved?.[0]?.ref).toBe(parkedRef(t?.worktree?.branch as string, c.token));
    expect(gitSync(folder, ['show', `${t?.saved?.[0]?.sha}:wip.txt`])).toBe('work in progress');
    const again = (await cliAs(host, a, ['claim', 'T-1'])).out.result as { token: number; worktree: { path: string } };
    expect(again.worktree.path).not.toBe(c.worktree.path);
    expect(fs.existsSync(join(again.worktree.path, 'notes.txt'))).toBe(true);
    expect(host.board.state.tasks.get('T-1')?.notes.map((n) => n.text).join('\n')).toContain(`was saved as ${t?.saved?.[0]?.ref} and removed after its grace`);
    // The absent folder the grant parked is forgotten by the next sweep.
    await parked.sweep();
    expect(host.board.state.tasks.get('T-1')?.parked).toEqual([]);
  });

  it('saved work is restored into a new folder each time (files and index as saved) and deleted board first; a refusal says why and does nothing', async () => {
    const clock = new ManualClock();
    const { host, folder } = await fx.host({ parked: { clock } });
    await host.board.run((e) => e.setSettings({ parkedGraceMs: GRACE_MS }));
    await host.board.run((e) => e.addTask({ title: 'restore me' }));
    const [a, b] = [await idleAgent(host), await idleAgent(host)];
    const c = (await cliAs(host, a, ['claim', 'T-1'])).out.result as { token: number; worktree: { path: string } };
    fs.writeFileSync(join(c.worktree.path, 'staged.txt'), 'in the index\n');
    expect((await sh(c.worktree.path, 'git add staged.txt', agentEnv(host, a))).code).toBe(0);
    fs.writeFileSync(join(c.worktree.path, 'loose.txt'), 'untracked\n');
    await handOver(host, 'T-1', b);
    const parked = host.worktrees.require().parked;
    await parked.sweep();
    clock.advance(GRACE_MS);
    const [ref] = (await parked.sweep()).saved as [string];
    const sha = gitSync(folder, ['rev-parse', ref]);

    await expect(parked.restore('T-1', 'refs/forkbench/parked/nope')).rejects.toMatchObject({ code: 'no-worktree', message: expect.stringContaining('nothing was restored') });
    // The ref moved by something other than Forkbench: neither restored nor deleted, and the board keeps its record.
    gitSync(folder, ['update-ref', ref, 'main']);
    await expect(parked.restore('T-1', ref)).rejects.toMatchObject({ message: expect.stringMatching(/is at \w+, not the saved \w+: nothing was restored/) });
    await expect(parked.delete('T-1', ref, 'user')).rejects.toMatchObject({ message: expect.stringContaining('nothing was deleted') });
    expect(host.board.state.tasks.get('T-1')?.saved?.map((w) => w.sha)).toEqual([sha]);
    gitSync(folder, ['update-ref', ref, sha]);

    const one = await parked.restore('T-1', ref);
    const two = await parked.restore('T-1', ref);
    expect(two).toBe(`${one}-2`);
    for (const into of [one, two]) {
      expect(fs.readFileSync(join(into, 'loose.txt'), 'utf8')).toBe('untracked\n');
      expect(gitSync(into, ['status', '--porcelain'])).toBe('A  staged.txt\n?? loose.txt');
    }
    expect(one.startsWith(host.worktrees.require().names.threadDir)).toBe(true);

    await parked.delete('T-1', ref, 'user');
    expect(host.board.state.tasks.get('T-1')?.saved).toEqual([]);
    expect(gitSync(folder, ['for-each-ref', ref])).toBe('');
    await expect(parked.delete('T-1', ref, 'user')).rejects.toMatchObject({ code: 'no-worktree' });
    expect(fs.existsSync(one)).toBe(true); // a restored folder is the person's
  });

  it('over the disk budget the oldest parked folders go first, before their grace; under it the rest wait', async () => {
    const clock = new ManualClock();
    const { host, folder } = await fx.host({ parked: { clock } });
    await host.board.run((e) => e.setSettings({ parkedBudgetMb: 3 }));
    for (const title of ['one', 'two', 'three']) await host.board.run((e) => e.addTask({ title }));
    const [a, b] = [await idleAgent(host), await idleAgent(host)];
    const parkedFolders: string[] = [];
    const parked = host.worktrees.require().parked;
    const outs = [];
    for (const id of ['T-1', 'T-2', 'T-3']) {
      const c = (await cliAs(host, a, ['claim', id])).out.result as { worktree: { path: string } };
      // 1 MiB of bytes that do not compress, as an agent's build output would be. Written before the folder is
      // parked: the host sweeps by itself once it is, and a size measured before the write stays cached.
      fs.writeFileSync(join(c.worktree.path, 'big.bin'), Buffer.from(Array.from({ length: 1024 * 1024 }, (_, i) => (i * 2654435761) >>> 24)));
      await handOver(host, id, b);
      parkedFolders.push(c.worktree.path);
      outs.push(await parked.sweep()); // each is first seen parked after the one before
      clock.advance(10);
    }
    // Two parked folders of a little over 1 MiB each fit a 3 MiB budget (the live ones never count); the third
    // does not, and the oldest goes, saved first.
    // Judged by what the folders and the board hold after each pass, not by which pass did it: the host also
    // sweeps by itself when the board changes (a parked folder appears), and a pass of its own queued just
    // before a test's returns the removal to nobody (one loaded run saw the test's third pass find nothing left).
    expect(outs.slice(0, 2).map((o) => o.removed)).toEqual([[], []]);
    expect(fs.existsSync(parkedFolders[0] as string)).toBe(false);
    const saved = host.board.state.tasks.get('T-1')?.saved ?? [];
    expect(saved).toHaveLength(1);
    expect(fs.existsSync(parkedFolders[1] as string) && fs.existsSync(parkedFolders[2] as string)).toBe(true);
    expect(gitSync(folder, ['cat-file', '-s', `${saved[0]?.ref}:big.bin`])).toBe(String(1024 * 1024));
  });

  it('a write into a parked folder while its clean-up runs (after the save, before the delete) keeps the folder as it is: nothing is deleted that was not saved', async () => {
    const clock = new ManualClock();
    let wt = '';
    // In flight: a stale agent writes after its folder was saved and recorded, while the host tells it to leave.
    const step = (s: string) => {
      if (s === 'on-board') fs.writeFileSync(join(wt, 'late.txt'), 'written after the save\n');
    };
    const { host, folder } = await fx.host({ parked: { clock, step } });
    await host.board.run((e) => e.setSettings({ parkedGraceMs: GRACE_MS }));
    await host.board.run((e) => e.addTask({ title: 'late write' }));
    const [a, b] = [await idleAgent(host), await idleAgent(host)];
    const p = await parkOne(host, a, b, 'T-1');
    wt = p.parked;
    fs.writeFileSync(join(wt, 'work.txt'), 'uncommitted\n');
    const parked = host.worktrees.require().parked;
    await parked.sweep();
    clock.advance(GRACE_MS);
    const out = await parked.sweep();
    expect(out.removed).toEqual([]);
    expect(out.kept).toEqual([{ path: wt, why: expect.stringContaining('written to') }]);
    // The folder is back where it was with both files; the save of the first is on the board and in git.
    expect(fs.readFileSync(join(wt, 'late.txt'), 'utf8')).toBe('written after the save\n');
    expect(fs.readFileSync(join(wt, 'work.txt'), 'utf8')).toBe('uncommitted\n');
    expect(out.saved).toHaveLength(1);
    expect(gitSync(folder, ['cat-file', '-p', `${out.saved[0]}:work.txt`])).toBe('uncommitted');
    expect(host.board.state.tasks.get('T-1')?.parked.map((x) => x.path)).toEqual([wt]);
    // The next pass finds it begun (saved) and still different from the save: it keeps it again, never deletes it.
    const again = await parked.sweep();
    expect(again.removed).toEqual([]);
    expect(fs.existsSync(join(wt, 'late.txt'))).toBe(true);
  });

  it('saving and restoring a parked folder runs no filter an agent named in git config (the host writes its files with drivers off)', async () => {
    const clock = new ManualClock();
    const { host, folder } = await fx.host({ parked: { clock } });
    await host.board.run((e) => e.setSettings({ parkedGraceMs: GRACE_MS }));
    await host.board.run((e) => e.addTask({ title: 'filters' }));
    const [a, b] = [await idleAgent(host), await idleAgent(host)];
    const c = (await cliAs(host, a, ['claim', 'T-1'])).out.result as { token: number; worktree: { path: string } };
    const wt = c.worktree.path;
    const marks = join(folder, '..', 'ran');
    const evil = join(folder, '..', 'evil.sh');
    fs.writeFileSync(evil, `#!/bin/sh\necho "$*" >> '${marks}'\nexec cat\n`, { mode: 0o755 });
    const env = agentEnv(host, a);
    fs.writeFileSync(join(wt, '.gitattributes'), '*.txt filter=evil\n');
    fs.writeFileSync(join(wt, 'notes.txt'), 'committed\n');
    expect((await sh(wt, 'git add -A && git commit -qm "attributes"', env)).code).toBe(0);
    // The trap, set from the agent's folder into the repository's shared config.
    const set = await sh(wt, `git config filter.evil.clean '${evil} clean' && git config filter.evil.smudge '${evil} smudge'`, env);
    expect(set.code, set.stderr).toBe(0);
    fs.writeFileSync(join(wt, 'notes.txt'), 'committed\nleft uncommitted\n');
    // The control: a plain git there runs it (the trap is real).
    await sh(wt, 'git diff >/dev/null 2>&1', env);
    expect(fs.existsSync(marks), 'a plain git diff ran the agent’s program').toBe(true);
    fs.rmSync(marks);

    await handOver(host, 'T-1', b);
    const parked = host.worktrees.require().parked;
    await parked.sweep();
    clock.advance(GRACE_MS);
    const out = await parked.sweep();
    expect(out.saved).toHaveLength(1);
    const restored = await parked.restore('T-1', out.saved[0] as string);
    expect(fs.readFileSync(join(restored, 'notes.txt'), 'utf8')).toBe('committed\nleft uncommitted\n');
    expect(fs.existsSync(marks) ? fs.readFileSync(marks, 'utf8') : '', 'what the host’s git ran of the agent’s').toBe('');
  });
});

/** The next board event `pick` accepts (the host's own sweep is waited on by what it writes, never by time). */
function nextEvent<T>(host: ThreadHost, pick: (e: BoardEvent) => T | undefined): Promise<T> {
  return new Promise((resolve) => {
    const sub = host.board.onEvent((e) => {
      const v = pick(e);
      if (v === undefined) return;
      sub.dispose();
      resolve(v);
    });
  });
}

describe('parked folders: the reviewer’s defects, mended (issue 47 item 5)', () => {
  it('dispose() settles only once the sweep under way has finished the folder it was cleaning: a disposed host moves nothing', async () => {
    const clock = new ManualClock();
    const order: string[] = [];
    let reached: () => void = () => undefined;
    const atBoard = new Promise<void>((r) => (reached = r));
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const step = async (s: string) => {
      order.push(s);
      if (s !== 'on-board') return;
      reached();
      await gate;
    };
    const { host } = await fx.host({ parked: { clock, step } });
    await host.board.run((e) => e.setSettings({ parkedGraceMs: GRACE_MS }));
    await host.board.run((e) => e.addTask({ title: 'disposed mid-sweep' }));
    const [a, b] = [await idleAgent(host), await idleAgent(host)];
    const p = await parkOne(host, a, b, 'T-1');
    fs.writeFileSync(join(p.parked, 'work.txt'), 'uncommitted\n');
    const parked = host.worktrees.require().parked;
    await parked.sweep();
    clock.advance(GRACE_MS);
    const sweeping = parked.sweep();
    await atBoard; // saved and recorded; the move and the delete are still to come
    const disposed = Promise.resolve(parked.dispose()).then(() => order.push('disposed'));
    // One turn of the event loop for a dispose that does not wait to show itself (it would settle here).
    await new Promise((r) => setImmediate(r));
    expect(order).not.toContain('disposed');
    release();
    await Promise.all([sweeping, disposed]);
    expect(order.slice(-3)).toEqual(['moved', 'forgotten', 'disposed']);
    // Settled means done: the folder is gone, the trash is empty, the save is on the board, and no sweep
    // starts after (a new one asked for returns at once, doing nothing).
    expect(fs.existsSync(p.parked)).toBe(false);
    expect(fs.readdirSync(parked.trash)).toEqual([]);
    expect(host.board.state.tasks.get('T-1')?.saved).toHaveLength(1);
    expect(await parked.sweep()).toEqual({ saved: [], removed: [], kept: [] });
  });

  it('a folder kept because a git holds its index.lock is looked at again by the host itself, with no other event to bring it', async () => {
    const clock = new ManualClock();
    const t = manualTimers();
    const { host, folder } = await fx.host({ parked: { clock, timers: t.timers } });
    await host.board.run((e) => e.setSettings({ parkedGraceMs: GRACE_MS }));
    await host.board.run((e) => e.addTask({ title: 'locked' }));
    const [a, b] = [await idleAgent(host), await idleAgent(host)];
    const p = await parkOne(host, a, b, 'T-1');
    fs.writeFileSync(join(p.parked, 'work.txt'), 'uncommitted\n');
    const lock = join(folder, '.git', 'worktrees', `T-1-${p.token}`, 'index.lock');
    fs.writeFileSync(lock, '');
    const parked = host.worktrees.require().parked;
    // The host's own sweeps, as its timers run them (a test's sweep after each waits for it): the folder is
    // first seen parked, then its grace runs out and the host finds the lock.
    t.fire();
    await parked.sweep();
    clock.advance(GRACE_MS);
    t.fire();
    const kept = await parked.sweep();
    expect(kept.kept).toEqual([{ path: p.parked, why: expect.stringContaining('index.lock') }]);
    expect(fs.existsSync(p.parked)).toBe(true);
    // The retry is armed: no other folder's grace runs and no board event comes, yet the folder is looked at again.
    expect(t.delays()).toEqual([ParkedConstants.lockRetryMs]);
    // The git finishes (its lock goes); the retry fires and the clean-up happens with no call from here.
    fs.rmSync(lock);
    const removed = nextEvent(host, (e) => (e.kind === 'worktree-removed' && e.path === p.parked ? e : undefined));
    t.fire((ms) => ms === ParkedConstants.lockRetryMs);
    await removed;
    expect(fs.existsSync(p.parked)).toBe(false);
    const saved = host.board.state.tasks.get('T-1')?.saved?.[0];
    expect(gitSync(folder, ['cat-file', '-p', `${saved?.ref}:work.txt`])).toBe('uncommitted');
  });

  it('the Worktrees list measures each folder once a minute, whoever asks (a large folder is not walked again for every list or sweep)', async () => {
    const clock = new ManualClock();
    const { host } = await fx.host({ parked: { clock } });
    await host.board.run((e) => e.addTask({ title: 'big' }));
    const a = await idleAgent(host);
    const c = (await cliAs(host, a, ['claim', 'T-1'])).out.result as { worktree: { path: string } };
    // A large build output: 4,000 files in 40 folders (a walk of it takes a noticeable time here).
    for (let d = 0; d < 40; d++) {
      fs.mkdirSync(join(c.worktree.path, 'out', `d${d}`), { recursive: true });
      for (let f = 0; f < 100; f++) fs.writeFileSync(join(c.worktree.path, 'out', `d${d}`, `f${f}.o`), `object ${d}/${f}\n`.repeat(40));
    }
    const git = host.worktrees.require();
    const bytesOf = async () => (await git.folders.list()).find((w) => w.path === c.worktree.path)?.bytes as number;
    let t0 = performance.now();
    const [first, alongside] = await Promise.all([bytesOf(), bytesOf()]);
    const firstMs = performance.now() - t0;
    expect(alongside).toBe(first);
    expect(first).toBeGreaterThan(4_000 * 1024);
    // 1 MiB more: within the minute the list says what it measured, past it the folder is walked again.
    fs.writeFileSync(join(c.worktree.path, 'more.bin'), Buffer.alloc(1024 * 1024, 7));
    t0 = performance.now();
    expect(await bytesOf()).toBe(first);
    const cachedMs = performance.now() - t0;
    clock.advance(DiskUseConstants.ttlMs - 1);
    expect(await bytesOf()).toBe(first);
    clock.advance(1);
    expect(await bytesOf()).toBeGreaterThanOrEqual(first + 1024 * 1024);
    console.log(`worktree list with a 4,000-file folder: ${firstMs.toFixed(0)} ms measured, ${cachedMs.toFixed(0)} ms cached`);
  });

  it('the latest folder of a task nobody holds, cleaned with nothing to save, is listed as cleaned (never missing), and the next grant says so; one deleted by hand is missing', async () => {
    const clock = new ManualClock();
    const { host, folder } = await fx.host({ parked: { clock } });
    await host.board.run((e) => e.setSettings({ parkedGraceMs: GRACE_MS }));
    await host.board.run((e) => e.addTask({ title: 'clean, idle' }));
    await host.board.run((e) => e.addTask({ title: 'with work, idle' }));
    await host.board.run((e) => e.addTask({ title: 'deleted by hand' }));
    const a = await idleAgent(host);
    const folders = new Map<string, string>();
    for (const id of ['T-1', 'T-2', 'T-3']) {
      const c = (await cliAs(host, a, ['claim', id])).out.result as { token: number; worktree: { path: string } };
      folders.set(id, c.worktree.path);
      if (id === 'T-2') fs.writeFileSync(join(c.worktree.path, 'wip.txt'), 'work in progress\n');
      expect((await cliAs(host, a, ['release', id, '--token', String(c.token)])).code).toBe(0);
    }
    const git = host.worktrees.require();
    const branchHead = () => gitSync(folder, ['rev-parse', git.names.branch('T-1')]);
    const before = branchHead();
    // T-3's folder is deleted by a person, outside Forkbench, before any clean-up.
    fs.rmSync(folders.get('T-3') as string, { recursive: true, force: true });
    await git.parked.sweep();
    clock.advance(GRACE_MS);
    const out = await git.parked.sweep();
    expect(out.removed.sort()).toEqual([folders.get('T-1'), folders.get('T-2')].sort());
    const rows = new Map((await git.folders.list()).map((w) => [w.taskId, w]));
    expect(rows.get('T-1')).toMatchObject({ path: folders.get('T-1'), missing: false, cleaned: { savedAs: null }, bytes: 0 });
    const saved = host.board.state.tasks.get('T-2')?.saved?.[0];
    expect(rows.get('T-2')).toMatchObject({ missing: false, cleaned: { savedAs: saved?.ref } });
    expect(rows.get('T-3')).toMatchObject({ missing: true });
    expect(rows.get('T-3')?.cleaned).toBeUndefined();
    // The task's branch is untouched by the clean-up: only a merge or a person removes it.
    expect(branchHead()).toBe(before);
    // The next claim says the folder was cleaned, not deleted by hand.
    expect((await cliAs(host, a, ['claim', 'T-1'])).code).toBe(0);
    const said = host.board.state.tasks.get('T-1')?.notes.map((n) => n.text).join('\n') ?? '';
    expect(said).toContain(`${folders.get('T-1')} held nothing uncommitted and was removed after its grace`);
    expect(said).not.toContain('deleted by hand');
    // Once the board forgets the old folder (parked by that grant, absent, so cleared by the next sweep), its mark goes too.
    await git.parked.sweep();
    expect(host.board.state.tasks.get('T-1')?.parked).toEqual([]);
    expect(fs.readdirSync(join(git.names.threadDir, 'parked-cleaned', git.names.key)).sort()).toEqual([basename(folders.get('T-2') as string)]);
  });
});
