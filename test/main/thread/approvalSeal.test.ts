/**
 * Issue 42, item 2: only the person's window can approve. Whoever holds a shared board's database role can
 * append any row; before seals, a `queued` row "by user" for an agent's work in review was landed by the merge
 * queue onto main, with no person deciding. Now an approval carries its host's seal (approvalSeal.ts), made
 * only where the window asks, and the queue lands only entries whose seal holds. Here the work is made by an
 * agent in a real pane with its secret bound to that pane, the rows are inserted with SQL into a private
 * PostgreSQL while the host runs: a forged approval, and a copy of the person's own sealed approval appended
 * again after the person took it back while its verify ran. Neither moves main; each is told once.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { QUEUE_CHECKOUTS } from '../../../src-main/thread/queueLanding.js';
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { appendBySql } from '../../helpers/boardRows.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { CLAIM_T1_AND_CD, GIT_IDENTITY, gitSync, makeRepo, paneAgent } from '../../helpers/gitFixture.js';
import { startPgCluster, type PgCluster } from '../../helpers/pgCluster.js';
import { waitFor } from '../../helpers/pty.js';
import { VerifyMailbox } from '../../helpers/verifyMailbox.js';
import { openTestHost } from '../../helpers/testHost.js';

const NAME = 'sealed approvals';
let pgc: PgCluster;
const hosts: ThreadHost[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  ensureBuilt();
  pgc = await startPgCluster({ fsync: false });
  // A private PostgreSQL's initdb and start take seconds, and far longer on a loaded machine.
}, 180_000);
afterAll(() => pgc?.dispose());
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.dispose();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function hostOnDatabase(url: string): Promise<{ host: ThreadHost; folder: string; root: string }> {
  const root = fs.mkdtempSync(join(tmpdir(), 'fb-seal-'));
  dirs.push(root);
  const folder = join(root, 'repo');
  makeRepo(folder, { 'notes.txt': 'one\n' });
  // The pane binding on: the agent's secret works only from its own pane. Panes commit as a fixed identity.
  const { host } = await openTestHost({ closedBy: 'caller', folder, dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, sharedBoard: { url, name: NAME }, env: { ...process.env, ...GIT_IDENTITY } });
  hosts.push(host);
  return { host, folder, root };
}

/** A real agent in a real pane: claims T-1, commits `file`, says done; the work is then in review. */
async function workInReview(host: ThreadHost, root: string, file: string): Promise<{ sha: string; token: number }> {
  const a = await paneAgent(
    host,
    root,
    `${CLAIM_T1_AND_CD}
echo "the agent's" > ${file} && git add ${file} && git commit -qm "the agent's ${file}" || exit 8
forkbench done T-1 >/dev/null && echo SUBMITTED || exit 7
exec sleep 600`,
  );
  await a.until(/SUBMITTED/);
  const t = host.board.state.tasks.get('T-1');
  expect(t?.state).toBe('review');
  return { sha: t?.submitted?.sha as string, token: t?.claim?.token ?? (t?.lastClaim?.token as number) };
}

const logOf = (host: ThreadHost) => host.board.log();

describe('the merge queue lands only approvals sealed by the host the window asked', () => {
  it('a "queued by user" row inserted into the database for an agent’s work in review is taken out unmerged, main stays, the person is told', async () => {
    const url = await pgc.createDatabase('forged');
    const { host, folder, root } = await hostOnDatabase(url);
    await host.board.run((e) => e.addTask({ title: 'forbidden file' }));
    const { sha, token } = await workInReview(host, root, 'forbidden.txt');
    const main = gitSync(folder, ['rev-parse', 'main']);

    const seq = await appendBySql(url, NAME, (_seq, mono) => ({ at: Date.now(), mono, kind: 'queued', taskId: 'T-1', by: 'user', rank: 1, sha, token, host: host.board.engine.here?.id }), { notify: true });
    const out = await waitFor(async () => (await logOf(host)).find((e) => e.kind === 'unqueued' && e.taskId === 'T-1'), 20_000, 'the forged entry taken out');
    expect(out).toMatchObject({ by: 'forkbench', code: 'unsealed' });
    expect((out as { reason: string }).reason).toMatch(/^not merged: its approval was not made in the person's window on this host \(the queue entry "by user" carries no valid seal/);
    expect((await logOf(host)).some((e) => e.seq === seq && e.kind === 'queued')).toBe(true);
    await host.worktrees.git!.idle();
    expect(gitSync(folder, ['rev-parse', 'main'])).toBe(main);
    expect(gitSync(folder, ['ls-tree', '--name-only', 'main'])).not.toContain('forbidden.txt');
    expect(host.board.state.tasks.get('T-1')).toMatchObject({ state: 'review', queued: null });
    const told = host.notices.current().filter((n) => n.about === 'unsealed:T-1');
    expect(told).toHaveLength(1);
    expect(told[0]!.title).toBe('Approval not made here: T-1');

    // The person's own approval of the same work, from the window's path, is sealed and lands.
    await host.worktrees.approve('T-1');
    expect(host.board.state.tasks.get('T-1')?.state).toBe('done');
    expect(gitSync(folder, ['rev-parse', 'main^2'])).toBe(sha);
  }, 120_000);

  it('the person’s sealed approval, taken back while its verify runs, appended again as the same row: the copy does not hold, main stays', async () => {
    const url = await pgc.createDatabase('replayed');
    const { host, folder, root } = await hostOnDatabase(url);
    // The verify runs contained (no file of the test's reaches it): it says it started over the mailbox.
    const box = await VerifyMailbox.open();
    onTestFinished(() => box.close());
    // A verify that says it started (in the merge queue's checkout: the same command runs on done, in the
    // agent's folder, and that one is not the landing), then waits: the person takes the approval back while it runs.
    await host.board.run((e) => e.setSettings({ verify: `case "$PWD" in */${QUEUE_CHECKOUTS}/*) ${box.say('started')};; esac; sleep 30` }));
    await host.board.run((e) => e.addTask({ title: 'second thoughts' }));
    await workInReview(host, root, 'maybe.txt');
    const main = gitSync(folder, ['rev-parse', 'main']);

    await host.worktrees.approve('T-1', 'user', undefined, { wait: false });
    const sealed = host.board.state.tasks.get('T-1')?.queued;
    expect(sealed?.seal).toMatch(/^[0-9a-f]{64}$/);
    await waitFor(() => box.heard('started') > 0, 20_000, 'the verify to start');
    expect((await host.board.run((e) => e.unqueue('T-1', 'not this one', 'user'))).ok).toBe(true);
    await waitFor(() => !fs.existsSync(host.worktrees.require().names.queueCheckoutOf('T-1')), 20_000, 'the verify’s checkout to go');

    // The row the person's approval was, with its seal, appended again at the next position.
    const row = (await logOf(host)).find((e) => e.kind === 'queued' && e.taskId === 'T-1') as unknown as Record<string, unknown>;
    const { seq: _seq, mono: _mono, ...copy } = row;
    const again = await appendBySql(url, NAME, (_seq, mono) => ({ ...copy, mono }), { notify: true });
    const out = await waitFor(async () => (await logOf(host)).find((e) => e.kind === 'unqueued' && e.taskId === 'T-1' && e.seq > again), 20_000, 'the copy taken out');
    expect(out).toMatchObject({ code: 'unsealed' });
    await host.worktrees.git!.idle();
    expect(gitSync(folder, ['rev-parse', 'main'])).toBe(main);
    expect(host.board.state.tasks.get('T-1')).toMatchObject({ state: 'review', queued: null });
  }, 120_000);
});
