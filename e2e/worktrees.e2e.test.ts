import * as fs from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Served, type WindowSession, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { dragCard as drag, screenText as textOf, typeIn as type, confirmAfterDrop } from './pageActions.js';
import { claimWorktree, git, servedNames } from './gitThread.js';

const typeIn = (agentId: string, text: string) => type(page, agentId, text);
const dragCard = (taskId: string, target: string) => drag(page, taskId, target);
const screenText = (agentId: string) => textOf(page, agentId);

/**
 * Worktrees under claims, end to end: `forkbench serve` on a real git repository, Debian's Chromium, shells in
 * real ptys that run real git. Two agents edit the same file in their own worktrees; approval merges one; the
 * other, reassigned, cannot commit any more. Screenshots go to test-results/e2e/.
 */
const win = windowForFile({ repo: true });
let w: WindowSession;
let served: Served;
let page: Page;

beforeAll(() => {
  w = win.session;
  ({ served, page } = w);
});

const shot = (name: string) => w.shot(name);
const card = (id: string) => page.getByTestId(`card-${id}`);

async function launchShell(): Promise<string> {
  const tabs = page.locator('[data-testid^="agent-tab-"]');
  const before = new Set(await tabs.evaluateAll((els) => els.map((e) => e.getAttribute('data-testid'))));
  await page.getByTestId('launch-menu').click();
  await page.getByTestId('launch-shell').click();
  await expect.poll(async () => (await tabs.count()) > before.size).toBe(true);
  const ids = await tabs.evaluateAll((els) => els.map((e) => e.getAttribute('data-testid') as string));
  return (ids.find((t) => !before.has(t)) as string).replace('agent-tab-', '');
}

