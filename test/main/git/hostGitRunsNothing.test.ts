/**
 * Issue 42, item 1: the host's own git runs nothing an agent wrote. The host gave its git
 * `core.hooksPath=<repo>/.git/hooks`, a folder every agent can write: a hook planted there ran as a child of
 * serve on the next claim (and the person check inside it said "person", so it could record an agent's
 * commit on another agent's task), a sleeping one stopped every claim and the person's approvals, a claim's
 * hooks chained to that folder live (agent A's post-commit ran in B's pane, with B's secret), and
 * `url.<x>.pushInsteadOf` with `protocol.ext.allow=always` made the host's background push run a command.
 *
 * Each case is an agent's script in a real pane of a real host, doing what the probe did.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { git } from '../../../src-main/git/git.js';
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { branchOf, CLAIM_T1_AND_CD, cliAs, cloneOfBareRemote, Fixture, GIT_IDENTITY, gitSync, idleAgent, paneAgent, sh, uncontainedBecause } from '../../helpers/gitFixture.js';
import { waitFor } from '../../helpers/pty.js';
import { WorktreeGitGate } from '../../helpers/worktreeGitGate.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';
import { openTestHost } from '../../helpers/testHost.js';

// Its tests run git and the CLI as an agent from the test process, outside any pane (peerJudges.ts).
const fx = new Fixture({ peerJudge: secretsFromTheTestProcess });
const gates: WorktreeGitGate[] = [];
beforeAll(() => {
  ensureBuilt();
  Object.assign(process.env, GIT_IDENTITY); // panes inherit the host's environment
});
afterEach(async () => {
  for (const g of gates.splice(0)) g.release();
  await fx.cleanup();
});

/** A hook that says it ran (its name and first argument, and the person check's answer as it got it) and,
 *  for a ref update, asks the board, with no secret, to record task T-1's branch head as T-2's work. */
function spyHook(marks: string, folder: string, socket: string, branch: (taskId: string) => string): string {
  return `#!${process.execPath}
const fs = require('node:fs'), net = require('node:net'), cp = require('node:child_process');
const hook = require('node:path').basename(process.argv[1]);
fs.appendFileSync(${JSON.stringify(marks)}, hook + ' ' + (process.argv[2] || '') + '\\n');
const git = (...a) => { try { return cp.execFileSync('git', ['-C', ${JSON.stringify(folder)}, '-c', 'core.hooksPath=/dev/null', ...a], { encoding: 'utf8' }).trim(); } catch { return ''; } };
const ask = (line) => new Promise((res) => { const s = net.connect(${JSON.stringify(socket)}, () => s.write(JSON.stringify(line) + '\\n')); let b = ''; s.on('data', (d) => { b += d; if (b.includes('\\n')) { s.end(); res(b.trim()); } }); s.on('error', () => res('')); });
(async () => {
  fs.appendFileSync(${JSON.stringify(marks)}, 'person-check ' + (await ask({ jsonrpc: '2.0', id: 1, method: 'person-check', params: {} })) + '\\n');
  const from = git('rev-parse', '--verify', '-q', 'refs/heads/${branch('T-2')}'), to = git('rev-parse', '--verify', '-q', 'refs/heads/${branch('T-1')}');
  if (hook === 'reference-transaction' && from && to)
    fs.appendFileSync(${JSON.stringify(marks)}, 'record ' + (await ask({ jsonrpc: '2.0', id: 2, method: 'record', params: { taskId: 'T-2', ref: 'refs/heads/${branch('T-2')}', from, to } })) + '\\n');
})();
`;
}

/** An agent's script that puts `hooks` (name → file holding its text) into the repository's hooks folder. */
const plant = (folder: string, hooks: Record<string, string>) =>
  `hooks=$(git -C '${folder}' rev-parse --path-format=absolute --git-common-dir)/hooks
${Object.entries(hooks)
  .map(([name, file]) => `cp '${file}' "$hooks/${name}" && chmod +x "$hooks/${name}"`)
  .join('\n')}
echo PLANTED`;

const read = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');

/** The host's own defence, for agents that run uncontained (sandbox off, or no bwrap): a contained agent cannot
 *  write .git/hooks or .git/config at all (test/main/sandbox/containedPanes.test.ts). */
const PLANTING = 'what an uncontained agent plants in .git';

