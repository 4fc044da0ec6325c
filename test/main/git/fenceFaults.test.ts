import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { processGroupAlive, readProcStat } from '../../../src-main/base/procStat.js';
import { ensureCliShim, shimDirFor } from '../../../src-main/thread/cliShim.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { threadKeyOf } from '../../../src-main/thread/threadHost.js';
import { agentEnv, branchOf, CLAIM_T1_AND_CD, claimedTask, cliAs, Fixture, makeRepo, GIT_IDENTITY, gitSync, idleAgent, paneAgent, reachable, sh, strayOf } from '../../helpers/gitFixture.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';

/**
 * The fence under faults, while an operation is in flight: each case was found by a chaos run against the
 * git fence as it was (hooks as the fence, one folder per task) and pins one failure of it.
 */
// Its tests run git and the CLI as an agent from the test process, outside any pane (peerJudges.ts).
const fx = new Fixture({ peerJudge: secretsFromTheTestProcess });
beforeAll(() => {
  ensureBuilt();
  Object.assign(process.env, GIT_IDENTITY); // panes inherit the host's environment
});
afterEach(() => fx.cleanup());

const claimed = (o: { leaseMs?: number } = {}) => claimedTask(fx, o);

const task = (host: { board: { state: { tasks: Map<string, any> } } }) => host.board.state.tasks.get('T-1');
const notes = (host: { board: { state: { tasks: Map<string, any> } } }) => (task(host)?.notes ?? []).map((n: { text: string }) => n.text).join('\n');
const recorded = async (host: { board: { log(): Promise<any[]> } }) => new Set((await host.board.log()).filter((e) => e.kind === 'branch-recorded').map((e) => e.record.sha as string));

describe('1. approval never loses an acknowledged commit', () => {
  it('commits made while approval runs are refused (frozen) or kept aside; the merge is the sha done froze', async () => {
    const { host, folder, a, token, wt } = await claimed();
    const env = agentEnv(host, a);
    fs.writeFileSync(join(wt, 'work.txt'), 'the work\n');
    expect((await sh(wt, 'git add -A && git commit -qm work', env)).code).toBe(0);
    expect((await cliAs(host, a, ['done', 'T-1', '--token', String(token)])).code).toBe(0);
    const frozen = task(host)?.submitted?.sha as string;
    expect(frozen).toBe(gitSync(wt, ['rev-parse', 'HEAD']));
    // Keep committing every ~50 ms through approval, as an agent that said done too early would.
    let stop = false;
    const acked: string[] = [];
    const loop = (async () => {
      for (let i = 0; !stop && i < 200; i++) {
        fs.appendFileSync(join(wt, 'work.txt'), `late ${i}\n`);
        const r = await sh(wt, `git commit -qam "late ${i}" && git rev-parse HEAD`, env);
        if (r.code === 0) acked.push(r.stdout.trim());
        await new Promise((res) => setTimeout(res, 50));
      }
    })();
    await new Promise((res) => setTimeout(res, 200));
    await host.worktrees.approve('T-1');
    stop = true;
    await loop;
    expect(task(host)?.state).toBe('done');
    expect(gitSync(folder, ['rev-parse', 'main^2'])).toBe(frozen);
    // Review is frozen: no commit after done was acknowledged, and each that git made anyway still exists.
    expect(acked).toEqual([]);
    for (const sha of acked) expect(reachable(folder, sha)).toBe(true);
  });

  it('a head that moved outside the fence after done is kept as a stray ref and named, never deleted', async () => {
    const { host, folder, a, token, wt } = await claimed();
    fs.writeFileSync(join(wt, 'work.txt'), 'the work\n');
    expect((await sh(wt, 'git add -A && git commit -qm work', agentEnv(host, a))).code).toBe(0);
    expect((await cliAs(host, a, ['done', 'T-1', '--token', String(token)])).code).toBe(0);
    fs.appendFileSync(join(wt, 'work.txt'), 'after done\n');
    // No hook runs: the commit lands on the branch whatever the fence thinks.
    const late = await sh(wt, 'git -c core.hooksPath=/dev/null commit -qam "after done" && git rev-parse HEAD', agentEnv(host, a));
    expect(late.code, late.stderr).toBe(0);
    const sha = late.stdout.trim();
    await host.worktrees.approve('T-1');
    expect(gitSync(folder, ['rev-parse', 'main^2'])).not.toBe(sha);
    expect(gitSync(folder, ['rev-parse', strayOf(host, 'T-1', sha)])).toBe(sha);
    expect(gitSync(folder, ['branch', '--list', 'forkbench/*'])).toBe('');
    expect(notes(host)).toMatch(new RegExp(`had moved to ${sha.slice(0, 10)} after the work was submitted; that commit was not merged and is kept as ${strayOf(host, 'T-1', sha)}`));
  });
});

