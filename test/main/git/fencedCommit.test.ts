import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { agentEnv, branchOf, CLAIM_T1_AND_CD, claimedTask, cliAs, Fixture, gitSync, idleAgent, nextEvent, paneAgent, sh, strayOf } from '../../helpers/gitFixture.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';

// Its tests run git and the CLI as an agent from the test process, outside any pane (peerJudges.ts).
const fx = new Fixture({ peerJudge: secretsFromTheTestProcess });
beforeAll(() => ensureBuilt());
afterEach(() => fx.cleanup());

const claimed = (o: { leaseMs?: number } = {}) => claimedTask(fx, o);

/** The note `git log --notes=forkbench` shows on a commit, once the host has written the notes of every record so far. */
async function noteOf(host: ThreadHost, cwd: string, sha: string): Promise<string> {
  await host.worktrees.git?.idle();
  return gitSync(cwd, ['log', '-1', '--notes=forkbench', '--format=%N', sha]);
}
const pairOf = (token: number) => `Forkbench-Task: T-1\nForkbench-Token: ${token}`;

describe('commits fenced by the claim', () => {
  it('an accepted commit is noted with its task and token from the record (git notes), its message untouched, and renews the lease', async () => {
    const { host, a, token, wt } = await claimed();
    const before = host.board.state.tasks.get('T-1')?.claim?.deadline ?? 0;
    fs.writeFileSync(join(wt, 'notes.txt'), 'edited\n');
    const r = await sh(wt, 'git commit -qam "edit notes"', agentEnv(host, a));
    expect(r.code, r.stderr).toBe(0);
    const sha = gitSync(wt, ['rev-parse', 'HEAD']);
    expect(host.board.state.tasks.get('T-1')?.record).toMatchObject({ sha, token });
    expect(gitSync(wt, ['log', '-1', '--format=%B'])).toBe('edit notes');
    expect(await noteOf(host, wt, sha)).toBe(pairOf(token));
    // What a person types: `git log --notes=forkbench` shows the pair under the commit.
    expect(gitSync(wt, ['log', '-1', '--notes=forkbench'])).toMatch(new RegExp(`Notes \\(forkbench\\):\\n    Forkbench-Task: T-1\\n    Forkbench-Token: ${token}`));
    expect(host.board.state.tasks.get('T-1')?.claim?.deadline).toBeGreaterThan(before);
    // --amend: the new commit gets its own note, one pair; the message is still only what was written
    expect((await sh(wt, 'git commit -q --amend -m "edit notes again"', agentEnv(host, a))).code).toBe(0);
    const amended = gitSync(wt, ['rev-parse', 'HEAD']);
    expect(gitSync(wt, ['log', '-1', '--format=%B'])).toBe('edit notes again');
    expect(await noteOf(host, wt, amended)).toBe(pairOf(token));
  });

  it('a commit the board refused to record, or never heard of, gets no note', async () => {
    const { host, a, token, wt } = await claimed();
    fs.writeFileSync(join(wt, 'notes.txt'), 'submitted\n');
    expect((await sh(wt, 'git commit -qam submitted', agentEnv(host, a))).code).toBe(0);
    const frozen = gitSync(wt, ['rev-parse', 'HEAD']);
    expect((await cliAs(host, a, ['done', 'T-1', '--token', String(token)])).code).toBe(0);
    // A person's commit by hand lands (git is not stopped), but the task is in review: the board refuses it.
    fs.writeFileSync(join(wt, 'notes.txt'), 'by hand after done\n');
    const late = await sh(wt, 'FORKBENCH_PERSON=1 git commit -qam "by hand"');
    expect(late.code, late.stderr).toBe(0);
    expect(late.stderr).toMatch(/NOT RECORDED \(bad-state\)/);
    // The host moves it aside and puts the branch back at the record.
    const strays = () => gitSync(wt, ['for-each-ref', '--format=%(objectname)', strayOf(host, 'T-1')]);
    await expect.poll(strays, { timeout: 5000 }).not.toBe('');
    await expect.poll(() => gitSync(wt, ['rev-parse', branchOf(host, 'T-1')]), { timeout: 5000 }).toBe(frozen);
    const refused = strays();
    expect(gitSync(wt, ['log', '-1', '--format=%s', refused])).toBe('by hand');
    // And one git's fence never saw at all.
    fs.writeFileSync(join(wt, 'notes.txt'), 'hooks off\n');
    expect((await sh(wt, 'git -c core.hooksPath=/dev/null commit -qam unseen', agentEnv(host, a))).code).toBe(0);
    const unseen = gitSync(wt, ['rev-parse', 'HEAD']);
    expect(host.board.state.tasks.get('T-1')?.record?.sha).toBe(frozen);
    expect(await noteOf(host, wt, frozen)).toBe(pairOf(token));
    expect(await noteOf(host, wt, refused)).toBe('');
    expect(await noteOf(host, wt, unseen)).toBe('');
  });

  it('a lapsed holder cannot commit, even with --no-verify, and the branch does not move', async () => {
    // The shortest lease a Thread allows; liveness is off here, so nothing renews it.
    const { host, a, wt } = await claimed({ leaseMs: 2000 });
    await nextEvent(host, (e) => e.kind === 'claim-ended' && e.reason === 'lapsed');
    const head = gitSync(wt, ['rev-parse', 'HEAD']);
    fs.writeFileSync(join(wt, 'notes.txt'), 'too late\n');
    const r = await sh(wt, 'git commit -qam late', agentEnv(host, a));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/forkbench: refused \(lapsed\): your lease on T-1 lapsed/);
    const bypass = await sh(wt, 'git commit -q --no-verify -am late', agentEnv(host, a));
    expect(bypass.code).not.toBe(0);
    expect(bypass.stderr).toMatch(/refused \(lapsed\)/);
    expect(gitSync(wt, ['rev-parse', `refs/heads/${branchOf(host, 'T-1')}`])).toBe(head);
    const log = (await host.board.log()).filter((e) => e.kind === 'write-rejected' && e.op === 'fence');
    expect(log.length).toBeGreaterThanOrEqual(2);
  });

  it('a SIGSTOPped agent that resumes after its task was reassigned cannot commit or move the branch', async () => {
    const { host } = await fx.host();
    await host.board.run((e) => e.addTask({ title: 'contested' }));
    const { GIT_IDENTITY } = await import('../../helpers/gitFixture.js');
    Object.assign(process.env, GIT_IDENTITY); // the pane inherits the host's environment
    // A real agent process in a real pty: claims, commits once, then waits for a line before working on.
    const a = await paneAgent(
      host,
      fx.tmp(),
      `${CLAIM_T1_AND_CD}
echo first > notes.txt && git commit -qam first && echo COMMITTED-FIRST
read line
echo second > notes.txt
git commit -qam second; echo "COMMIT-EXIT=$?"
git commit -q --no-verify -am second; echo "NOVERIFY-EXIT=$?"
git reset -q --hard HEAD~1; echo "RESET-EXIT=$?"
git update-ref refs/heads/${branchOf(host, 'T-1')} HEAD~1; echo "UPDATEREF-EXIT=$?"
echo AGENT-FINISHED
exec sleep 600`,
    );
    const waitFor = (re: RegExp) => a.until(re);
    await waitFor(/COMMITTED-FIRST/);
    const wt = host.board.state.tasks.get('T-1')?.worktree?.path as string;
    const head = gitSync(wt, ['rev-parse', branchOf(host, 'T-1')]);
    process.kill(-a.pid, 'SIGSTOP');
    const b = await idleAgent(host);
    const moved = await host.board.run((e) => e.assign('T-1', b));
    expect(moved.ok).toBe(true);
    await host.worktrees.worktreeOf('T-1', moved.ok ? moved.value.token : 0);
    process.kill(-a.pid, 'SIGCONT');
    host.roster.relay.input(a.id, '\r');
    await waitFor(/AGENT-FINISHED/);
    expect(a.output()).toMatch(/forkbench: refused \(stale-token\): your claim on T-1 ended \(reassigned\)/);
    for (const step of ['COMMIT', 'NOVERIFY', 'RESET', 'UPDATEREF']) expect(a.output()).not.toMatch(new RegExp(`${step}-EXIT=0`));
    expect(gitSync(wt, ['rev-parse', branchOf(host, 'T-1')])).toBe(head);
    // the new holder commits in its own fresh folder under its own token
    const mine = host.board.state.tasks.get('T-1')?.worktree?.path as string;
    expect(mine).not.toBe(wt);
    const commit = await sh(mine, 'echo mine > notes.txt && git commit -qam "B takes over"', agentEnv(host, b));
    expect(commit.code, commit.stderr).toBe(0);
    expect(await noteOf(host, mine, gitSync(mine, ['rev-parse', 'HEAD']))).toBe(pairOf(moved.ok ? moved.value.token : 0));
  });

  it('fails closed: no agent environment, another agent, or an unreachable board', async () => {
    const { host, a, wt, folder } = await claimed();
    fs.writeFileSync(join(wt, 'notes.txt'), 'x\n');
    const person = await sh(wt, 'git commit -qam person');
    expect(person.code).not.toBe(0);
    expect(person.stderr).toMatch(/fenced by the Forkbench board.*FORKBENCH_PERSON=1/);
    const b = await idleAgent(host);
    const notMine = await sh(wt, 'git commit -qam other', agentEnv(host, b));
    expect(notMine.stderr).toMatch(/refused \(not-holder\): .* holds T-1; you do not/);
    // A person who says so commits by hand, unfenced, the message as written.
    const byHand = await sh(wt, 'FORKBENCH_PERSON=1 git commit -qam "by hand"');
    expect(byHand.code, byHand.stderr).toBe(0);
    expect(gitSync(wt, ['log', '-1', '--format=%B'])).toBe('by hand');
    // An agent does not move the base branch or another task's branch from its worktree.
    const base = gitSync(folder, ['rev-parse', 'main']);
    const push = await sh(wt, 'git update-ref refs/heads/main HEAD', agentEnv(host, a));
    expect(push.stderr).toMatch(/refs\/heads\/main is not the branch of T-1/);
    expect(gitSync(folder, ['rev-parse', 'main'])).toBe(base);
    const other = await sh(wt, `git branch ${branchOf(host, 'T-9')} HEAD`, agentEnv(host, a));
    expect(other.stderr).toContain(`refs/heads/${branchOf(host, 'T-9')} is not the branch of T-1`);
    const env = agentEnv(host, a);
    await host.dispose();
    fx.hosts.splice(0);
    fs.writeFileSync(join(wt, 'notes.txt'), 'y\n');
    const gone = await sh(wt, 'git commit -qam orphan', env);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toMatch(/cannot confirm your claim on T-1 .*fails closed/);
  });

  it("the repository's own hooks still run in a fenced worktree", async () => {
    const { host, folder } = await fx.host();
    const marker = join(fx.tmp(), 'their-hook-ran');
    fs.writeFileSync(join(folder, '.git', 'hooks', 'pre-commit'), `#!/bin/sh\necho ran > '${marker}'\n`, { mode: 0o755 });
    fs.writeFileSync(join(folder, '.git', 'hooks', 'commit-msg'), `#!/bin/sh\necho msg >> '${marker}'\n`, { mode: 0o755 });
    await host.board.run((e) => e.addTask({ title: 'hooks' }));
    const a = await idleAgent(host);
    const wt = (await cliAs(host, a, ['claim', 'T-1'])).out.result.worktree.path as string;
    fs.writeFileSync(join(wt, 'notes.txt'), 'z\n');
    const r = await sh(wt, 'git commit -qam hooked', agentEnv(host, a));
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(marker, 'utf8')).toBe('ran\nmsg\n');
    // and the user's own folder is not fenced
    fs.writeFileSync(join(folder, 'notes.txt'), 'person\n');
    expect((await sh(folder, 'git commit -qam "person in main"')).code).toBe(0);
  });
});