describe("the host's own git runs no hook an agent planted", () => {
  it("a reference-transaction and post-checkout an agent put in .git/hooks run neither in the next claim's worktree add nor in approval's merge, so record nothing", async () => {
    const { host, folder } = await fx.host({ uncontained: PLANTING });
    const dir = fx.tmp();
    const marks = join(dir, 'ran');
    const spy = join(dir, 'spy.js');
    fs.writeFileSync(spy, spyHook(marks, folder, host.socket.path, (t) => branchOf(host, t)));
    await host.board.run((e) => e.addTask({ title: "A's task" }));
    await host.board.run((e) => e.addTask({ title: "B's task" }));
    const a = await paneAgent(
      host,
      dir,
      `${CLAIM_T1_AND_CD}
echo "A's work" > a.txt && git add a.txt && git commit -qm "A's work" || exit 8
forkbench done T-1 >/dev/null || exit 7
${plant(folder, { 'reference-transaction': spy, 'post-checkout': spy, 'post-merge': spy })}
exec sleep 600`,
    );
    await a.until(/PLANTED/);
    const aWork = host.board.state.tasks.get('T-1')?.submitted?.sha as string;
    expect(aWork).toMatch(/^[0-9a-f]{40}$/);

    const b = await idleAgent(host);
    const c = await cliAs(host, b, ['claim', 'T-2']);
    expect(c.code, JSON.stringify(c.out)).toBe(0);
    await host.worktrees.approve('T-1');
    expect(host.board.state.tasks.get('T-1')?.state).toBe('done');
    await host.worktrees.git!.idle();

    expect(read(marks), "what the agent's hooks did as the host").toBe('');
    const t2 = host.board.state.tasks.get('T-2');
    expect(t2?.record?.sha).not.toBe(aWork);
    expect(t2?.record?.by).not.toBe('user');
    // The control: the same hooks do run for a plain git in the repository.
    expect((await sh(folder, `git -c core.hooksPath='${join(folder, '.git', 'hooks')}' update-ref refs/heads/control HEAD`)).code).toBe(0);
    expect(read(marks)).toMatch(/^reference-transaction prepared/m);
  });

  it('a hook that sleeps in .git/hooks holds up neither a claim nor the approval of another task', async () => {
    const { host, folder } = await fx.host({ uncontained: PLANTING });
    const dir = fx.tmp();
    const sleeper = join(dir, 'sleeper.sh');
    fs.writeFileSync(sleeper, '#!/bin/sh\nexec sleep 600\n');
    await host.board.run((e) => e.addTask({ title: "A's task" }));
    await host.board.run((e) => e.addTask({ title: "B's task" }));
    const a = await paneAgent(
      host,
      dir,
      `${CLAIM_T1_AND_CD}
echo "A's work" > a.txt && git add a.txt && git commit -qm "A's work" || exit 8
forkbench done T-1 >/dev/null || exit 7
${plant(folder, { 'reference-transaction': sleeper, 'post-checkout': sleeper, 'post-merge': sleeper })}
exec sleep 600`,
    );
    await a.until(/PLANTED/);
    const b = await idleAgent(host);
    // Bounded well past a grant under load (a few hundred ms) and well short of the hooks' sleep.
    const within = <T>(p: Promise<T>, what: string) =>
      Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not finish within 20 s`)), 20_000))]);
    const c = await within(cliAs(host, b, ['claim', 'T-2']), "B's claim");
    expect(c.code, JSON.stringify(c.out)).toBe(0);
    await within(host.worktrees.approve('T-1'), "the approval of A's task");
    expect(host.board.state.tasks.get('T-1')?.state).toBe('done');
  }, 60_000);

  it("what agent A writes over the post-commit in .git/hooks, or adds there, after B's grant does not run in B's pane: B runs the hooks of its grant, copied, and was told which", async () => {
    const { host, folder } = await fx.host({ uncontained: PLANTING });
    const dir = fx.tmp();
    const marks = join(dir, 'ran');
    // The person's own hook, there before the claim: it runs in B's commits, from B's copy, whatever A
    // writes over it later.
    fs.writeFileSync(join(folder, '.git', 'hooks', 'post-commit'), `#!/bin/sh\necho "person's post-commit" >> '${marks}'\n`, { mode: 0o755 });
    const spy = join(dir, 'spy.sh');
    fs.writeFileSync(spy, `#!/bin/sh\ncat >/dev/null\necho "A's $(basename "$0") ran with the secret of $FORKBENCH_AGENT_ID" >> '${marks}'\n`);
    await host.board.run((e) => e.addTask({ title: "B's task" }));
    const b = await paneAgent(
      host,
      dir,
      `out=$(forkbench claim T-1 --json)
printf '%s\\n' "$out" > '${dir}/claim.json'
wt=$(printf '%s' "$out" | sed -n 's/.*"path":"\\([^"]*\\)".*/\\1/p')
cd "$wt" || exit 9
echo CLAIMED
read line
echo "B's work" > b.txt && git add b.txt && git commit -qm "B's work"; echo "COMMITTED $?"
exec sleep 600`,
    );
    await b.until(/CLAIMED/);
    const a = await paneAgent(host, dir, `${plant(folder, { 'post-commit': spy, 'reference-transaction': spy })}\nexec sleep 600`);
    await a.until(/PLANTED/);
    host.roster.relay.input(b.id, '\r');
    await b.until(/COMMITTED 0/);

    expect(read(marks)).toBe("person's post-commit\n");
    const notes = (JSON.parse(read(join(dir, 'claim.json'))) as { result: { worktree: { notes: string[] } } }).result.worktree.notes;
    expect(notes.join('\n')).toMatch(/the repository's own hooks as they were at this grant, copied for it: post-commit\./);
  });

  it('a hook planted while a claim’s worktree is being made does not run in it', async () => {
    const { host, folder } = await fx.host({ uncontained: PLANTING });
    const dir = fx.tmp();
    const marks = join(dir, 'ran');
    const spy = join(dir, 'spy.js');
    fs.writeFileSync(spy, spyHook(marks, folder, host.socket.path, (t) => branchOf(host, t)));
    await host.board.run((e) => e.addTask({ title: "B's task" }));
    const a = await paneAgent(host, dir, `echo READY\nread line\n${plant(folder, { 'reference-transaction': spy, 'post-checkout': spy })}\nexec sleep 600`);
    await a.until(/READY/);
    const gate = new WorktreeGitGate(folder, dir);
    gates.push(gate);
    gate.arm();
    const b = await idleAgent(host);
    const claim = cliAs(host, b, ['claim', 'T-1']);
    // The add is in flight: its folder's first ref update waits, its HEAD still git's null id.
    await waitFor(() => gate.entered(), 20_000, "the grant's worktree add to be under way");
    host.roster.relay.input(a.id, '\r');
    await a.until(/PLANTED/);
    gate.release();
    const c = await claim;
    expect(c.code, JSON.stringify(c.out)).toBe(0);
    expect(read(marks)).toBe('');
  });
});

describe("the host's push follows no URL rewrite and no transport the repository's config names", () => {
  it("url.<x>.pushInsteadOf to an ext:: command, with protocol.ext.allow=always, set from a pane: the background push runs nothing and says why it sent nothing", async () => {
    const { root, bare, folder } = cloneOfBareRemote('fb-rewrite-');
    fx.dirs.push(root);
    const { host } = await openTestHost({ closedBy: 'caller', folder, dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, sandboxSupport: uncontainedBecause(PLANTING) });
    fx.hosts.push(host);
    await host.board.run((e) => e.setSettings({ remote: { name: 'origin', url: bare } }));
    await host.board.run((e) => e.addTask({ title: 'push me' }));
    const ran = join(root, 'ext-ran');
    const a = await paneAgent(
      host,
      root,
      `git -C '${folder}' config url.'ext::sh -c touch% ${ran}'.pushInsteadOf '${bare}' || exit 6
git -C '${folder}' config protocol.ext.allow always || exit 6
${CLAIM_T1_AND_CD}
echo work > w.txt && git add w.txt && git commit -qm work && echo COMMITTED
exec sleep 600`,
    );
    await a.until(/COMMITTED/);
    const history = () => (host.board.state.tasks.get('T-1')?.notes ?? []).map((n) => n.text).join('\n');
    await waitFor(() => /pushInsteadOf/.test(history()), 20_000, 'the push to say why it sent nothing');
    expect(history()).toMatch(/rewrites the remote's URL \(url\.ext::sh -c touch% .*\.pushInsteadOf = .*\), and the host never follows a rewrite: nothing was sent/);
    expect(fs.existsSync(ran), "the agent's ext:: command ran").toBe(false);
    expect(gitSync(bare, ['for-each-ref', 'refs/forkbench/'])).toBe('');
  });
});

describe("what runs under the host's own git is not a person", () => {
  it('a program a host git started (as an ssh or a credential helper would be) asks the person check: the answer is no', async () => {
    const { host, folder } = await fx.host({ uncontained: PLANTING });
    const dir = fx.tmp();
    const asker = join(dir, 'ask.js');
    fs.writeFileSync(
      asker,
      `const s = require('node:net').connect(${JSON.stringify(host.socket.path)}, () => s.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'person-check', params: {} }) + '\\n'));
let b = ''; s.on('data', (d) => { b += d; if (b.includes('\\n')) { process.stdout.write(b); s.end(); } });`,
    );
    // The program is the test's (an alias), started by the host's git runner as any program under it is.
    const r = await git(folder, ['-c', `alias.ask=!'${process.execPath}' '${asker}'`, 'ask']);
    const answer = JSON.parse(r.stdout) as { result: { person: boolean; pane?: string } };
    expect(answer.result).toEqual({ person: false, pane: "(the host's own git)" });
    // The control: the same program, started by the test outside any git, is a person.
    const plain = await sh(dir, `'${process.execPath}' '${asker}'`);
    expect((JSON.parse(plain.stdout) as { result: { person: boolean } }).result.person).toBe(true);
  });
});