describe('2. a move that lands after its claim ended is not the task’s work', () => {
  it('a slow repository hook delays the ref update past a reassign: git exits 0, the board does not record it, the branch is put back', async () => {
    const { host, folder } = await fx.host();
    // The repository's own reference-transaction hook: it runs after the fence said yes, and stalls.
    const hook = join(folder, '.git', 'hooks', 'reference-transaction');
    fs.writeFileSync(hook, '#!/bin/sh\ncat >/dev/null\n[ "$1" = prepared ] && [ -f "$SLOW" ] && sleep 2\nexit 0\n', { mode: 0o755 });
    await host.board.run((e) => e.addTask({ title: 'slow' }));
    // Beside the agent's script: the folder of the program a pane runs is readable from its sandbox.
    const dir = fx.tmp();
    const slow = join(dir, 'slow-now');
    const agent = await paneAgent(
      host,
      dir,
      `${CLAIM_T1_AND_CD}
echo CLAIMED
read line
echo late > late.txt && git add late.txt
SLOW='${slow}' git commit -qm late; echo "COMMIT-EXIT=$?"
echo AGENT-DONE
exec sleep 600`,
    );
    await agent.until(/CLAIMED/);
    const before = task(host)?.record?.sha as string;
    fs.writeFileSync(slow, '');
    host.roster.relay.input(agent.id, '\r');
    await new Promise((res) => setTimeout(res, 800)); // the fence has said yes; the repo hook sleeps
    const b = await idleAgent(host);
    const moved = await host.board.run((e) => e.assign('T-1', b));
    expect(moved.ok).toBe(true);
    const issued = await host.worktrees.worktreeOf('T-1', moved.ok ? moved.value.token : 0);
    await agent.until(/AGENT-DONE/);
    const out = agent.output();
    expect(out).toMatch(/COMMIT-EXIT=0/); // git itself went through: a hook cannot undo a landed update
    expect(out).toMatch(/NOT RECORDED \(stale-token\)/);
    // the host put the branch back at the record and kept the late commit aside, under its own sha
    await expect.poll(() => gitSync(folder, ['rev-parse', branchOf(host, 'T-1')]), { timeout: 5000 }).toBe(before);
    const strays = gitSync(folder, ['for-each-ref', '--format=%(objectname)', strayOf(host, 'T-1')]).split('\n').filter(Boolean);
    expect(strays).toHaveLength(1);
    const late = strays[0] as string;
    expect(gitSync(folder, ['log', '-1', '--format=%s', late])).toBe('late');
    expect((await recorded(host)).has(late)).toBe(false);
    expect(task(host)?.record?.sha).toBe(before);
    // the new holder never sees the late file, and its commit is recorded under its token
    expect(fs.existsSync(join(issued?.path as string, 'late.txt'))).toBe(false);
    fs.writeFileSync(join(issued?.path as string, 'b.txt'), 'b\n');
    const r = await sh(issued?.path as string, 'git add b.txt && git commit -qm b', agentEnv(host, b));
    expect(r.code, r.stderr).toBe(0);
    expect(task(host)?.record?.token).toBe(moved.ok && moved.value.token);
  });
  it('a pane that ends while its git is inside `git commit`: the commit that lands after is not recorded, and the host moves it aside and puts the branch back', async () => {
    // Uncontained: a contained pane's end takes every process of its sandbox with it (its pid namespace), so
    // no git of it lands afterwards; and its hook could not write the test's markers outside its folders.
    const { host, folder } = await fx.host({ uncontained: 'a git that outlives its pane' });
    const dir = fx.tmp();
    const inGit = join(dir, 'in-git');
    const gate = join(dir, 'go');
    const said = join(dir, 'git.out');
    // The repository's own reference-transaction hook holds the agent's update of the branch (the fence has
    // said yes), so the pane can close while git is inside `git commit`, with its ref update still to land.
    fs.writeFileSync(
      join(folder, '.git', 'hooks', 'reference-transaction'),
      `#!/bin/sh\n[ "$1" = prepared ] && [ -n "\${FORKBENCH_AGENT_ID:-}" ] || { cat >/dev/null; exit 0; }\ngrep -q ' refs/heads/${branchOf(host, 'T-1')}' || exit 0\ntouch '${inGit}'\nwhile [ ! -f '${gate}' ]; do sleep 0.05; done\n`,
      { mode: 0o755 },
    );
    await host.board.run((e) => e.addTask({ title: 'closed in git' }));
    // The git runs in a session of its own (a job the agent put in the background), and the pane's process
    // exits while it is inside `git commit`: the pane ends, and the agent's claim and secret with it, not this
    // git, which lands its commit afterwards. (A job of the pane still running keeps its process group, so the
    // host leaves the git locks alone for now, as it does for any agent's job that outlives it.)
    await paneAgent(
      host,
      dir,
      `${CLAIM_T1_AND_CD}
echo late > late.txt && git add late.txt
setsid git commit -qm late > '${said}' 2>&1 &
nohup sleep 20 >/dev/null 2>&1 &
while [ ! -f '${inGit}' ]; do sleep 0.05; done
exit 0`,
    );
    await expect.poll(() => fs.existsSync(inGit), { timeout: 20_000 }).toBe(true);
    const before = task(host)?.record?.sha as string;
    const branch = task(host)?.worktree?.branch as string;
    await expect.poll(() => task(host)?.claim ?? null, { timeout: 10_000 }).toBeNull();
    fs.writeFileSync(gate, '');
    await expect.poll(() => (fs.existsSync(said) ? fs.readFileSync(said, 'utf8') : ''), { timeout: 10_000 }).toMatch(/NOT RECORDED \(unauthorized\)/);
    // As the README promises for every commit the board refused: moved aside, the branch back at the record.
    await expect.poll(() => gitSync(folder, ['rev-parse', branch]), { timeout: 5000 }).toBe(before);
    const strays = gitSync(folder, ['for-each-ref', '--format=%(objectname)', strayOf(host, 'T-1')]).split('\n').filter(Boolean);
    expect(strays).toHaveLength(1);
    expect(gitSync(folder, ['log', '-1', '--format=%s', strays[0] as string])).toBe('late');
    expect((await recorded(host)).has(strays[0] as string)).toBe(false);
    await expect.poll(() => notes(host), { timeout: 5000 }).toContain(`moved aside to ${strayOf(host, 'T-1', strays[0])}`);
  });
});

