import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { remoteTaskRef } from '../src-shared/git/taskBranch.js';
import { GIT_IDENTITY, gitSync, makeRepo } from '../test/helpers/gitFixture.js';
import { boardUrlFile, startPgCluster, type PgCluster } from '../test/helpers/pgCluster.js';
import { axeViolations, describeViolations, settleScheme } from './axe.js';
import { boardNamesOf, printedWorktree } from './gitThread.js';
import { type Served, type WindowSession, withQuery } from './harness.js';
import { VIEWPORT, windowForFile } from './windowForFile.js';
import { launchFromMenu, screenText, typeIn } from './pageActions.js';
import { windowOn, type WindowClient } from './windowClient.js';

/**
 * Issue 45, item 4, review from any host, in Chromium: two `forkbench serve` processes (each its own data,
 * runtime folders and clone of one bare remote, as two machines) on one board in a private PostgreSQL, named
 * after the remote. A shell agent on host B commits T-1's work with the real CLI and git. In host A's window the
 * person opens its Diff while B's push of the commit is held in flight by the remote: the dialog says where the
 * work is (B, its agent) and what to do, never git's error, and Approve is disabled; A's host refuses an approval
 * sent anyway. Once the commit reaches the remote, Refresh shows B's change in A's window, Approve is enabled,
 * and the merge of exactly that commit lands on the remote's main.
 */
/** Another host's agents are re-read every poll (2 s); room for a loaded machine (2 cores shared by several). */
const PEER_LISTED_MS = 20_000;
/** A write on one host reaches the other's window by NOTIFY (or its poll). */
const ACROSS_HOSTS_MS = 20_000;
/** A shell's answer to a typed CLI call, through its host and PostgreSQL. */
const CLI_ANSWER_MS = 20_000;
/** A fetch, merge and push of a few commits to a local remote, under load. */
const LANDING_MS = 30_000;

let pgc: PgCluster;
let remoteRoot: string;
let bare: string;
let hold: string;
let a: WindowSession;
let b: Served;
let pageA: Page;
let pageB: Page;
let hostA: WindowClient;

/** A folder made a clone of the remote, whose origin is the remote's path: the board's name on both hosts. */
const cloneInto = (folder: string) => {
  gitSync(folder, ['clone', '-q', `file://${bare}`, '.']);
  gitSync(folder, ['remote', 'set-url', 'origin', bare]);
};

let args: string[];

const win = windowForFile(async () => {
  remoteRoot = fs.mkdtempSync(join(tmpdir(), 'fb-e2e-remote-'));
  win.after(() => remoteRoot && fs.rmSync(remoteRoot, { recursive: true, force: true }));
  bare = join(remoteRoot, 'remote.git');
  gitSync(remoteRoot, ['init', '-q', '--bare', '-b', 'main', bare]);
  makeRepo(join(remoteRoot, 'seed'), { 'notes.txt': 'first line\n' });
  gitSync(join(remoteRoot, 'seed'), ['push', '-q', bare, 'main']);
  // The remote holds pushes to the task namespace in flight while this file exists (B's host pushes each
  // recorded commit there in the background; until it lands, no other host can fetch it).
  hold = join(remoteRoot, 'hold-pushes');
  fs.writeFileSync(hold, '');
  fs.writeFileSync(join(bare, 'hooks', 'pre-receive'), `#!/bin/sh\nwhile read old new ref; do case "$ref" in refs/forkbench/tasks/*) while [ -e '${hold}' ]; do sleep 0.05; done;; esac; done\nexit 0\n`, { mode: 0o755 });
  pgc = await startPgCluster();
  win.after(() => pgc?.dispose());
  const url = await pgc.createDatabase('e2e_review');
  args = ['--board-url-file', boardUrlFile(pgc.root, url)];
  return { serve: { args, env: GIT_IDENTITY, prepare: cloneInto } };
}, 180_000);

beforeAll(async () => {
  a = win.session;
  b = await win.serve({ args, env: GIT_IDENTITY, prepare: cloneInto });
  pageA = a.page;
  pageB = await a.browser.newPage({ viewport: VIEWPORT });
  pageB.on('pageerror', (e) => console.error('page B error:', e.message));
  hostA = await windowOn(a.served);
  win.after(() => hostA?.close());
}, 180_000);

async function opened(page: Page, served: Served): Promise<void> {
  await page.goto(withQuery(served.url, 'debug=1'));
  await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state'), { timeout: 20_000 }).toBe('connected');
  await page.getByTestId('thread-goal').waitFor();
}

const remoteHas = (ref: string): string | null => {
  try {
    return gitSync(bare, ['rev-parse', '--verify', '--quiet', ref]) || null;
  } catch {
    return null;
  }
};

