/**
 * Issue 33: a recorded commit is pushed to the Thread's remote in the background; while the remote does not
 * answer, the task's history says "not on the remote yet" once (not per retry), retries back off (1 s, 2 s,
 * 4 s… on the injected timers), a later record supersedes the one waiting (pushed at once, the back-off
 * started again), and once the remote answers the newest record lands and the board says so. On a board of
 * one host (the journal) whose settings name the remote.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { PushConstants } from '../../../src-main/git/taskPushes.js';
import { agentEnv, cloneOfBareRemote, gitSync, idleAgent, remoteRefOf, sh, strayOf } from '../../helpers/gitFixture.js';
import { manualTimers } from '../../helpers/manualTimers.js';
import { waitFor } from '../../helpers/pty.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';
import { openTestHost } from '../../helpers/testHost.js';

const hosts: ThreadHost[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.dispose();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function commit(wt: string, env: NodeJS.ProcessEnv, line: string): Promise<string> {
  const r = await sh(wt, `echo '${line}' >> notes.txt && git commit -qam '${line}' && git rev-parse HEAD`, env);
  if (r.code !== 0) throw new Error(`commit failed: ${r.stderr}`);
  return r.stdout.trim();
}

/** A bare remote and a clone of it as the Thread's folder, removed after the test. */
function cloneOfBare(): { root: string; bare: string; folder: string } {
  const made = cloneOfBareRemote('fb-pushes-');
  dirs.push(made.root);
  return made;
}

/** A host on the clone whose board names the bare repository as the Thread's remote; its retries on `clock`. */
async function hostWithRemote(clock = manualTimers()) {
  const { root, bare, folder } = cloneOfBare();
  // Its tests commit with the agent's secret from the test process, outside any pane (peerJudges.ts).
  const { host } = await openTestHost({ closedBy: 'caller', folder, dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, peerJudge: secretsFromTheTestProcess, gitRemote: { timers: clock.timers } });
  hosts.push(host);
  await host.board.run((e) => e.setSettings({ remote: { name: 'origin', url: bare } }));
  return { root, bare, folder, host, clock };
}

/**
 * The board's next "pushed" write fails as a write to a database that went away does: the push itself lands
 * on the remote (a real push), only the board does not hear of it. Returns how many writes failed so far.
 */
function failNextPushedWrite(host: ThreadHost): () => number {
  const board = host.board;
  const run = board.run.bind(board);
  let failures = 0;
  board.run = ((decide: Parameters<typeof run>[0]) => {
    if (failures === 0 && decide.toString().includes('recordPushed')) {
      failures++;
      return Promise.reject(new Error('the board database is unreachable'));
    }
    return run(decide);
  }) as typeof board.run;
  return () => failures;
}

/** T-1 added and claimed by an idle agent; its start record (the base's head) pushed, as the board says. */
async function claimedAndPushed(host: ThreadHost) {
  await host.board.run((e) => e.addTask({ title: 'push me' }));
  const agent = await idleAgent(host);
  const c = await host.board.run((e) => e.claim(agent, 'T-1'));
  const wt = (await host.worktrees.worktreeOf('T-1', (c.ok && c.value.token) as number))!.path;
  const base = host.board.state.tasks.get('T-1')?.record?.sha;
  await waitFor(() => host.board.state.tasks.get('T-1')?.pushed?.sha === base, 20_000, 'the start record pushed');
  return { agent, wt, pushes: host.worktrees.git!.pushes, base };
}