describe('3. a refused command never changes the holder’s folder', () => {
  it("a stale agent's reset --hard and refused commit stay in its own old folder", async () => {
    const { host, a, wt } = await claimed();
    fs.writeFileSync(join(wt, 'notes.txt'), 'A was here\n');
    expect((await sh(wt, 'git commit -qam A', agentEnv(host, a))).code).toBe(0);
    const b = await idleAgent(host);
    const moved = await host.board.run((e) => e.assign('T-1', b));
    const mine = (await host.worktrees.worktreeOf('T-1', moved.ok ? moved.value.token : 0))?.path as string;
    fs.writeFileSync(join(mine, 'notes.txt'), 'B edits\n');
    // The stale agent stages an edit, tries to commit, and resets hard.
    fs.writeFileSync(join(wt, 'notes.txt'), 'stale line\n');
    const refused = await sh(wt, 'git commit -qam stale', agentEnv(host, a));
    expect(refused.code).not.toBe(0);
    await sh(wt, 'git reset -q --hard HEAD~1', agentEnv(host, a));
    expect(fs.readFileSync(join(mine, 'notes.txt'), 'utf8')).toBe('B edits\n');
    expect(gitSync(mine, ['diff', '--cached', '--name-only'])).toBe('');
    const r = await sh(mine, 'git commit -qam B', agentEnv(host, b));
    expect(r.code, r.stderr).toBe(0);
    expect(gitSync(mine, ['show', '--format=', 'HEAD'])).not.toMatch(/stale line/);
    expect(gitSync(mine, ['log', '--format=%s', '-2'])).toBe('B\nA');
  });
});