describe('worktrees under claims in a real browser', () => {
  it('two agents, one file, two worktrees; approve merges one; the reassigned one cannot commit', async () => {
    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await expect.poll(() => page.getByTestId('git-base').textContent()).toContain('main');
    for (const title of ['Reword the notes', 'Rewrite the notes']) {
      await page.getByTestId('add-task-title').fill(title);
      await page.getByTestId('add-task-submit').click();
    }
    await expect.poll(() => card('T-2').getAttribute('data-state')).toBe('open');
    const a = await launchShell();
    const b = await launchShell();
    // A claim's folder lies in its agent's own folder of the board's (the one its sandbox may write).
    const a1 = claimWorktree(served, a, 'T-1', 1);
    const b2 = claimWorktree(served, b, 'T-2', 2);
    const branch = (taskId: string) => servedNames(served).branch(taskId);

    // Each claims through the CLI, is told its worktree (a folder per grant: the token in its name), and edits
    // the same file there.
    await typeIn(a, 'forkbench claim T-1');
    await expect.poll(() => screenText(a), { timeout: 10_000 }).toContain(`cd '${a1}'`);
    await typeIn(a, `cd '${a1}' && echo 'A was here' > notes.txt && git commit -qam 'A rewords' && echo A-COMMITTED`);
    await typeIn(b, 'forkbench claim T-2');
    await expect.poll(() => screenText(b), { timeout: 10_000 }).toContain(`cd '${b2}'`);
    await typeIn(b, `cd '${b2}' && echo 'B was here' > notes.txt && git commit -qam 'B rewrites' && echo B-COMMITTED`);
    await expect.poll(() => screenText(a), { timeout: 10_000 }).toMatch(/^A-COMMITTED/m);
    await expect.poll(() => screenText(b), { timeout: 10_000 }).toMatch(/^B-COMMITTED/m);
    expect(fs.readFileSync(join(a1, 'notes.txt'), 'utf8')).toBe('A was here\n');
    expect(fs.readFileSync(join(b2, 'notes.txt'), 'utf8')).toBe('B was here\n');
    expect(fs.readFileSync(join(served.folder, 'notes.txt'), 'utf8')).toBe('first line\n');
    await expect.poll(() => page.getByTestId('card-branch-T-1').textContent()).toBe(branch('T-1'));
    await shot('11-two-worktrees');

    // B says done; the review dialog shows the branch's diff; approve merges it into main.
    await typeIn(b, 'forkbench done T-2 --note "rewritten"');
    await expect.poll(() => card('T-2').getAttribute('data-state'), { timeout: 10_000 }).toBe('review');
    await page.getByTestId('diff-button-T-2').click();
    await page.getByTestId('diff-view').waitFor();
    await expect.poll(() => page.getByTestId('diff-file').first().getAttribute('data-path')).toBe('notes.txt');
    await expect.poll(() => page.getByTestId('diff-patch').textContent()).toContain('+B was here');
    await expect.poll(() => page.getByTestId('diff-token').getAttribute('data-ok')).toBe('true');
    // the note B gave with done, beside the diff (issue 20)
    await expect.poll(() => page.getByTestId('diff-done-note').textContent()).toContain('rewritten');
    await shot('12-review-diff');
    await page.getByTestId('diff-approve-T-2').click();
    await expect.poll(() => card('T-2').getAttribute('data-state'), { timeout: 10_000 }).toBe('done');
    expect(fs.readFileSync(join(served.folder, 'notes.txt'), 'utf8')).toBe('B was here\n');
    expect(git(served.folder, 'log', '-1', '--format=%s')).toBe(`Merge ${branch('T-2')}: Rewrite the notes`);
    await expect.poll(() => fs.existsSync(b2)).toBe(false);
    await shot('13-approved-merged');

    // T-1 is dragged from A to B: A's next commit is refused by the board, in git's own output.
    const head = git(served.folder, 'rev-parse', branch('T-1'));
    await dragCard('T-1', `agent-tab-${b}`);
    // T-1 is A's work in progress: the drop asks first (issue 32, finding 6)
    await confirmAfterDrop(page);
    await expect.poll(() => card('T-1').getAttribute('data-holder'), { timeout: 5000 }).toBe(b);
    await typeIn(a, `echo 'A again' >> notes.txt && git commit -qam 'A keeps going'; echo COMMIT-EXIT=$?`);
    await expect.poll(() => screenText(a), { timeout: 10_000 }).toMatch(/COMMIT-EXIT=[1-9]/);
    expect(await screenText(a)).toContain('forkbench: refused (stale-token): your claim on T-1 ended (reassigned)');
    expect(git(served.folder, 'rev-parse', branch('T-1'))).toBe(head);
    const refused = page.locator('[data-testid="log-entry"][data-kind="write-rejected"]');
    await expect.poll(() => refused.count(), { timeout: 10_000 }).toBeGreaterThan(0);
    await page.getByTestId(`agent-tab-${a}`).click();
    await shot('14-reassigned-commit-refused');

    // The worktrees panel lists T-1's folders: B's fresh one, and A's, parked with A's uncommitted line in it.
    await page.getByTestId('worktrees-toggle').click();
    await page.getByTestId('worktree-row-T-1').first().waitFor();
    await expect.poll(() => page.getByTestId('worktree-row-T-1').count()).toBe(2);
    await expect.poll(() => page.getByTestId('worktree-row-T-1').first().textContent()).toContain(branch('T-1'));
    await shot('15-worktrees-panel');

    // A folder and branch from before boards were named (`worktrees/<agent>/T-1-1`, `forkbench/T-1`): listed
    // apart from this board's worktrees, never among them, and cleared there; its branch stays.
    const old = join(servedNames(served).worktreesRoot, 'shell-1-0123456789ab', 'T-1-1');
    git(served.folder, 'worktree', 'add', '-q', '-b', 'forkbench/T-1', old, 'main');
    const oldSha = git(served.folder, 'rev-parse', 'forkbench/T-1');
    await page.getByTestId('worktrees-panel').getByRole('button', { name: 'Refresh' }).click();
    const row = page.locator(`[data-testid="other-folder-row"][data-path="${old}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain('from before boards were named');
    await expect.poll(() => page.getByTestId('worktree-row-T-1').count()).toBe(2);
    await shot('16-worktrees-other-boards');
    await row.getByTestId('other-folder-clear').click();
    await row.waitFor({ state: 'detached' });
    expect(await page.getByTestId('other-folders').count()).toBe(0);
    expect(fs.existsSync(old)).toBe(false);
    expect(git(served.folder, 'rev-parse', 'forkbench/T-1')).toBe(oldSha);
  }, 120_000);

  it('a parked folder with uncommitted work is saved and removed after its grace; the panel lists the saved work, Restore puts it in a new folder, Delete asks first', async () => {
    // Continues the test above: A's folder of T-1 is parked, with A's refused line uncommitted in notes.txt.
    const a1 = fs.readdirSync(servedNames(served).folders).map((agent) => join(servedNames(served).folders, agent, 'T-1-1')).find((p) => fs.existsSync(p)) as string;
    expect(fs.readFileSync(join(a1, 'notes.txt'), 'utf8')).toBe('A was here\nA again\n');
    // The Thread's settings, as a person sets them: the grace in minutes (5 by default), and a disk budget.
    await page.getByTestId('thread-settings').click();
    expect(await page.getByTestId('settings-parked-grace').inputValue()).toBe('5');
    // 0.02 min is 1.2 s, just past the shortest grace a Thread may have: the folder goes soon after the save.
    await page.getByTestId('settings-parked-grace').fill('0.02');
    await page.getByTestId('settings-parked-budget').fill('512');
    await page.getByTestId('settings-save').click();
    // (Had the default grace stayed, nothing would be saved within the wait below.)
    const row = page.getByTestId('saved-work-row');
    await row.waitFor({ timeout: 15_000 });
    const ref = (await row.getAttribute('data-ref')) as string;
    expect(ref).toMatch(new RegExp(`^refs/forkbench/parked/${servedNames(served).key}/T-1/1$`));
    expect(fs.existsSync(a1)).toBe(false);
    expect(git(served.folder, 'show', `${ref}:notes.txt`)).toBe('A was here\nA again');
    expect(await row.textContent()).toContain('T-1');
    // Disk use per folder and in total, beside the budget.
    await expect.poll(() => page.getByTestId('worktrees-disk').textContent()).toMatch(/on disk · parked folders budget 512 MB/);
    await expect.poll(async () => Number(await page.getByTestId('worktrees-disk').getAttribute('data-bytes'))).toBeGreaterThan(0);
    await shot('17-saved-parked-work');

    await row.getByTestId('saved-work-restore').click();
    const restored = page.getByTestId('saved-work-restored');
    await restored.waitFor();
    const into = ((await restored.locator('code').textContent()) as string).trim();
    expect(fs.readFileSync(join(into, 'notes.txt'), 'utf8')).toBe('A was here\nA again\n');
    // Its index as saved (the saved commit's second parent).
    expect(git(into, 'write-tree')).toBe(git(served.folder, 'rev-parse', `${ref}^2^{tree}`));

    await row.getByTestId('saved-work-delete').click();
    await expect.poll(() => page.getByRole('alert').filter({ hasText: `Delete ${ref}?` }).count()).toBe(1);
    await shot('18-saved-work-delete-asks');
    await page.getByTestId('saved-work-delete-yes').click();
    await row.waitFor({ state: 'detached' });
    // The board forgets it first (the row goes with that), then the ref goes: a kill between leaves the ref.
    await expect.poll(() => git(served.folder, 'for-each-ref', ref)).toBe('');
    // The restored folder is the person's: deleting the saved work leaves it.
    expect(fs.existsSync(join(into, 'notes.txt'))).toBe(true);
  }, 60_000);
});
