/**
 * Issue 33, approval on any host: two ThreadHosts (two machines' hosts, each with its own clone of one bare
 * remote, its own data and runtime folders) on one PostgreSQL board whose settings name the remote. A task
 * committed by an agent on host A is approved on host B: B fetches exactly the frozen sha, merges it onto the
 * remote's base head and pushes the merge there as a compare-and-swap; the board approves only once it landed.
 * The person's own branches are never moved: their clone's remote-tracking ref follows, and they get a notice.
 * Before, B merged into its own clone's main (which lacked A's commit: the merge failed, or landed only there)
 * and pushed nothing.
 *
 * The work reaches the remote as it does in use: the host that recorded each commit pushes it to
 * refs/forkbench/tasks/<board>/T-n in the background, and the board says when it landed (`hostPushed`).
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RemoteMergeConstants } from '../../../src-main/git/taskReview.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { agentEnv, branchOf, cliAs, gitSync, idleAgent, remoteRefOf, sh } from '../../helpers/gitFixture.js';
import { ClonesOnOneBoard, hostPushed, workedOn as workedOnBy, type Machine } from '../../helpers/clonesOnOneBoard.js';
import { startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';
import { waitFor } from '../../helpers/pty.js';

let pgc: PgCluster;
let url: string;
/** Clones of one bare remote on the shared board, as machines (clonesOnOneBoard.ts). */
const clones = new ClonesOnOneBoard(() => url);

beforeAll(async () => {
  ensureBuilt();
  pgc = await startPgCluster({ fsync: false });
  url = await pgc.createDatabase('approve');
  // A private PostgreSQL's initdb and start take seconds, and far longer on a loaded machine (load 12 on 2 cores seen).
}, 180_000);
afterAll(() => pgc?.dispose());
afterEach(() => clones.dispose());

/** Two machines on one board that names the bare remote. */
async function twoMachines() {
  const r = await clones.two();
  // The first clone to open the shared board made its remote the board's; the second joined it.
  expect(r.a.host.board.state.settings.remote).toEqual(r.remote);
  return r;
}

/** A task worked on by a real agent on machine `m` (clonesOnOneBoard.ts): its frozen sha. */
const workedOn = async (m: Machine, taskId: string, files: Record<string, string>): Promise<string> => (await workedOnBy(m, taskId, files, await idleAgent(m.host))).sha;

const remoteMain = (bare: string) => gitSync(bare, ['rev-parse', 'refs/heads/main']);
const notesOf = (m: Machine, taskId: string) => (m.host.board.state.tasks.get(taskId)?.notes ?? []).map((n) => n.text);
const stateOf = (m: Machine, taskId: string) => m.host.board.state.tasks.get(taskId)?.state;

/** A pre-receive hook on the bare remote (the remote's own rules: a protected branch, a push landing meanwhile). */
function preReceive(bare: string, script: string): void {
  fs.writeFileSync(join(bare, 'hooks', 'pre-receive'), `#!/bin/sh\n${script}\n`, { mode: 0o755 });
}

/**
 * A person's own clone with a commit of `files` on main, pushed from inside the remote's pre-receive hook the
 * first time main is pushed to: after Forkbench fetched main and merged on it, before its push lands (the
 * remote then refuses Forkbench's update: main is no longer where its lease said).
 */
function personPushesInFlight(bare: string, root: string, files: Record<string, string>): { sha: string; marker: string } {
  const person = join(root, 'person');
  gitSync(root, ['clone', '-q', `file://${bare}`, person]);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(join(person, name), text);
  gitSync(person, ['add', '-A']);
  gitSync(person, ['commit', '-q', '-m', 'the person’s commit']);
  const marker = join(root, 'person-pushed');
  preReceive(
    bare,
    `while read old new ref; do
  if [ "$ref" = refs/heads/main ] && [ ! -e '${marker}' ]; then
    touch '${marker}'
    env -i PATH="$PATH" HOME="$HOME" git -C '${person}' -c core.hooksPath=/dev/null push -q origin HEAD:main >&2 || exit 1
  fi
done
exit 0`,
  );
  return { sha: gitSync(person, ['rev-parse', 'HEAD']), marker };
}

