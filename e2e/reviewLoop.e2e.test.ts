import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, describeViolations } from './axe.js';
import { printedWorktree } from './gitThread.js';
import { type Served, type WindowSession, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { screenText, typeIn } from './pageActions.js';
import type { WindowClient } from './windowClient.js';

/**
 * Issue 44, items 1 and 3: the person's loop, in Chromium against `forkbench serve` on a git Thread, with a
 * shell in a real pty running the real CLI and git. Work in review waits for the person without its claim
 * running down; a reject reaches the agent's pane with its reason and a full lease; a merge-queue conflict is
 * shown and told as a conflict, never a lapse; a burst of lapses is a few notices, once each, over nothing.
 */
const win = windowForFile({ repo: true, client: true });
let w: WindowSession;
let served: Served;
let page: Page;
let host: WindowClient;
let key: string;
let agent: string;

beforeAll(() => {
  w = win.session;
  ({ served, page } = w);
  host = win.host;
});

const card = (id: string) => page.getByTestId(`card-${id}`);

async function addTask(title: string, id: string): Promise<void> {
  await page.getByTestId('add-task-title').fill(title);
  await page.getByTestId('add-task-submit').click();
  await card(id).waitFor();
}

/** `taskId` claimed by the shell, `file` written in the worktree its claim printed and committed, done. */
async function toReview(taskId: string, file: string, text: string): Promise<void> {
  const worktreeOf = async () => printedWorktree(await screenText(page, agent), served, agent, taskId);
  await typeIn(page, agent, `forkbench claim ${taskId}`);
  await expect.poll(worktreeOf, { timeout: 10_000 }).toBeTruthy();
  const worktree = (await worktreeOf()) as string;
  await typeIn(page, agent, `cd '${worktree}' && echo '${text}' > ${file} && git add ${file} && git commit -qm '${taskId}' && forkbench done ${taskId} >/dev/null; cd '${served.folder}'`);
  await expect.poll(() => card(taskId).getAttribute('data-state'), { timeout: 10_000 }).toBe('review');
}

async function approve(id: string): Promise<void> {
  await page.getByTestId(`diff-button-${id}`).click();
  await page.getByTestId('diff-view').waitFor();
  await page.getByTestId(`diff-approve-${id}`).click();
  await page.getByTestId('diff-view').waitFor({ state: 'detached' });
}

/** The pane's text with its lines joined: a notice wraps at the terminal's width. */
const paneText = async () => (await screenText(page, agent)).replace(/\n/g, '');

describe("the person's loop", () => {
  it('a task in review for 3× its lease keeps its claim and its agent is not stalled; Reject reaches the pane with its reason, and the task is the agent’s again with a full lease', async () => {
    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    key = (await host.call('threads.list', {}))[0]!.key;
    const LEASE_MS = 5_000;
    await host.call('board.setSettings', { key, patch: { leaseMs: LEASE_MS } });
    await addTask('Reword the notes', 'T-1');
    await page.getByTestId('launch-menu').click();
    await page.getByTestId('launch-shell').click();
    const tab = page.locator('[data-testid^="agent-tab-"]').first();
    await expect.poll(() => tab.getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
    agent = ((await tab.getAttribute('data-testid')) as string).replace('agent-tab-', '');
    await toReview('T-1', 'notes.txt', 'reworded');

    // Three leases with the shell idle at its prompt: the person has not looked yet, and that is no one's lapse.
    const since = Date.now();
    const seen = new Set<string>();
    while (Date.now() - since < 3 * LEASE_MS + 1_000) {
      seen.add(`${await card('T-1').getAttribute('data-state')}/${await card('T-1').getAttribute('data-holder')}/${await tab.getAttribute('data-status')}`);
      await page.waitForTimeout(250);
    }
    expect([...seen]).toEqual([`review/${agent}/running`]);
    expect(await page.getByTestId('lapsed-T-1').count()).toBe(0);
    expect(await page.getByTestId('host-notice').count()).toBe(0);
    await w.shot('review-loop-01-held-in-review');

    // The person gives leases room before sending it back: the send-back's lease is a full one of the lease in
    // force then, and the agent's answer (a commit and a done from a shell) need not race a 5 s lease on a
    // loaded machine. (Its old lease would have had nothing left: it ran out three times over in review.)
    const FULL_MS = 120_000;
    await host.call('board.setSettings', { key, patch: { leaseMs: FULL_MS } });
    await page.getByTestId('reject-T-1').click();
    await page.getByTestId('prompt-input').fill('keep the first line too');
    await page.getByTestId('prompt-ok').click();
    await expect.poll(() => card('T-1').getAttribute('data-state'), { timeout: 10_000 }).toBe('claimed');
    expect(await card('T-1').getAttribute('data-holder')).toBe(agent);
    // A full lease from the reject, not what was left of the old one.
    expect(Number(await page.getByTestId('countdown-T-1').getAttribute('data-remaining-ms'))).toBeGreaterThan(FULL_MS * 0.6);
    await expect.poll(paneText, { timeout: 10_000 }).toContain('Forkbench: T-1 "Reword the notes" was sent back to you by a person in the Forkbench window. Reason: "keep the first line too". It is yours again with a full lease');
    await w.shot('review-loop-02-reject-told');
    // The agent answers as told: its token still holds.
    await typeIn(page, agent, `cd "$(git -C '${served.folder}' worktree list | grep T-1 | cut -d' ' -f1)" && printf 'first line\\nreworded\\n' > notes.txt && git commit -qam again && forkbench done T-1 >/dev/null && echo "RESUBMITTED $((1+1))"; cd '${served.folder}'`);
    await expect.poll(paneText, { timeout: 10_000 }).toContain('RESUBMITTED 2');
    await expect.poll(() => card('T-1').getAttribute('data-state'), { timeout: 10_000 }).toBe('review');
  }, 120_000);

  it('a queue conflict is shown and told as a conflict: a mark on the card, a notice, a log line, the pane told which files; never lapsed', async () => {
    await host.call('board.setSettings', { key, patch: { leaseMs: 120_000 } });
    await approve('T-1');
    await expect.poll(() => card('T-1').getAttribute('data-state'), { timeout: 20_000 }).toBe('done');
    await expect.poll(paneText, { timeout: 10_000 }).toContain('T-1 "Reword the notes" landed');
    // Two tasks change the same line from the same base: the first lands, the second cannot merge.
    await addTask('Say two', 'T-2');
    await addTask('Say three', 'T-3');
    await toReview('T-2', 'notes.txt', 'two');
    await toReview('T-3', 'notes.txt', 'three');
    await approve('T-2');
    await expect.poll(() => card('T-2').getAttribute('data-state'), { timeout: 20_000 }).toBe('done');
    await page.getByTestId(`agent-tab-${agent}`).click();
    await approve('T-3');
    await expect.poll(() => card('T-3').getAttribute('data-state'), { timeout: 20_000 }).toBe('claimed');
    expect(await card('T-3').getAttribute('data-holder')).toBe(agent);
    expect(await page.getByTestId('sent-back-mark-T-3').textContent()).toBe('merge conflict');
    expect(await page.getByTestId('lapsed-T-3').count()).toBe(0);
    expect(await page.getByTestId('card-sent-back-T-3').textContent()).toMatch(/^merge conflict: .*conflicts in notes\.txt/);
    const notice = page.getByTestId('host-notice').filter({ hasText: 'Merge conflict: T-3' });
    await expect.poll(() => notice.count(), { timeout: 10_000 }).toBe(1);
    expect(await notice.innerText()).toContain('notes.txt');
    expect(await notice.innerText()).not.toMatch(/lapsed/i);
    await expect.poll(() => page.getByTestId('event-log').innerText()).toContain('T-3 merge conflict: sent back (claimed)');
    await expect.poll(paneText, { timeout: 10_000 }).toContain('T-3 "Say three" was sent back to you by the merge queue (its merge conflicts)');
    expect(await paneText()).toContain('conflicts in notes.txt');
    await w.shot('review-loop-03-conflict');
    for (const s of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: s });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      for (const scope of ['[data-testid="notices"]', '[data-testid="card-T-3"]']) expect(describeViolations(await axeViolations(page, scope)), `${scope}, ${s}`).toBe('');
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }, 120_000);

  it('six lapses in a row give at most three visible notices, none saying the same, none over the event log or Launch', async () => {
    for (const b of await page.getByTestId('host-notice').all()) await b.getByRole('button').click();
    await expect.poll(() => page.getByTestId('host-notice').count()).toBe(0);
    await host.call('board.setSettings', { key, patch: { leaseMs: 2_000 } });
    const ids = ['T-4', 'T-5', 'T-6', 'T-7', 'T-8', 'T-9'];
    for (const [i, id] of ids.entries()) await addTask(`Idle work ${i + 1}`, id);
    // The person gives all six to the idle shell (an assignment may go past the claim limit): none is worked on.
    for (const id of ids) await host.call('task.assign', { key, taskId: id, agentId: agent });
    for (const id of ids) await expect.poll(() => card(id).getAttribute('data-state'), { timeout: 30_000 }).toBe('open');
    for (const id of ids) expect(await page.getByTestId(`lapsed-${id}`).count()).toBe(1);
    const visible = page.locator('[data-testid="host-notice"]:visible, [data-testid="toast"]:visible');
    await expect.poll(() => visible.count(), { timeout: 5_000 }).toBeGreaterThan(0);
    const texts = await visible.allInnerTexts();
    expect(texts.length).toBeLessThanOrEqual(3);
    expect(new Set(texts).size).toBe(texts.length);
    expect(texts.join('\n')).toContain('6 claims lapsed');
    // Each lapse is a line of the event log too.
    const log = await page.getByTestId('event-log').innerText();
    for (const id of ids) expect(log).toContain(`${id}: `);
    // Nothing of the notices lies over the controls: what is under Launch's and the log's middle is theirs.
    for (const target of ['launch-menu', 'event-log', 'log-filter']) {
      const box = await page.getByTestId(target).boundingBox();
      if (!box) throw new Error(`${target} is not on screen`);
      const over = await page.evaluate(([x, y, t]) => document.elementFromPoint(x as number, y as number)?.closest(`[data-testid="${t}"]`) != null, [box.x + box.width / 2, box.y + box.height / 2, target] as const);
      expect(over, `${target} is covered`).toBe(true);
    }
    await w.shot('review-loop-04-six-lapses');
    for (const s of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: s });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      expect(describeViolations(await axeViolations(page, '[data-testid="notices"]')), s).toBe('');
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }, 120_000);
});