describe('messages are the agent\'s own, on every shape', () => {
  it('a subject-only message, an existing trailer block, an amend and an editor-written message are kept as written, and each recorded commit gets one note', async () => {
    const { host, a, token, wt } = await claimed();
    const env = agentEnv(host, a);
    const commit = async (cmd: string, extra: NodeJS.ProcessEnv = {}) => {
      fs.appendFileSync(join(wt, 'notes.txt'), 'x\n');
      const r = await sh(wt, cmd, { ...env, ...extra });
      expect(r.code, r.stderr).toBe(0);
      expect(await noteOf(host, wt, gitSync(wt, ['rev-parse', 'HEAD']))).toBe(pairOf(token));
      return gitSync(wt, ['log', '-1', '--format=%B']);
    };
    expect(await commit('git commit -qam "fix: parser"')).toBe('fix: parser');
    expect(await commit(`git commit -qa -m "feat: y" -m "Body text." -m "Co-authored-by: A <a@example.com>"`)).toBe(`feat: y\n\nBody text.\n\nCo-authored-by: A <a@example.com>`);
    expect(await commit('git commit -q --amend -m "fix: again"')).toBe('fix: again');
    const editor = join(fx.tmp(), 'editor.sh');
    fs.writeFileSync(editor, `#!/bin/sh\nprintf 'from the editor\\n' > "$1"\n`, { mode: 0o755 });
    expect(await commit('git commit -qa', { GIT_EDITOR: editor })).toBe('from the editor');
    // An editor left empty still aborts the commit.
    const empty = join(fx.tmp(), 'empty.sh');
    fs.writeFileSync(empty, '#!/bin/sh\n: > "$1"\n', { mode: 0o755 });
    fs.appendFileSync(join(wt, 'notes.txt'), 'y\n');
    const aborted = await sh(wt, 'git commit -qa', { ...env, GIT_EDITOR: empty });
    expect(aborted.code).not.toBe(0);
    expect(aborted.stderr).toMatch(/empty commit message/);
    // Every note is on a commit the board recorded: the amended-away commit keeps its note, nothing else has one.
    const noted = gitSync(wt, ['notes', '--ref=forkbench', 'list']).split('\n').map((l) => l.split(' ')[1]);
    expect(noted).toHaveLength(4);
    const recorded = (await host.board.log()).filter((e) => e.kind === 'branch-recorded' && e.record.token === token).map((e) => (e.kind === 'branch-recorded' ? e.record.sha : ''));
    expect(new Set(noted)).toEqual(new Set(recorded));
  });
});

describe('pushes are fenced too', () => {
  it('the holder pushes its branch; after its claim is released, its push is refused', async () => {
    const { host, a, token, wt } = await claimed();
    const remote = join(fx.tmp(), 'remote.git');
    gitSync(wt, ['init', '-q', '--bare', remote]);
    fs.writeFileSync(join(wt, 'notes.txt'), 'pushed\n');
    const env = agentEnv(host, a);
    expect((await sh(wt, `git commit -qam push && git push -q '${remote}' ${branchOf(host, 'T-1')}`, env)).code).toBe(0);
    expect(gitSync(remote, ['rev-parse', branchOf(host, 'T-1')])).toBe(gitSync(wt, ['rev-parse', 'HEAD']));
    expect((await cliAs(host, a, ['release', 'T-1', '--token', String(token)])).code).toBe(0);
    const r = await sh(wt, `git push -q '${remote}' HEAD:refs/heads/late`, env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/forkbench: refused \(stale-token\): your claim on T-1 ended \(released\) \(git push stopped\)/);
    expect(gitSync(remote, ['branch', '--list', 'late'])).toBe('');
  });
});