describe('pushes to the remote', () => {
  it('unreachable: said once, retried with back-off, superseded by a later record, landed once the remote answers', async () => {
    const { root, bare, folder } = cloneOfBare();
    const clock = manualTimers();
    const { host } = await openTestHost({ closedBy: 'caller', folder, dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, peerJudge: secretsFromTheTestProcess, gitRemote: { timers: clock.timers } });
    hosts.push(host);
    // A board of one machine pushes nothing until its settings name the remote.
    expect(host.board.state.settings.remote).toBeNull();
    await host.board.run((e) => e.setSettings({ remote: { name: 'origin', url: bare } }));
    const { agent, wt, pushes, base } = await claimedAndPushed(host);

    fs.renameSync(bare, `${bare}.away`);
    const env = agentEnv(host, agent);
    const one = await commit(wt, env, 'one');
    await waitFor(() => host.board.state.tasks.get('T-1')?.record?.sha === one, 20_000, 'the record');
    await pushes.idle();
    const notYet = () => host.board.state.tasks.get('T-1')!.notes.filter((n) => n.text.includes('not on the remote yet'));
    expect(notYet()).toHaveLength(1);
    expect(notYet()[0]?.text).toContain(one.slice(0, 7));
    expect(clock.delays()).toEqual([PushConstants.firstRetryMs]);
    for (const next of [2, 4].map((k) => k * PushConstants.firstRetryMs)) {
      clock.fire();
      await pushes.idle();
      expect(clock.delays()).toEqual([next]);
    }
    expect(notYet()).toHaveLength(1);

    // A later record: pushed at once, the back-off from the start.
    const two = await commit(wt, env, 'two');
    await waitFor(() => host.board.state.tasks.get('T-1')?.record?.sha === two, 20_000, 'the second record');
    await pushes.idle();
    expect(clock.delays()).toEqual([PushConstants.firstRetryMs]);
    expect(notYet()).toHaveLength(1);

    fs.renameSync(`${bare}.away`, bare);
    clock.fire();
    await pushes.idle();
    await waitFor(() => host.board.state.tasks.get('T-1')?.pushed?.sha === two, 20_000, 'the newest record pushed');
    expect(gitSync(bare, ['rev-parse', remoteRefOf(host, 'T-1')])).toBe(two);
    expect(clock.size()).toBe(0);
    const pushedEvents = (await host.board.log()).filter((e) => e.kind === 'branch-pushed');
    expect(pushedEvents.map((e) => (e.kind === 'branch-pushed' ? e.record.sha : ''))).toEqual([base, two]);
  }, 90_000);

  it('a record not yet pushed when its host stopped is pushed when the host opens the Thread again', async () => {
    const { root, bare, folder } = cloneOfBare();
    const open = async () => {
      const { host: h } = await openTestHost({ closedBy: 'caller', folder, dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, peerJudge: secretsFromTheTestProcess, gitRemote: { timers: manualTimers().timers } });
      hosts.push(h);
      return h;
    };
    const first = await open();
    await first.board.run((e) => e.setSettings({ remote: { name: 'origin', url: bare } }));
    await first.board.run((e) => e.addTask({ title: 'push me' }));
    const agent = await idleAgent(first);
    const c = await first.board.run((e) => e.claim(agent, 'T-1'));
    const wt = (await first.worktrees.worktreeOf('T-1', (c.ok && c.value.token) as number))!.path;
    const base = first.board.state.tasks.get('T-1')?.record?.sha;
    await waitFor(() => first.board.state.tasks.get('T-1')?.pushed?.sha === base, 20_000, 'the start record pushed');
    fs.renameSync(bare, `${bare}.away`);
    const one = await commit(wt, agentEnv(first, agent), 'one');
    await waitFor(() => first.board.state.tasks.get('T-1')?.notes.some((n) => n.text.includes('not on the remote yet')), 20_000, 'the note');
    await first.worktrees.git!.pushes.idle();
    await first.dispose();
    hosts.splice(hosts.indexOf(first), 1);

    fs.renameSync(`${bare}.away`, bare);
    const again = await open();
    await waitFor(() => again.board.state.tasks.get('T-1')?.pushed?.sha === one, 20_000, 'the record pushed after the restart');
    expect(gitSync(bare, ['rev-parse', remoteRefOf(again, 'T-1')])).toBe(one);
  }, 90_000);

  it('a push whose board write failed (the database away) is said again, and its next push is not set aside as a stray', async () => {
    const { bare, host, clock } = await hostWithRemote();
    const { agent, wt, pushes, base } = await claimedAndPushed(host);

    const board = host.board;
    const failures = failNextPushedWrite(host);
    const one = await commit(wt, agentEnv(host, agent), 'one');
    await waitFor(() => board.state.tasks.get('T-1')?.record?.sha === one, 20_000, 'the record');
    await pushes.idle();
    expect(failures()).toBe(1);
    expect(gitSync(bare, ['rev-parse', remoteRefOf(host, 'T-1')])).toBe(one);
    expect(board.state.tasks.get('T-1')?.pushed?.sha).toBe(base);
    // The retry finds the sha there and says so; the commit after it is pushed over it, not beside it.
    expect(clock.delays()).toEqual([PushConstants.firstRetryMs]);
    clock.fire();
    await pushes.idle();
    expect(board.state.tasks.get('T-1')?.pushed?.sha).toBe(one);
    const two = await commit(wt, agentEnv(host, agent), 'two');
    await waitFor(() => board.state.tasks.get('T-1')?.pushed?.sha === two, 20_000, 'the next record pushed');
    expect(gitSync(bare, ['for-each-ref', '--format=%(refname)', 'refs/forkbench/stray/'])).toBe('');
  }, 90_000);

  it("its own earlier push the board never heard of, under a record that moved on: pushed over, not set aside", async () => {
    // The two-host chaos run's T-7: 7c17 landed on the remote while the board's "pushed" write failed, the
    // record moved on to d018, and the retry of d018 (expecting the base) found 7c17 there and set this
    // host's own commit aside as a stray.
    const { bare, host, clock } = await hostWithRemote();
    const { agent, wt, pushes, base } = await claimedAndPushed(host);
    const board = host.board;
    const failures = failNextPushedWrite(host);
    const one = await commit(wt, agentEnv(host, agent), 'one');
    await waitFor(() => failures() === 1, 20_000, 'the push of one landed unheard');
    await pushes.idle();
    expect(gitSync(bare, ['rev-parse', remoteRefOf(host, 'T-1')])).toBe(one);
    const two = await commit(wt, agentEnv(host, agent), 'two');
    await waitFor(() => board.state.tasks.get('T-1')?.record?.sha === two, 20_000, 'the next record');
    await pushes.idle();
    if (board.state.tasks.get('T-1')?.pushed?.sha !== two) {
      clock.fire();
      await pushes.idle();
    }
    expect(board.state.tasks.get('T-1')?.pushed?.sha).toBe(two);
    expect(base).not.toBe(two);
    expect(gitSync(bare, ['rev-parse', remoteRefOf(host, 'T-1')])).toBe(two);
    expect(gitSync(bare, ['for-each-ref', '--format=%(refname)', 'refs/forkbench/stray/'])).toBe('');
  }, 90_000);

  it('git failing in the clone while a push runs (a fetch refused: a broken worktree) is said once and retried, not dropped', async () => {
    const { root, bare, folder, host, clock } = await hostWithRemote();
    const { agent, wt, pushes } = await claimedAndPushed(host);
    // Something not of this clone sits in the task's ref on the remote: the push must fetch it to keep it aside.
    const other = join(root, 'other');
    gitSync(root, ['clone', '-q', bare, other]);
    fs.writeFileSync(join(other, 'foreign.txt'), 'not recorded\n');
    gitSync(other, ['add', '.']);
    gitSync(other, ['commit', '-qm', 'foreign']);
    const foreign = gitSync(other, ['rev-parse', 'HEAD']);
    gitSync(other, ['push', '-q', '--force', 'origin', `HEAD:${remoteRefOf(host, 'T-1')}`]);
    // And this clone's fetches fail as they did in the chaos run: an admin folder whose HEAD points at nothing.
    const admin = join(folder, '.git', 'worktrees', 'broken');
    fs.mkdirSync(admin, { recursive: true });
    fs.writeFileSync(join(admin, 'HEAD'), `${'0'.repeat(40)}\n`);
    fs.writeFileSync(join(admin, 'commondir'), '../..\n');
    fs.writeFileSync(join(admin, 'gitdir'), `${join(root, 'nowhere', '.git')}\n`);

    const one = await commit(wt, agentEnv(host, agent), 'one');
    await waitFor(() => host.board.state.tasks.get('T-1')?.record?.sha === one, 20_000, 'the record');
    await pushes.idle();
    const failed = () => host.board.state.tasks.get('T-1')!.notes.filter((n) => n.text.includes('failed on this host'));
    expect(failed()).toHaveLength(1);
    expect(failed()[0]?.text).toContain('bad object');
    expect(clock.delays()).toEqual([PushConstants.firstRetryMs]);
    clock.fire();
    await pushes.idle();
    expect(failed()).toHaveLength(1);

    fs.rmSync(admin, { recursive: true });
    clock.fire();
    await pushes.idle();
    expect(host.board.state.tasks.get('T-1')?.pushed?.sha).toBe(one);
    expect(gitSync(bare, ['rev-parse', strayOf(host, 'T-1', foreign)])).toBe(foreign);
  }, 90_000);
});