describe('4. done freezes the branch', () => {
  it("the holder's commits after done are refused; approval merges exactly what done froze", async () => {
    const { host, folder, a, token, wt } = await claimed();
    fs.writeFileSync(join(wt, 'notes.txt'), 'submitted\n');
    expect((await sh(wt, 'git commit -qam submitted', agentEnv(host, a))).code).toBe(0);
    const frozen = gitSync(wt, ['rev-parse', 'HEAD']);
    expect((await cliAs(host, a, ['done', 'T-1', '--token', String(token)])).code).toBe(0);
    fs.writeFileSync(join(wt, 'notes.txt'), 'after done\n');
    const after = await sh(wt, 'git commit -qam "after done"', agentEnv(host, a));
    expect(after.code).not.toBe(0);
    expect(after.stderr).toMatch(/refused \(bad-state\): T-1 is in review: its work was frozen at [0-9a-f]{10}/);
    expect(gitSync(wt, ['rev-parse', branchOf(host, 'T-1')])).toBe(frozen);
    await host.worktrees.approve('T-1');
    expect(gitSync(folder, ['rev-parse', 'main^2'])).toBe(frozen);
    expect(fs.readFileSync(join(folder, 'notes.txt'), 'utf8')).toBe('submitted\n');
  });
});

describe('5. commits no hook saw are never merged, whatever their trailers say', () => {
  it('hooksPath=/dev/null, GIT_CONFIG_COUNT, commit-tree with a forged trailer written into the ref file, update-ref from the Thread folder', async () => {
    const { host, folder, a, token, wt } = await claimed();
    const env = agentEnv(host, a);
    fs.writeFileSync(join(wt, 'notes.txt'), 'honest work\n');
    expect((await sh(wt, 'git commit -qam honest', env)).code).toBe(0);
    const honest = gitSync(wt, ['rev-parse', 'HEAD']);
    const bypass = async (cmd: string) => {
      const r = await sh(wt, cmd, env);
      expect(r.code, r.stderr).toBe(0);
      return gitSync(folder, ['rev-parse', branchOf(host, 'T-1')]);
    };
    fs.writeFileSync(join(wt, 'notes.txt'), 'sneak 1\n');
    const s1 = await bypass('git -c core.hooksPath=/dev/null commit -qam sneak1');
    expect(s1).not.toBe(honest);
    // The holder's next honest commit finds the branch off the record: refused, and the branch put back.
    const off = await sh(wt, 'git commit -q --allow-empty -m next', env);
    expect(off.code).not.toBe(0);
    expect(off.stderr).toMatch(new RegExp(`refused \\(off-record\\): ${branchOf(host, 'T-1')} is at [0-9a-f]{10}, which the board never recorded`));
    await expect.poll(() => gitSync(folder, ['rev-parse', branchOf(host, 'T-1')]), { timeout: 5000 }).toBe(honest);
    expect(gitSync(folder, ['rev-parse', strayOf(host, 'T-1', s1)])).toBe(s1);
    // The rest, each straight to the head, and the last one with a trailer naming the live token.
    fs.writeFileSync(join(wt, 'notes.txt'), 'sneak 2\n');
    await bypass('GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null git commit -qam sneak2');
    const tree = gitSync(wt, ['write-tree']);
    const forged = gitSync(wt, ['commit-tree', tree, '-p', 'HEAD', '-m', `forged\n\nForkbench-Task: T-1\nForkbench-Token: ${token}`]);
    const refFile = join(folder, '.git', 'refs', 'heads', ...branchOf(host, 'T-1').split('/'));
    fs.writeFileSync(refFile, `${forged}\n`);
    expect(gitSync(folder, ['rev-parse', branchOf(host, 'T-1')])).toBe(forged);
    const fromThread = await sh(folder, `git -c core.hooksPath=/dev/null update-ref refs/heads/${branchOf(host, 'T-1')} ${forged}`, env);
    expect(fromThread.code).toBe(0);
    expect((await cliAs(host, a, ['done', 'T-1', '--token', String(token)])).code).toBe(0);
    expect(task(host)?.submitted?.sha).toBe(honest);
    await host.worktrees.approve('T-1');
    expect(gitSync(folder, ['rev-parse', 'main^2'])).toBe(honest);
    expect(gitSync(folder, ['log', '--format=%s', 'main'])).not.toMatch(/sneak|forged/);
    expect(reachable(folder, forged)).toBe(true);
  });
});

