import * as fs from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { VerifyMailbox } from '../test/helpers/verifyMailbox.js';
import { type Served, type WindowSession, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { screenText, typeIn } from './pageActions.js';
import { claimWorktree, git, servedNames } from './gitThread.js';

/**
 * Issue 20 (findings 3, 4 and 7) on a git Thread, in Debian's Chromium against `forkbench serve`, with a
 * shell in a real pty running the real CLI and git: the details panel of a claimed task shows its worktree
 * path and branch; Approve pressed on a card opens the diff and merges nothing; a reject's reason is on the
 * card; a refusal that comes again is one banner with a count, gone once the same action succeeds.
 */
const win = windowForFile({ repo: true });
let w: WindowSession;
let served: Served;
let page: Page;
/** How the test tells the shell's background claim to go: the shell runs contained (issue 43), with a /tmp of
 *  its own, so it waits on a TCP gate of the test's rather than on a file the test writes. */
let box: VerifyMailbox;

beforeAll(async () => {
  box = await VerifyMailbox.open();
  win.after(() => box?.close());
  w = win.session;
  ({ served, page } = w);
}, 60_000);

const card = (id: string) => page.getByTestId(`card-${id}`);

describe('a review card on a git Thread', () => {
  it('details show the worktree and branch; Approve on the card opens the diff; the reject reason is on the card', async () => {
    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await expect.poll(() => page.getByTestId('git-base').textContent()).toContain('main');
    await page.getByTestId('add-task-title').fill('Reword the notes');
    await page.getByTestId('add-task-submit').click();
    await card('T-1').waitFor();
    await page.getByTestId('launch-menu').click();
    await page.getByTestId('launch-shell').click();
    const tab = page.locator('[data-testid^="agent-tab-"]').first();
    await expect.poll(() => tab.getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
    const agent = ((await tab.getAttribute('data-testid')) as string).replace('agent-tab-', '');
    // Its first grant's folder, inside the agent's own claims folder (the one its sandbox writes).
    const worktree = claimWorktree(served, agent, 'T-1', 1);

    await typeIn(page, agent, 'forkbench claim T-1');
    await expect.poll(() => screenText(page, agent), { timeout: 10_000 }).toContain(`cd '${worktree}'`);
    await expect.poll(() => card('T-1').getAttribute('data-state')).toBe('claimed');

    // The details of the claimed task: its worktree folder and its branch, not only in a tooltip.
    await page.getByTestId('card-title-T-1').click();
    const details = page.getByTestId('task-details');
    await details.waitFor();
    await expect.poll(() => details.getByTestId('details-worktree').textContent()).toBe(worktree);
    expect(await details.getByTestId('details-branch').textContent()).toBe(servedNames(served).branch('T-1'));
    await w.shot('review-01-details-worktree');
    await page.keyboard.press('Escape');
    await details.waitFor({ state: 'detached' });

    await typeIn(page, agent, `cd '${worktree}' && echo 'reworded' > notes.txt && git commit -qam 'reword' && forkbench done T-1 --note "reworded"`);
    await expect.poll(() => card('T-1').getAttribute('data-state'), { timeout: 10_000 }).toBe('review');
    // in review: no countdown and no LAPSED mark on the card
    expect(await page.getByTestId('countdown-T-1').count()).toBe(0);
    expect(await page.getByTestId('lapsed-T-1').count()).toBe(0);

    // Approve on the card opens the diff; nothing is merged until the dialog's own Approve.
    const mainBefore = git(served.folder, 'rev-parse', 'main');
    await page.getByTestId('approve-T-1').click();
    await page.getByTestId('diff-view').waitFor();
    await expect.poll(() => page.getByTestId('diff-patch').textContent()).toContain('+reworded');
    expect(await page.getByTestId('diff-approve-T-1').isVisible()).toBe(true);
    expect(await page.getByTestId('confirm-dialog').count()).toBe(0);
    expect(await card('T-1').getAttribute('data-state')).toBe('review');
    expect(git(served.folder, 'rev-parse', 'main')).toBe(mainBefore);
    expect(fs.readFileSync(join(served.folder, 'notes.txt'), 'utf8')).toBe('first line\n');
    await w.shot('review-02-approve-opens-diff');
    await page.getByTestId('diff-close').click();
    await page.getByTestId('diff-view').waitFor({ state: 'detached' });
    expect(await card('T-1').getAttribute('data-state')).toBe('review');
    expect(git(served.folder, 'rev-parse', 'main')).toBe(mainBefore);

    // Rejected with a reason: back to its holder, and the card says why.
    await page.getByTestId('reject-T-1').click();
    await page.getByTestId('prompt-input').fill('keep the first line too');
    await page.getByTestId('prompt-ok').click();
    await expect.poll(() => card('T-1').getAttribute('data-state'), { timeout: 10_000 }).toBe('claimed');
    expect(await page.getByTestId('card-sent-back-T-1').textContent()).toBe('rejected: keep the first line too');
    await w.shot('review-03-reject-reason-on-card');

    // The agent answers and says done again: the old reason leaves the card with the new review.
    await typeIn(page, agent, `printf 'first line\\nreworded\\n' > notes.txt && git commit -qam 'keep the first line' && forkbench done T-1`);
    await expect.poll(() => card('T-1').getAttribute('data-state'), { timeout: 10_000 }).toBe('review');
    expect(await page.getByTestId('card-sent-back-T-1').count()).toBe(0);
  }, 120_000);

  it('a refusal that comes again is one banner with a count, and it clears when the same action then succeeds', async () => {
    await page.getByTestId('add-task-title').fill('Second pass');
    await page.getByTestId('add-task-submit').click();
    await card('T-2').waitFor();
    const tab = page.locator('[data-testid^="agent-tab-"]').first();
    const agent = ((await tab.getAttribute('data-testid')) as string).replace('agent-tab-', '');
    // The person starts to block T-2; before they say why, the agent claims it: the block is refused. The
    // agent's claim waits in the background at a gate the test opens once the reason dialog is open.
    let round = 0;
    const blockWhileClaimed = async () => {
      const go = `go-${++round}`;
      await typeIn(page, agent, `(${box.waitAt(go)}; forkbench claim T-2 >/dev/null) &`);
      await page.getByTestId('block-T-2').click();
      await page.getByTestId('prompt-input').fill('waiting on the API');
      box.openGate(go);
      await expect.poll(() => card('T-2').getAttribute('data-state'), { timeout: 10_000 }).toBe('claimed');
      await page.getByTestId('prompt-input').press('Enter');
    };
    const lines = page.getByTestId('error-line');
    await blockWhileClaimed();
    await expect.poll(() => lines.count()).toBe(1);
    expect(await lines.first().textContent()).toContain('Could not block T-2: bad-state — T-2 is claimed; only an open task can be blocked');
    await typeIn(page, agent, 'forkbench release T-2');
    await expect.poll(() => card('T-2').getAttribute('data-state'), { timeout: 10_000 }).toBe('open');
    await blockWhileClaimed();
    await expect.poll(() => lines.first().getAttribute('data-count')).toBe('2');
    expect(await lines.count()).toBe(1);
    expect(await page.getByTestId('error-count').textContent()).toBe('×2');
    await w.shot('review-04-banner-count');
    // Released again, the block goes through: the banner about it is out of date and goes.
    await typeIn(page, agent, 'forkbench release T-2');
    await expect.poll(() => card('T-2').getAttribute('data-state'), { timeout: 10_000 }).toBe('open');
    await page.getByTestId('block-T-2').click();
    await page.getByTestId('prompt-input').fill('waiting on the API');
    await page.getByTestId('prompt-input').press('Enter');
    await expect.poll(() => card('T-2').getAttribute('data-state'), { timeout: 10_000 }).toBe('blocked');
    await expect.poll(() => lines.count()).toBe(0);
  }, 120_000);
});