describe('review on host A of work done on host B, in Chromium', () => {
  it('A’s Diff says where B’s work is and Approve is disabled while it cannot be shown; once it reached the remote, A shows B’s change and its approval lands it', async () => {
    await opened(pageA, a.served);
    await opened(pageB, b);
    await pageB.getByTestId('add-task-title').fill('Reword the notes');
    await pageB.getByTestId('add-task-submit').click();
    await expect.poll(() => pageA.getByTestId('card-T-1').getAttribute('data-state'), { timeout: ACROSS_HOSTS_MS }).toBe('open');

    // B's shell agent claims T-1, commits in its worktree and says done, with the real CLI and git.
    const agentB = await launchFromMenu(pageB);
    await typeIn(pageB, agentB, 'forkbench claim T-1');
    // B's board is the shared one: its git names are that board's (boardNames.ts), read from B's window.
    const namesB = await boardNamesOf(b);
    const worktreeOf = async () => printedWorktree(await screenText(pageB, agentB), b, agentB, 'T-1', namesB);
    await expect.poll(worktreeOf, { timeout: CLI_ANSWER_MS }).toBeTruthy();
    const worktree = (await worktreeOf()) as string;
    await typeIn(pageB, agentB, `cd '${worktree}' && printf 'first line\\nsaid on B\\n' > notes.txt && git commit -qam 'T-1 on B' && forkbench done T-1 >/dev/null; cd '${b.folder}'`);
    await expect.poll(() => pageA.getByTestId('card-T-1').getAttribute('data-state'), { timeout: ACROSS_HOSTS_MS }).toBe('review');
    const sha = gitSync(worktree, ['rev-parse', 'HEAD']);
    // The remote's copy of the task's branch, named for the board (taskBranch.ts).
    const ref = remoteTaskRef(gitSync(worktree, ['symbolic-ref', '--short', 'HEAD']));
    // Its push is held by the remote: the commit is in B's clone only.
    expect(remoteHas(ref)).toBeNull();
    // What A's window calls B's host: the one B's agent runs on, as A lists it.
    const tabOfB = pageA.getByTestId(`agent-tab-${agentB}`);
    await tabOfB.waitFor({ timeout: PEER_LISTED_MS });
    const hostB = (await tabOfB.getAttribute('data-host')) as string;
    const nameB = (await tabOfB.getAttribute('data-name')) as string;
    expect(hostB).toBeTruthy();

    // A's Diff: where the work is and what to do, in place of a diff; Approve disabled; Reject still offered.
    await pageA.getByTestId('diff-button-T-1').click();
    const where = pageA.getByTestId('diff-elsewhere');
    await where.waitFor({ timeout: LANDING_MS });
    expect(await where.getAttribute('data-why')).toBe('not-pushed');
    expect(await where.getAttribute('data-host')).toBe(hostB);
    const said = (await pageA.getByTestId('diff-elsewhere-message').textContent()) as string;
    expect(said).toBe(
      `T-1's work, commit ${sha.slice(0, 10)} by ${nameB} on ${hostB}, is not in this clone, and origin does not have it under ${ref}: ${hostB} has not pushed it yet, or it was lost with that host. Forkbench on ${hostB} runs ${nameB} now and pushes each commit as it is recorded: press Refresh in a moment, or review it in ${hostB}'s window. Approval stays off until this host can show it.`,
    );
    expect(await where.textContent()).toContain(`The work is on ${hostB}, by ${nameB}: commit ${sha.slice(0, 10)}.`);
    // No error banner: the answer is where the work is, not git's failure.
    expect(await pageA.getByTestId('error-line').allTextContents()).toEqual([]);
    expect(await pageA.getByTestId('diff-patch').count()).toBe(0);
    expect(await pageA.getByTestId('diff-approve-T-1').isDisabled()).toBe(true);
    expect(await pageA.getByTestId('diff-reject-T-1').isDisabled()).toBe(false);
    await a.shot('cross-host-review-01-work-elsewhere');
    // Read as well as seen: no axe violation in the dialog saying where the work is, light or dark.
    for (const s of ['light', 'dark'] as const) {
      await settleScheme(pageA, s);
      expect(describeViolations(await axeViolations(pageA, '[data-testid="diff-view"]')), s).toBe('');
    }
    await pageA.emulateMedia({ colorScheme: 'light' });

    // An approval sent to A's host anyway (a window of an older build, a script) is refused there: nothing queued.
    const key = (await hostA.call('threads.list', {}))[0]!.key;
    await expect(hostA.call('task.approve', { key, taskId: 'T-1', seen: sha, writeKey: 'approve-unshown-1' })).rejects.toThrow(/"code":"work-elsewhere"/);
    await expect(hostA.call('task.approve', { key, taskId: 'T-1', writeKey: 'approve-unshown-2' })).rejects.toThrow(/"code":"work-elsewhere"/);
    expect(await pageA.getByTestId('card-T-1').getAttribute('data-state')).toBe('review');
    expect(await pageA.getByTestId('merge-queue').count()).toBe(0);

    // B's push lands; Refresh in A's dialog fetches the commit and shows B's change; Approve is enabled.
    fs.rmSync(hold);
    await expect.poll(() => remoteHas(ref), { timeout: LANDING_MS }).toBe(sha);
    await pageA.getByTestId('diff-refresh').click();
    await pageA.getByTestId('diff-patch').waitFor({ timeout: LANDING_MS });
    expect(await pageA.getByTestId('diff-elsewhere').count()).toBe(0);
    expect(await pageA.getByTestId('diff-patch').textContent()).toContain('+said on B');
    expect(await pageA.getByTestId('diff-file').getAttribute('data-path')).toBe('notes.txt');
    expect(await pageA.getByTestId('diff-summary').textContent()).toContain(sha.slice(0, 10));
    expect(await pageA.getByTestId('diff-approve-T-1').isDisabled()).toBe(false);
    await a.shot('cross-host-review-02-shown');

    // Approved in A's window: the merge queue lands exactly the commit shown onto the remote's main.
    const main = remoteHas('refs/heads/main');
    await pageA.getByTestId('diff-approve-T-1').click();
    await pageA.getByTestId('diff-view').waitFor({ state: 'detached' });
    await expect.poll(() => pageA.getByTestId('card-T-1').getAttribute('data-state'), { timeout: LANDING_MS }).toBe('done');
    expect(remoteHas('refs/heads/main^1')).toBe(main);
    expect(remoteHas('refs/heads/main^2')).toBe(sha);
    await expect.poll(() => pageB.getByTestId('card-T-1').getAttribute('data-state'), { timeout: ACROSS_HOSTS_MS }).toBe('done');
  }, 240_000);
});