describe('approval on any host of a board with a remote', () => {
  it('B approves work committed on A: the frozen sha is fetched, merged onto the remote’s main and pushed; nobody’s branch is moved, each person is told', async () => {
    const { bare, root, a, b } = await twoMachines();
    // A's pushes to the namespace are held in flight by the remote until the test lets them go.
    const hold = join(root, 'hold-pushes');
    fs.writeFileSync(hold, '');
    preReceive(bare, `while read old new ref; do case "$ref" in refs/forkbench/tasks/*) while [ -e '${hold}' ]; do sleep 0.05; done;; esac; done\nexit 0`);
    await a.host.board.run((e) => e.addTask({ title: 'change notes' }));
    const sha = await workedOn(a, 'T-1', { 'notes.txt': 'line one\nline two\n' });
    const wtA = a.host.board.state.tasks.get('T-1')?.worktree?.path as string;
    await waitFor(() => b.host.board.state.tasks.get('T-1')?.state === 'review', 10_000, 'B to see T-1 in review');
    const before = remoteMain(bare);
    const bMainBefore = gitSync(b.folder, ['rev-parse', 'main']);

    // Not on the remote yet (A's push is still held in flight): B cannot show the work, so it refuses to approve
    // it (issue 45), saying why; nothing is merged, pushed or written, and the task stays in review.
    expect((await sh(b.folder, `git cat-file -e ${sha}^{commit}`)).code).not.toBe(0);
    const notesBefore = notesOf(b, 'T-1');
    await expect(b.host.worktrees.approve('T-1')).rejects.toMatchObject({
      code: 'work-elsewhere',
      message: expect.stringMatching(new RegExp(String.raw`not in this clone.*origin does not have it under ${remoteRefOf(b.host, 'T-1')}.*has not pushed it yet, or it was lost with that host.*T-1 stays in review`)),
    });
    expect(stateOf(b, 'T-1')).toBe('review');
    expect(b.host.board.state.tasks.get('T-1')?.queued ?? null).toBeNull();
    expect(remoteMain(bare)).toBe(before);
    expect(notesOf(b, 'T-1')).toEqual(notesBefore);

    fs.rmSync(hold);
    await hostPushed(a, bare, 'T-1', sha);
    await b.host.worktrees.approve('T-1');
    expect(stateOf(b, 'T-1')).toBe('done');
    // The remote's main is the merge of exactly the frozen sha onto the main it had.
    const merged = remoteMain(bare);
    expect(gitSync(bare, ['rev-parse', 'main^1'])).toBe(before);
    expect(gitSync(bare, ['rev-parse', 'main^2'])).toBe(sha);
    expect(gitSync(bare, ['show', 'main:notes.txt'])).toBe('line one\nline two');
    expect(gitSync(bare, ['log', '-1', '--format=%B', 'main'])).toMatch(new RegExp(String.raw`^Merge ${branchOf(b.host, 'T-1')}: change notes[\s\S]*Forkbench-Token: \d+`));
    // B's person: main not moved, files untouched, origin/main follows, and a notice naming the new sha.
    expect(gitSync(b.folder, ['rev-parse', 'main'])).toBe(bMainBefore);
    expect(fs.readFileSync(join(b.folder, 'notes.txt'), 'utf8')).toBe('line one\n');
    expect(gitSync(b.folder, ['rev-parse', 'refs/remotes/origin/main'])).toBe(merged);
    expect(notesOf(b, 'T-1')).toContainEqual(expect.stringMatching(new RegExp(`^Merged ${branchOf(b.host, 'T-1')} into main on origin as ${merged.slice(0, 10)}, pushed over ${before.slice(0, 10)}\\. main in each clone is not moved: git pull there to get it\\.$`)));
    const told = await waitFor(() => b.host.notices.current().find((n) => n.about.endsWith(':main')), 10_000, 'B’s notice');
    expect(told.body).toBe(`main on origin is now ${merged.slice(0, 7)} (T-1 "change notes" merged): git pull to get it. Your main here was not moved.`);
    // A's person too (A fetched after the approval): and A removed the folder it made, which B left alone.
    const toldA = await waitFor(() => a.host.notices.current().find((n) => n.about.endsWith(':main')), 20_000, 'A’s notice');
    expect(toldA.title).toBe(`main on origin is now ${merged.slice(0, 7)}`);
    expect(gitSync(a.folder, ['rev-parse', 'refs/remotes/origin/main'])).toBe(merged);
    await waitFor(() => !fs.existsSync(wtA) && a.host.board.state.tasks.get('T-1')?.worktree === null, 20_000, 'A to remove its own folder');
    expect(gitSync(a.folder, ['branch', '--list', 'forkbench/*'])).toBe('');
    // The task's copy in the remote's namespace has served.
    expect(gitSync(bare, ['for-each-ref', 'refs/forkbench/'])).toBe('');
    // The person pulls and has it.
    gitSync(b.folder, ['pull', '-q', '--ff-only']);
    expect(fs.readFileSync(join(b.folder, 'notes.txt'), 'utf8')).toBe('line one\nline two\n');
  }, 120_000);

  it('a first claim starts from the remote’s main as fetched then: a person’s push there is in it, this clone’s main is not moved; unreachable, from what it last fetched, saying so', async () => {
    const { bare, root, a } = await twoMachines();
    // A person pushes to main from a clone of their own, outside Forkbench: A's clone knows nothing of it.
    const person = join(root, 'person');
    gitSync(root, ['clone', '-q', `file://${bare}`, person]);
    fs.writeFileSync(join(person, 'readme.txt'), 'by the person\n');
    gitSync(person, ['add', '-A']);
    gitSync(person, ['commit', '-q', '-m', 'the person’s commit']);
    gitSync(person, ['push', '-q', 'origin', 'HEAD:main']);
    const theirs = remoteMain(bare);
    const aMain = gitSync(a.folder, ['rev-parse', 'main']);
    expect(aMain).not.toBe(theirs);

    await a.host.board.run((e) => e.addTask({ title: 'after the person' }));
    const agent = await idleAgent(a.host);
    const c = await cliAs(a.host, agent, ['claim', 'T-1']);
    expect(c.code, JSON.stringify(c.out)).toBe(0);
    const wt = (c.out.result as { worktree: { path: string } }).worktree.path;
    expect(gitSync(wt, ['rev-parse', 'HEAD'])).toBe(theirs);
    expect(fs.readFileSync(join(wt, 'readme.txt'), 'utf8')).toBe('by the person\n');
    expect(a.host.board.state.tasks.get('T-1')?.worktree?.baseCommit).toBe(theirs);
    expect(a.host.board.state.tasks.get('T-1')?.record?.sha).toBe(theirs);
    expect(gitSync(a.folder, ['rev-parse', 'main'])).toBe(aMain);

    // The remote away, and main moved there meanwhile: the next first claim starts from what A last fetched.
    fs.writeFileSync(join(person, 'readme.txt'), 'by the person, again\n');
    gitSync(person, ['commit', '-q', '-am', 'again']);
    gitSync(person, ['push', '-q', 'origin', 'HEAD:main']);
    fs.renameSync(bare, `${bare}.away`);
    await a.host.board.run((e) => e.addTask({ title: 'while the remote is away' }));
    const c2 = await cliAs(a.host, agent, ['claim', 'T-2']);
    expect(c2.code, JSON.stringify(c2.out)).toBe(0);
    const wt2 = (c2.out.result as { worktree: { path: string } }).worktree.path;
    expect(gitSync(wt2, ['rev-parse', 'HEAD'])).toBe(theirs);
    expect(notesOf(a, 'T-2')).toContainEqual(expect.stringMatching(/^The remote's main could not be fetched \(.+\): T-2 starts from main as this clone last fetched it, at [0-9a-f]{10}; work approved since on other hosts is not in it\.$/));
    fs.renameSync(`${bare}.away`, bare);
  }, 120_000);

  it('two hosts approving two tasks at once: both land on the remote’s main, one after the other', async () => {
    const { bare, root, a, b } = await twoMachines();
    await a.host.board.run((e) => e.addTask({ title: 'on a' }));
    await a.host.board.run((e) => e.addTask({ title: 'on b' }));
    await waitFor(() => b.host.board.state.tasks.get('T-2'), 10_000, 'B to see T-2');
    const shaA = await workedOn(a, 'T-1', { 'notes.txt': 'line one\nfrom a\n' });
    const shaB = await workedOn(b, 'T-2', { 'other.txt': 'other\nfrom b\n' });
    await hostPushed(a, bare, 'T-1', shaA);
    await hostPushed(b, bare, 'T-2', shaB);
    await waitFor(() => stateOf(a, 'T-2') === 'review' && stateOf(b, 'T-1') === 'review', 10_000, 'both to see both in review');
    // The race made certain: the remote holds the first push to main until the second arrives, so both were
    // made on the same main (neither can land before the other fetched), and both are taken at once.
    const barrier = join(root, 'arrived');
    fs.mkdirSync(barrier);
    preReceive(
      bare,
      `while read old new ref; do
  if [ "$ref" = refs/heads/main ]; then
    touch '${barrier}/'$$
    i=0
    while [ $(ls '${barrier}' | wc -l) -lt 2 ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
  fi
done
exit 0`,
    );
    const before = remoteMain(bare);
    const results = await Promise.allSettled([a.host.worktrees.approve('T-1'), b.host.worktrees.approve('T-2')]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    await waitFor(() => stateOf(a, 'T-2') === 'done' && stateOf(b, 'T-1') === 'done', 10_000, 'both approved everywhere');
    // Both merges on the remote's main, one on top of the other, neither lost.
    const merges = gitSync(bare, ['rev-list', '--merges', `${before}..main`]).split('\n');
    expect(merges).toHaveLength(2);
    expect(gitSync(bare, ['rev-list', '--first-parent', `${before}..main`]).split('\n')).toEqual(merges);
    for (const sha of [shaA, shaB]) expect((await sh(bare, `git merge-base --is-ancestor ${sha} main`)).code).toBe(0);
    expect(gitSync(bare, ['show', 'main:notes.txt'])).toBe('line one\nfrom a');
    expect(gitSync(bare, ['show', 'main:other.txt'])).toBe('other\nfrom b');
    // The later one was merged again on the new head: its note says it had to.
    const all = [...notesOf(a, 'T-1'), ...notesOf(b, 'T-2')].filter((n) => n.startsWith('Merged '));
    expect(all).toHaveLength(2);
    expect(all.filter((n) => n.includes('(main had moved there meanwhile: merged again on its new head, 1 retry)'))).toHaveLength(1);
    expect(fs.readdirSync(barrier)).toHaveLength(3);
  }, 120_000);

  it('a person pushes to main while the merge is being pushed: the compare-and-swap loses, the merge is made again on their commit, nothing is lost', async () => {
    const { bare, root, a, b } = await twoMachines();
    await a.host.board.run((e) => e.addTask({ title: 'change notes' }));
    const sha = await workedOn(a, 'T-1', { 'notes.txt': 'line one\nline two\n' });
    await hostPushed(a, bare, 'T-1', sha);
    const before = remoteMain(bare);
    const person = personPushesInFlight(bare, root, { 'readme.txt': 'by the person\n' });
    await b.host.worktrees.approve('T-1');
    expect(fs.existsSync(person.marker)).toBe(true);
    expect(stateOf(b, 'T-1')).toBe('done');
    // The person's commit is main's first parent: the merge was made again on it, not over it.
    expect(gitSync(bare, ['rev-parse', 'main^1'])).toBe(person.sha);
    expect(gitSync(bare, ['rev-parse', 'main^1^'])).toBe(before);
    expect(gitSync(bare, ['rev-parse', 'main^2'])).toBe(sha);
    expect(gitSync(bare, ['show', 'main:readme.txt'])).toBe('by the person');
    expect(gitSync(bare, ['show', 'main:notes.txt'])).toBe('line one\nline two');
    expect(notesOf(b, 'T-1')).toContainEqual(expect.stringMatching(new RegExp(String.raw`^Merged ${branchOf(b.host, 'T-1')} into main on origin as [0-9a-f]{10}, pushed over [0-9a-f]{10} \(main had moved there meanwhile: merged again on its new head, 1 retry\)\.`)));
  }, 120_000);

  it('a person’s push landing mid-push conflicts with the work: nothing is pushed over it, the task goes back to its agent with the files (merge queue)', async () => {
    const { bare, root, a, b } = await twoMachines();
    await a.host.board.run((e) => e.addTask({ title: 'change notes' }));
    const sha = await workedOn(a, 'T-1', { 'notes.txt': 'line one\nline two\n' });
    await hostPushed(a, bare, 'T-1', sha);
    const person = personPushesInFlight(bare, root, { 'notes.txt': 'line one\nthe person’s line\n' });
    await expect(b.host.worktrees.approve('T-1')).rejects.toThrow(/does not merge cleanly into origin\/main: conflicts in notes\.txt/);
    expect(fs.existsSync(person.marker)).toBe(true);
    // Issue 34: the merge queue sends a conflict back to the agent (its claim, or the backlog) with the files.
    expect(b.host.board.state.tasks.get('T-1')).toMatchObject({ queued: null, sentBack: { by: 'forkbench' } });
    expect(stateOf(b, 'T-1')).not.toBe('review');
    // The remote's main is the person's commit, untouched; the work is still on the remote for a later merge.
    expect(remoteMain(bare)).toBe(person.sha);
    expect(gitSync(bare, ['rev-parse', remoteRefOf(b.host, 'T-1')])).toBe(sha);
    expect(notesOf(b, 'T-1').at(-1)).toMatch(new RegExp(String.raw`^Review: Merge queue: ${branchOf(b.host, 'T-1')} does not merge cleanly into origin\/main: conflicts in notes\.txt\. origin\/main is untouched\.`));
  }, 120_000);

  it('main moved by a person under every try: after RemoteMergeConstants.maxPushTries merges nothing is pushed, the task stays in review with a note', async () => {
    const { bare, root, a, b } = await twoMachines();
    await a.host.board.run((e) => e.addTask({ title: 'change notes' }));
    const sha = await workedOn(a, 'T-1', { 'notes.txt': 'line one\nline two\n' });
    await hostPushed(a, bare, 'T-1', sha);
    // Each push of Forkbench's to main: the person commits and pushes first (their own push passes the hook).
    const person = join(root, 'person');
    gitSync(root, ['clone', '-q', `file://${bare}`, person]);
    preReceive(
      bare,
      `[ -n "$PERSON_PUSH" ] && exit 0
while read old new ref; do
  if [ "$ref" = refs/heads/main ]; then
    env -i PATH="$PATH" HOME="$HOME" PERSON_PUSH=1 GIT_AUTHOR_NAME=p GIT_AUTHOR_EMAIL=p@x GIT_COMMITTER_NAME=p GIT_COMMITTER_EMAIL=p@x sh -c "git -C '${person}' pull -q --ff-only && git -C '${person}' commit -q --allow-empty -m again && git -C '${person}' -c core.hooksPath=/dev/null push -q origin HEAD:main" >&2 || exit 1
  fi
done
exit 0`,
    );
    await expect(b.host.worktrees.approve('T-1')).rejects.toThrow(new RegExp(`main on origin moved under each of ${RemoteMergeConstants.maxPushTries} merges`));
    expect(stateOf(b, 'T-1')).toBe('review');
    // main holds the person's commits only, one per try: no merge of Forkbench's landed.
    expect(gitSync(bare, ['rev-list', '--merges', 'main'])).toBe('');
    expect(gitSync(bare, ['rev-list', '--count', 'main'])).toBe(String(1 + RemoteMergeConstants.maxPushTries));
    expect(notesOf(b, 'T-1').at(-1)).toMatch(/^Not merged: main on origin moved under each of \d+ merges .*nothing was pushed and T-1 stays in review\. Approve again\.$/);
  }, 120_000);

  it('a protected main (the remote’s hook refuses it): one note quoting the remote, the task stays in review, the remote is unchanged', async () => {
    const { bare, a, b } = await twoMachines();
    await a.host.board.run((e) => e.addTask({ title: 'change notes' }));
    const sha = await workedOn(a, 'T-1', { 'notes.txt': 'line one\nline two\n' });
    await hostPushed(a, bare, 'T-1', sha);
    preReceive(
      bare,
      `while read old new ref; do
  if [ "$ref" = refs/heads/main ]; then echo "main is protected: open a pull request" >&2; exit 1; fi
done
exit 0`,
    );
    const before = remoteMain(bare);
    const notesBefore = notesOf(b, 'T-1').length;
    await expect(b.host.worktrees.approve('T-1')).rejects.toThrow(/origin refused the push of the merge into main/);
    expect(stateOf(b, 'T-1')).toBe('review');
    expect(remoteMain(bare)).toBe(before);
    expect(gitSync(bare, ['rev-parse', remoteRefOf(b.host, 'T-1')])).toBe(sha);
    const added = notesOf(b, 'T-1').slice(notesBefore);
    expect(added).toHaveLength(1);
    expect(added[0]).toMatch(/^Not merged: origin refused the push of the merge into main: .*main is protected: open a pull request.*Nothing changed there; T-1 stays in review\.$/s);
    expect(b.host.notices.current().filter((n) => n.about.startsWith('base:'))).toEqual([]);
  }, 120_000);

  it('approved on a host that has not yet heard of the done (a shared board lags): the work lands through the queue, never approved unmerged', async () => {
    const { bare, a, b } = await twoMachines();
    await a.host.board.run((e) => e.addTask({ title: 'change notes' }));
    const agent = await idleAgent(a.host);
    const c = await cliAs(a.host, agent, ['claim', 'T-1']);
    expect(c.code, JSON.stringify(c.out)).toBe(0);
    const { token, worktree } = c.out.result as { token: number; worktree: { path: string } };
    fs.writeFileSync(join(worktree.path, 'notes.txt'), 'line one\nline two\n');
    const commit = await sh(worktree.path, 'git add -A && git commit -qm "work on T-1"', agentEnv(a.host, agent));
    expect(commit.code, commit.stderr).toBe(0);
    const sha = gitSync(worktree.path, ['rev-parse', 'HEAD']);
    // B lands from the remote: the commit is there (A pushed it) and B knows of it before the done.
    await hostPushed(a, bare, 'T-1', sha);
    await waitFor(() => b.host.board.state.tasks.get('T-1')?.pushed?.sha === sha, 10_000, 'B to see the commit pushed');
    // The done, decided on A, and at once the person's approval on B: B hears of the done by the database's
    // NOTIFY, which no socket has delivered yet, so B's own view still says claimed.
    expect((await a.host.board.run((e) => e.done(agent, 'T-1', token))).ok).toBe(true);
    expect(stateOf(b, 'T-1')).toBe('claimed');
    await b.host.worktrees.approve('T-1');
    expect(stateOf(b, 'T-1')).toBe('done');
    expect(gitSync(bare, ['rev-parse', 'main^2'])).toBe(sha);
  }, 120_000);
  it('the remote unreachable: a note, the task stays in review; once it is back, approval lands', async () => {
    const { bare, a, b } = await twoMachines();
    await a.host.board.run((e) => e.addTask({ title: 'change notes' }));
    const sha = await workedOn(a, 'T-1', { 'notes.txt': 'line one\nline two\n' });
    await hostPushed(a, bare, 'T-1', sha);
    // The person on B looked at the work (its Diff fetched A's commit) before the remote went away.
    expect((await b.host.worktrees.require().review.diff('T-1')).head).toBe(sha);
    const before = remoteMain(bare);
    const away = `${bare}.away`;
    fs.renameSync(bare, away);
    await expect(b.host.worktrees.approve('T-1')).rejects.toThrow(/could not fetch main from origin/);
    expect(stateOf(b, 'T-1')).toBe('review');
    expect(notesOf(b, 'T-1').at(-1)).toMatch(/^Not merged: could not fetch main from origin: .*Nothing was merged or pushed; T-1 stays in review\.$/s);
    fs.renameSync(away, bare);
    expect(remoteMain(bare)).toBe(before);
    await b.host.worktrees.approve('T-1');
    expect(stateOf(b, 'T-1')).toBe('done');
    expect(gitSync(bare, ['rev-parse', 'main^2'])).toBe(sha);
  }, 120_000);
  it('a remote whose URL carries a password: what the note quotes of git names the URL without it', async () => {
    const { bare, a, b } = await twoMachines();
    await a.host.board.run((e) => e.addTask({ title: 'change notes' }));
    const sha = await workedOn(a, 'T-1', { 'notes.txt': 'line one\nline two\n' });
    // B's person looked at the work (its Diff fetched A's commit); T-2, also A's, they have not.
    await hostPushed(a, bare, 'T-1', sha);
    expect((await b.host.worktrees.require().review.diff('T-1')).head).toBe(sha);
    await a.host.board.run((e) => e.addTask({ title: 'change other' }));
    await workedOn(a, 'T-2', { 'other.txt': 'other two\n' });
    await waitFor(() => stateOf(b, 'T-2') === 'review', 10_000, 'B to see T-2 in review');
    // Nothing listens on port 1: the connection is refused at once, with the URL in git's words.
    gitSync(b.folder, ['remote', 'set-url', 'origin', 'https://person:sekret@127.0.0.1:1/repo.git']);
    await b.host.board.run((e) => e.setSettings({ remote: { name: 'origin', url: 'https://127.0.0.1:1/repo.git' } }));
    // Where T-2's work is, as B's Diff says it, quotes git's words of the remote without the password too.
    const where = (await b.host.worktrees.require().review.diff('T-2')).elsewhere;
    expect(where?.why).toBe('unreachable');
    expect(where?.message).toMatch(/could not be reached from this host to fetch it \(.*127\.0\.0\.1.*\)/);
    expect(where?.message).not.toContain('sekret');
    await expect(b.host.worktrees.approve('T-1')).rejects.toThrow(/could not fetch main from origin/);
    expect(stateOf(b, 'T-1')).toBe('review');
    const note = notesOf(b, 'T-1').at(-1) as string;
    expect(note).not.toContain('sekret');
    expect(note).not.toContain('credential.helper');
    expect(note).toMatch(/^Not merged: could not fetch main from origin: git fetch failed \(\d+\): .*127\.0\.0\.1.*T-1 stays in review\.$/s);
  }, 120_000);
});