describe("6. the Thread's own folder is fenced for agents", () => {
  it('an agent cannot commit or move a branch there, even with its secret dropped; a person can', async () => {
    // Uncontained: the host's fence, for agents outside a sandbox; a contained one cannot write the Thread
    // folder at all (test/main/sandbox/containedPanes.test.ts).
    const { host, folder } = await fx.host({ uncontained: "the Thread folder's fence" });
    const base = gitSync(folder, ['rev-parse', 'main']);
    const agent = await paneAgent(
      host,
      fx.tmp(),
      `cd '${folder}'
echo one >> notes.txt
git commit -qam "agent on main"; echo "COMMIT-EXIT=$?"
env -u FORKBENCH_SECRET -u FORKBENCH_SOCKET git commit -qam "no secret"; echo "NOSECRET-EXIT=$?"
env -u FORKBENCH_SECRET FORKBENCH_PERSON=1 git commit -qam "says person"; echo "PERSON-EXIT=$?"
git branch side; echo "BRANCH-EXIT=$?"
echo AGENT-DONE
exec sleep 600`,
    );
    await agent.until(/AGENT-DONE/);
    const out = agent.output();
    for (const step of ['COMMIT', 'NOSECRET', 'PERSON', 'BRANCH']) expect(out).toMatch(new RegExp(`${step}-EXIT=[1-9]`));
    expect(out).toMatch(/agents do not commit in the Thread's own folder/);
    expect(out).toMatch(/runs inside the agent pane/);
    expect(gitSync(folder, ['rev-parse', 'main'])).toBe(base);
    // A person, at their own terminal (not in any pane), commits as always.
    const person = await sh(folder, 'git commit -qam "person on main"');
    expect(person.code, person.stderr).toBe(0);
    expect(gitSync(folder, ['log', '-1', '--format=%s'])).toBe('person on main');
    // Closing the Thread gives the folder back its own hooks setting.
    await host.dispose();
    fx.hosts.splice(0);
    expect((await sh(folder, 'git config --worktree --get-all core.hooksPath')).stdout.trim()).toBe('');
  }, 60_000);
});

describe("6b. the Thread folder's fence setting left by a killed host", () => {
  it("is never taken for the repository's own hooks: the next host still runs the person's hooksPath", async () => {
    const root = fx.tmp();
    const folder = join(root, 'project');
    makeRepo(folder);
    fs.mkdirSync(join(folder, '.husky'));
    const marker = join(fx.tmp(), 'their-hook-ran');
    fs.writeFileSync(join(folder, '.husky', 'pre-commit'), `#!/bin/sh\necho ran >> '${marker}'\n`, { mode: 0o755 });
    gitSync(folder, ['config', 'core.hooksPath', '.husky']);
    gitSync(folder, ['config', 'extensions.worktreeConfig', 'true']);
    // What a host killed -9 leaves: the main worktree pointed at the fence's hooks.
    const dataRoot = join(root, 'data');
    gitSync(folder, ['config', '--worktree', 'core.hooksPath', join(dataRoot, 'threads', threadKeyOf(folder), 'hooks', 'thread')]);
    const { host } = await fx.host({ folder, dataRoot, runtimeRoot: join(root, 'run') });
    fs.writeFileSync(join(folder, 'notes.txt'), 'person\n');
    const person = await sh(folder, 'git commit -qam "person on main"');
    expect(person.code, person.stderr).toBe(0);
    expect(fs.readFileSync(marker, 'utf8')).toBe('ran\n');
    await host.dispose();
    fx.hosts.splice(0);
    expect((await sh(folder, 'git config --worktree --get core.hooksPath')).stdout.trim()).toBe('');
    expect((await sh(folder, 'git config --get core.hooksPath')).stdout.trim()).toBe('.husky');
  });
});

describe('7. a late commit that recreates a removed branch never blocks the task', () => {
  it('the branch reappears after the worktree was removed: the next claim keeps it aside and goes on', async () => {
    const { host, folder, a, token, wt } = await claimed();
    fs.writeFileSync(join(wt, 'notes.txt'), 'lost?\n');
    expect((await sh(wt, 'git commit -qam work', agentEnv(host, a))).code).toBe(0);
    const work = gitSync(wt, ['rev-parse', 'HEAD']);
    expect((await cliAs(host, a, ['release', 'T-1', '--token', String(token)])).code).toBe(0);
    await host.worktrees.require().folders.remove('T-1', true);
    expect(gitSync(folder, ['branch', '--list', branchOf(host, 'T-1')])).toBe('');
    // A stalled git finishes its commit now and writes the branch again.
    gitSync(folder, ['update-ref', `refs/heads/${branchOf(host, 'T-1')}`, work]);
    for (let i = 0; i < 3; i++) {
      const b = await idleAgent(host);
      const c = await cliAs(host, b, ['claim', 'T-1']);
      expect(c.code, JSON.stringify(c.out)).toBe(0);
      expect(task(host)?.state).toBe('claimed');
      expect((await cliAs(host, b, ['release', 'T-1', '--token', String(c.out.result.token)])).code).toBe(0);
    }
    expect(reachable(folder, work)).toBe(true);
  });
});

describe('8. git locks left by a killed agent never block the next holder', () => {
  it('kill -9 inside git commit (index.lock held): the lock is cleared once the agent is gone, and the next claim works', async () => {
    const { host, folder } = await fx.host();
    fs.writeFileSync(join(folder, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\necho IN-GIT\nexec sleep 60\n', { mode: 0o755 });
    await host.board.run((e) => e.addTask({ title: 'killed in git' }));
    const agent = await paneAgent(
      host,
      fx.tmp(),
      `${CLAIM_T1_AND_CD}
echo x >> notes.txt
git commit -qam "never finishes"
exec sleep 600`,
    );
    await agent.until(/IN-GIT/);
    const wt = task(host)?.worktree?.path as string;
    const admin = gitSync(wt, ['rev-parse', '--absolute-git-dir']);
    expect(fs.existsSync(join(admin, 'index.lock'))).toBe(true);
    process.kill(-agent.pid, 'SIGKILL');
    await expect.poll(() => fs.existsSync(join(admin, 'index.lock')), { timeout: 10_000 }).toBe(false);
    fs.rmSync(join(folder, '.git', 'hooks', 'pre-commit'));
    const b = await idleAgent(host);
    const c = await cliAs(host, b, ['claim', 'T-1']);
    expect(c.code).toBe(0);
    const mine = c.out.result.worktree.path as string;
    fs.writeFileSync(join(mine, 'notes.txt'), 'after the kill\n');
    const r = await sh(mine, 'git commit -qam after', agentEnv(host, b));
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readdirSync(admin).filter((f) => f.endsWith('.lock'))).toEqual([]);
  });

  it('a branch lock that outlasts the put-back of its ended claim: once the lock goes, the branch is put back at its record', async () => {
    const { host, folder } = await fx.host();
    await host.board.run((e) => e.addTask({ title: 'off its record' }));
    // A job of the agent's outlives it by longer than the put-back tries (40 of 75 ms and a git each: 5-7 s here)
    // and less than the 10 s its locks are kept for it: they stay till then.
    const agent = await paneAgent(host, fx.tmp(), `${CLAIM_T1_AND_CD}\n(trap '' HUP; exec sleep 8) &\necho READY\nexec sleep 600`);
    await agent.until(/READY/);
    const t = task(host);
    const wt = t.worktree;
    const record = t.record.sha as string;
    const common = gitSync(folder, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
    // What a git killed inside its commit can leave: the branch moved to a commit the board never heard of, and
    // the branch's lock file.
    const tree = gitSync(wt.path, ['rev-parse', 'HEAD^{tree}']);
    const stray = gitSync(folder, ['commit-tree', tree, '-p', record, '-m', 'never reported']);
    fs.writeFileSync(join(common, 'refs', 'heads', `${wt.branch}`), `${stray}\n`);
    const lock = join(common, 'refs', 'heads', `${wt.branch}.lock`);
    fs.writeFileSync(lock, '');
    process.kill(agent.pid, 'SIGKILL');
    await expect.poll(() => task(host)?.claim ?? null, { timeout: 10_000 }).toBeNull();
    await expect.poll(() => fs.existsSync(lock), { timeout: 20_000 }).toBe(false);
    await expect.poll(() => gitSync(folder, ['rev-parse', `refs/heads/${wt.branch}`]), { timeout: 10_000 }).toBe(record);
    expect(gitSync(folder, ['for-each-ref', '--format=%(objectname)', 'refs/forkbench/stray/'])).toContain(stray);
  }, 60_000);

  it('killed inside git with a job of it still running, the task taken by the next holder, its tab closed at once: its locks go, never the holder’s', async () => {
    const { host, folder } = await fx.host();
    await host.board.run((e) => e.addTask({ title: 'killed in git' }));
    // A git that holds the branch's lock (a ref transaction prepared, never committed; past the fence's hooks,
    // as an agent may run git) when the agent is killed, and a background job of the agent that outlives it by a few seconds (it ignores the hangup the
    // terminal sends when the agent's shell dies).
    const agent = await paneAgent(
      host,
      fx.tmp(),
      `${CLAIM_T1_AND_CD}
(trap '' HUP; exec sleep 3) &
next=$(git commit-tree -m "never lands" -p HEAD 'HEAD^{tree}')
( echo start; echo "update $(git symbolic-ref HEAD) $next"; echo prepare; exec sleep 60 ) | git -c core.hooksPath=/dev/null update-ref --stdin
exec sleep 600`,
    );
    await agent.until(/prepare: ok/);
    const wt = task(host)?.worktree as { path: string; branch: string };
    const branchLock = join(folder, '.git', 'refs', 'heads', `${wt.branch}.lock`);
    const locks = [branchLock];
    expect(locks.filter((l) => fs.existsSync(l))).toEqual(locks);
    // Every process of the agent but its background job, which keeps its process group alive for 3 s.
    const group = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number).filter((pid) => {
      try {
        return readProcStat(pid)?.pgrp === agent.pid && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') !== 'sleep\u00003\u0000';
      } catch {
        return false;
      }
    });
    for (const pid of group) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch (err) {
        // One that ended between the listing and its kill (a short-lived helper of the shell's) is gone already.
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
      }
    }
    await expect.poll(() => host.roster.agent(agent.id)?.status, { timeout: 10_000 }).toBe('exited');
    // The next holder takes the task while the dead agent's job still runs, before anything can be cleared.
    const b = await idleAgent(host);
    const c = await cliAs(host, b, ['claim', 'T-1']);
    expect(c.code).toBe(0);
    // The person relaunches the dead agent: its old tab is closed at once.
    await host.roster.relaunch(agent.id);
    expect(host.roster.agent(agent.id)).toBeUndefined();
    await expect.poll(() => locks.filter((l) => fs.existsSync(l)), { timeout: 10_000 }).toEqual([]);
    const mine = c.out.result.worktree.path as string;
    fs.writeFileSync(join(mine, 'notes.txt'), 'after the kill\n');
    const r = await sh(mine, 'git commit -qam after', agentEnv(host, b));
    expect(r.code, r.stderr).toBe(0);
  });

  it("a lock the next holder's git holds at the same path is its own: the dead agent's clearing leaves it", async () => {
    const { host, folder } = await fx.host();
    await host.board.run((e) => e.addTask({ title: 'lock taken again' }));
    // The dead agent's background job keeps its process group alive until the test has the next holder's lock
    // in place (a file the test makes): a job of a fixed 3 s ended before the next claim under load, and the
    // clearing then ran before the race this test is about.
    const go = join(fx.tmp(), 'go');
    const agent = await paneAgent(host, fx.tmp(), `${CLAIM_T1_AND_CD}\necho CLAIMED\n(trap '' HUP; while [ ! -e '${go}' ]; do sleep 0.1; done) &\nexec sleep 600`);
    await agent.until(/CLAIMED/);
    const wt = task(host)?.worktree as { path: string; branch: string };
    const branchLock = join(folder, '.git', 'refs', 'heads', `${wt.branch}.lock`);
    // A lock left by the agent's killed git, as git leaves it.
    fs.writeFileSync(branchLock, 'dead\n');
    process.kill(agent.pid, 'SIGKILL');
    await expect.poll(() => host.roster.agent(agent.id)?.status, { timeout: 10_000 }).toBe('exited');
    const b = await idleAgent(host);
    expect((await cliAs(host, b, ['claim', 'T-1'])).code).toBe(0);
    // The dead agent's lock went some other way meanwhile, and the holder's git made its own at that path.
    fs.rmSync(branchLock);
    fs.writeFileSync(branchLock, 'live\n');
    // Its background job ends now; the clearing runs then, and finds another file.
    fs.writeFileSync(go, '');
    await expect.poll(() => fs.readdirSync('/proc').includes(String(agent.pid)) || processGroupAlive(agent.pid), { timeout: 10_000 }).toBe(false);
    await new Promise((r) => setTimeout(r, 2 * 250 + 100)); // two lock retries after the group is gone
    expect(fs.readFileSync(branchLock, 'utf8')).toBe('live\n');
    fs.rmSync(branchLock);
  });
});


describe("9. a pane never gets the person's override, and an agent pushes only its task branch", () => {
  it('env -u FORKBENCH_SECRET FORKBENCH_PERSON=1 git commit in a pane is refused; git push origin HEAD:main is refused', async () => {
    // Uncontained: a remote on a local path lies outside a contained agent's folders (it pushes over the
    // network, where the same pre-push fence runs).
    const { host } = await fx.host({ uncontained: 'a push to a remote on a local path' });
    await host.board.run((e) => e.addTask({ title: 'override' }));
    const remote = join(fx.tmp(), 'remote.git');
    gitSync(fx.tmp(), ['init', '-q', '--bare', remote]);
    const agent = await paneAgent(
      host,
      fx.tmp(),
      `${CLAIM_T1_AND_CD}
echo x >> notes.txt
env -u FORKBENCH_SECRET FORKBENCH_PERSON=1 git commit -qam "pretends"; echo "PERSON-EXIT=$?"
git commit -qam "honest"; echo "HONEST-EXIT=$?"
git push -q '${remote}' HEAD:main; echo "PUSH-MAIN-EXIT=$?"
git push -q '${remote}' HEAD:refs/heads/${branchOf(host, 'T-1')}; echo "PUSH-OWN-EXIT=$?"
echo AGENT-DONE
exec sleep 600`,
    );
    await agent.until(/AGENT-DONE/);
    const out = agent.output();
    expect(out).toMatch(/PERSON-EXIT=[1-9]/);
    expect(out).toMatch(/runs inside the agent pane/);
    expect(out).toMatch(/HONEST-EXIT=0/);
    expect(out).toMatch(/PUSH-MAIN-EXIT=[1-9]/);
    expect(out).toContain(`an agent pushes only its task's branch (${branchOf(host, 'T-1')}), never refs/heads/main`);
    expect(out).toMatch(/PUSH-OWN-EXIT=0/);
    expect(gitSync(remote, ['branch', '--list', 'main'])).toBe('');
    expect(gitSync(remote, ['log', '-1', '--format=%s', branchOf(host, 'T-1')])).toBe('honest');
  });
});

describe('10. one CLI shim per install', () => {
  it('two installs sharing a runtime folder each keep a shim that runs their own CLI', async () => {
    const rt = fx.tmp();
    const [one, two] = [join(fx.tmp(), 'one.cjs'), join(fx.tmp(), 'two.cjs')];
    fs.writeFileSync(one, 'console.log("install one")\n');
    fs.writeFileSync(two, 'console.log("install two")\n');
    const binOne = ensureCliShim(rt, one);
    const binTwo = ensureCliShim(rt, two);
    expect(binOne).not.toBe(binTwo);
    expect(binOne).toBe(shimDirFor(rt, one));
    // the later start did not rewrite the earlier install's shim
    expect((await sh(rt, `'${join(binOne, 'forkbench')}'`)).stdout.trim()).toBe('install one');
    expect((await sh(rt, `'${join(binTwo, 'forkbench')}'`)).stdout.trim()).toBe('install two');
  });

  it("a Thread's agents get their host's shim on PATH", async () => {
    const { host } = await fx.host();
    const agent = await paneAgent(host, fx.tmp(), 'command -v forkbench; echo AGENT-DONE\nexec sleep 600');
    await agent.until(/AGENT-DONE/);
    expect(agent.output()).toMatch(/\/bin-[0-9a-f]{12}\/forkbench/);
  });
});
