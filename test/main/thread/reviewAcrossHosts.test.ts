/**
 * Issue 45, item 4, review from any host: two ThreadHosts (two machines' hosts, each its own clone of one bare
 * remote, its own data and runtime folders) on one PostgreSQL board whose settings name the remote. The work
 * is committed by a real agent on host B; the person reviews it in host A's window (A's ThreadApi, the door a
 * window's `task.diff` and `task.approve` go through).
 *
 * Before, A diffed a commit its clone did not have: the window got git's raw `Invalid symmetric difference`
 * while Approve stayed on, and the person could approve code they never saw. Now A fetches the recorded commit
 * from the remote's `refs/forkbench/tasks/T-n` before diffing; when it cannot (the remote unreachable, the
 * commit not pushed yet) the answer says where the work is (B's host, its agent) and what to do, and A refuses
 * to approve it, writing nothing. An approval names the commit the person was shown, and lands that or nothing.
 */
import * as fs from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TaskDiff } from '../../../src-shared/protocol/windowApi.js';
import { InstalledProfiles } from '../../../src-main/window/installedProfiles.js';
import { ThreadApi } from '../../../src-main/window/threadApi.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { ClonesOnOneBoard, hasCommit, hostPushed, preReceive, workedOn, type Machine } from '../../helpers/clonesOnOneBoard.js';
import { gitSync, remoteRefOf } from '../../helpers/gitFixture.js';
import { startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';
import { waitFor } from '../../helpers/pty.js';

let pgc: PgCluster;
let url = '';
const clones = new ClonesOnOneBoard(() => url);

beforeAll(async () => {
  ensureBuilt();
  pgc = await startPgCluster({ fsync: false });
  url = await pgc.createDatabase('review');
  // A private PostgreSQL's initdb and start take seconds, and far longer on a loaded machine.
}, 180_000);
afterAll(() => pgc?.dispose());
afterEach(() => clones.dispose());

/** The window's door into the Thread on machine `m`. */
function windowOf(m: Machine): { api: ThreadApi; key: string } {
  const api = new ThreadApi(m.host, new InstalledProfiles(), { kind: 'postgres', where: 'test', name: 'review', fixed: false, host: 'test host' });
  return { api, key: api.key };
}

const remoteMain = (bare: string) => gitSync(bare, ['rev-parse', 'refs/heads/main']);
const taskOn = (m: Machine, id: string) => m.host.board.state.tasks.get(id);
/** What the board holds of a task that a refused approval must leave as it was. */
const untouched = (m: Machine, id: string) => {
  const t = taskOn(m, id);
  return { state: t?.state, queued: t?.queued ?? null, notes: t?.notes.length, submitted: t?.submitted?.sha };
};
/** What B calls its host and its agent: what A's answer must name. */
const namesOn = (b: Machine, agent: string) => ({ host: b.host.board.engine.here?.name as string, agent: b.host.roster.agent(agent)?.name as string });

describe('review on host A of work committed on host B', () => {
  it('A’s Diff fetches B’s commit from the remote and shows its change; Approve of what was shown lands exactly it, and an approval of anything else is refused', async () => {
    const { bare, a, b } = await clones.two();
    await b.host.board.run((e) => e.addTask({ title: 'change notes' }));
    const { sha } = await workedOn(b, 'T-1', { 'notes.txt': 'line one\nline two\n', 'added.txt': 'new file\n' });
    await hostPushed(b, bare, 'T-1', sha);
    await waitFor(() => taskOn(a, 'T-1')?.state === 'review', 10_000, 'A to see T-1 in review');
    expect(await hasCommit(a.folder, sha)).toBe(false);

    const { api, key } = windowOf(a);
    const d: TaskDiff = await api.taskDiff({ key, taskId: 'T-1' });
    expect(d.elsewhere).toBeUndefined();
    expect(d.head).toBe(sha);
    expect(d.commits).toBe(1);
    // Read against the remote's main, where the work started and where approval merges it.
    expect(d.base).toBe('origin/main');
    expect(d.files.map((f) => [f.path, f.status, f.added, f.deleted])).toEqual([
      ['added.txt', 'A', 1, 0],
      ['notes.txt', 'M', 1, 0],
    ]);
    expect(d.patch).toContain('+line two');
    expect(d.patch).toContain('+new file');
    // Fetched into A's clone by the Diff, from the remote's task namespace.
    expect(await hasCommit(a.folder, sha)).toBe(true);

    // An approval naming another commit than the work in review (what a window showed before a newer done) is
    // refused by the host, and nothing is queued.
    const base = remoteMain(bare);
    const before = untouched(a, 'T-1');
    await expect(api.approveTask({ key, taskId: 'T-1', seen: base, writeKey: 'approve-unseen-1' })).rejects.toMatchObject({
      code: 'bad-state',
      message: `T-1's work in review is now ${sha.slice(0, 10)}, not the ${base.slice(0, 10)} you were shown: nothing was approved. Look at its diff again.`,
    });
    expect(untouched(a, 'T-1')).toEqual(before);
    expect(remoteMain(bare)).toBe(base);

    // Approved as shown: the queue lands exactly that commit onto the remote's main.
    await api.approveTask({ key, taskId: 'T-1', seen: sha, writeKey: 'approve-seen-1' });
    await waitFor(() => taskOn(a, 'T-1')?.state === 'done', 30_000, 'T-1 to land');
    expect(gitSync(bare, ['rev-parse', 'main^1'])).toBe(base);
    expect(gitSync(bare, ['rev-parse', 'main^2'])).toBe(sha);
    expect(gitSync(bare, ['show', 'main:added.txt'])).toBe('new file');
  }, 120_000);

  it('the remote unreachable from A: the Diff says where the work is (B, its agent) and what to do, never git’s error; approve is refused and writes nothing; once it is back, the Diff shows it and approve lands', async () => {
    const { bare, a, b } = await clones.two();
    await b.host.board.run((e) => e.addTask({ title: 'change notes' }));
    const { sha, agent } = await workedOn(b, 'T-1', { 'notes.txt': 'line one\nline two\n' });
    await hostPushed(b, bare, 'T-1', sha);
    await waitFor(() => taskOn(a, 'T-1')?.state === 'review', 10_000, 'A to see T-1 in review');
    const names = namesOn(b, agent);
    expect(names.host).toBeTruthy();
    await waitFor(() => a.host.board.membership!.peers().some((p) => p.id === agent), 20_000, 'A to list B’s agent');

    const away = `${bare}.away`;
    fs.renameSync(bare, away);
    const { api, key } = windowOf(a);
    const d = await api.taskDiff({ key, taskId: 'T-1' });
    expect(d.elsewhere).toMatchObject({ why: 'unreachable', sha, host: names.host, agent: names.agent });
    expect(d.files).toEqual([]);
    expect(d.patch).toBe('');
    const said = d.elsewhere?.message as string;
    expect(said).toMatch(
      new RegExp(
        `^T-1's work, commit ${sha.slice(0, 10)} by ${names.agent} on ${esc(names.host)}, is not in this clone, and origin \\(${esc(bare)}\\) could not be reached from this host to fetch it \\(.*does not appear to be a git repository.*\\)\\. Check this host's access to it, then press Refresh, or review it in ${esc(names.host)}'s window\\. Approval stays off until this host can show it\\.$`,
      ),
    );
    expect(said).not.toMatch(/git -c|symmetric difference|failed \(\d+\)/);

    // Approve is refused by the host, with the same words, whether or not the window names the commit: nothing
    // is queued, noted or merged.
    const before = untouched(a, 'T-1');
    for (const seen of [sha, undefined]) {
      const refused = await api.approveTask({ key, taskId: 'T-1', ...(seen ? { seen } : {}), writeKey: `approve-away-${seen ? 'seen' : 'plain'}` }).then(
        () => null,
        (err: Error & { code?: string }) => err,
      );
      expect(refused?.code).toBe('work-elsewhere');
      expect(refused?.message).toBe(`${said} Nothing was approved: T-1 stays in review.`);
      expect(untouched(a, 'T-1')).toEqual(before);
    }
    // B's board view agrees: nothing of the refusal reached the shared board.
    expect(untouched(b, 'T-1')).toEqual(before);

    fs.renameSync(away, bare);
    const main = remoteMain(bare);
    const shown = await api.taskDiff({ key, taskId: 'T-1' });
    expect(shown.elsewhere).toBeUndefined();
    expect(shown.patch).toContain('+line two');
    await api.approveTask({ key, taskId: 'T-1', seen: shown.head, writeKey: 'approve-back' });
    await waitFor(() => taskOn(a, 'T-1')?.state === 'done', 30_000, 'T-1 to land');
    expect(gitSync(bare, ['rev-parse', 'main^1'])).toBe(main);
    expect(gitSync(bare, ['rev-parse', 'main^2'])).toBe(sha);
  }, 120_000);

  it('B has not pushed the commit yet: the Diff says B holds it and its agent runs there, approve is refused; once B’s push lands, Refresh shows it', async () => {
    const { bare, root, a, b } = await clones.two();
    // B's pushes to the task namespace are held in flight by the remote until the test lets them go.
    const hold = `${root}/hold-pushes`;
    fs.writeFileSync(hold, '');
    preReceive(bare, `while read old new ref; do case "$ref" in refs/forkbench/tasks/*) while [ -e '${hold}' ]; do sleep 0.05; done;; esac; done\nexit 0`);
    await b.host.board.run((e) => e.addTask({ title: 'change notes' }));
    const { sha, agent } = await workedOn(b, 'T-1', { 'notes.txt': 'line one\nline two\n' });
    await waitFor(() => taskOn(a, 'T-1')?.state === 'review', 10_000, 'A to see T-1 in review');
    await waitFor(() => a.host.board.membership!.peers().some((p) => p.id === agent), 20_000, 'A to list B’s agent');
    const names = namesOn(b, agent);

    const { api, key } = windowOf(a);
    const d = await api.taskDiff({ key, taskId: 'T-1' });
    expect(d.elsewhere).toMatchObject({ why: 'not-pushed', sha, host: names.host, agent: names.agent });
    expect(d.elsewhere?.message).toBe(
      `T-1's work, commit ${sha.slice(0, 10)} by ${names.agent} on ${names.host}, is not in this clone, and origin does not have it under ${remoteRefOf(b.host, 'T-1')}: ${names.host} has not pushed it yet, or it was lost with that host. Forkbench on ${names.host} runs ${names.agent} now and pushes each commit as it is recorded: press Refresh in a moment, or review it in ${names.host}'s window. Approval stays off until this host can show it.`,
    );
    const before = untouched(a, 'T-1');
    await expect(api.approveTask({ key, taskId: 'T-1', seen: sha, writeKey: 'approve-unpushed' })).rejects.toMatchObject({ code: 'work-elsewhere' });
    expect(untouched(a, 'T-1')).toEqual(before);

    fs.rmSync(hold);
    await hostPushed(b, bare, 'T-1', sha);
    const shown = await api.taskDiff({ key, taskId: 'T-1' });
    expect(shown.elsewhere).toBeUndefined();
    expect(shown.head).toBe(sha);
    expect(shown.patch).toContain('+line two');
  }, 120_000);

  it('the remote’s task ref holds another commit than the record (someone pushed over it): the Diff says nothing that arrived is the work, approve is refused', async () => {
    const { bare, a, b } = await clones.two();
    await b.host.board.run((e) => e.addTask({ title: 'change notes' }));
    const { sha, agent } = await workedOn(b, 'T-1', { 'notes.txt': 'line one\nline two\n' });
    await hostPushed(b, bare, 'T-1', sha);
    await waitFor(() => taskOn(a, 'T-1')?.state === 'review', 10_000, 'A to see T-1 in review');
    // A push with hooks off, outside Forkbench, puts main's commit where B's work was.
    const main = remoteMain(bare);
    gitSync(bare, ['update-ref', remoteRefOf(b.host, 'T-1'), main]);
    const names = namesOn(b, agent);
    const { api, key } = windowOf(a);
    const d = await api.taskDiff({ key, taskId: 'T-1' });
    expect(d.elsewhere).toMatchObject({ why: 'not-arrived', sha, host: names.host });
    expect(d.elsewhere?.message).toMatch(
      new RegExp(`^T-1's work, commit ${sha.slice(0, 10)} by .* on ${esc(names.host)}, is not in this clone: what arrived from origin under ${esc(remoteRefOf(b.host, 'T-1'))} is ${main.slice(0, 10)}, not the recorded ${sha.slice(0, 10)}, so there is nothing here to show\\.`),
    );
    expect(await hasCommit(a.folder, sha)).toBe(false);
    const before = untouched(a, 'T-1');
    await expect(api.approveTask({ key, taskId: 'T-1', writeKey: 'approve-other' })).rejects.toMatchObject({ code: 'work-elsewhere' });
    expect(untouched(a, 'T-1')).toEqual(before);
    expect(remoteMain(bare)).toBe(main);
  }, 120_000);
});

/** Text as a regular expression matches it literally. */
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
