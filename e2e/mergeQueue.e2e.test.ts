import { describe, expect, it } from 'vitest';
import { withQuery } from './harness.js';
import { screenText, typeIn } from './pageActions.js';
import { git, servedNames } from './gitThread.js';
import { lagPage } from './pageLag.js';

import { windowForFile } from './windowForFile.js';
/**
 * Issue 34, the merge queue in the window, in Chromium against `forkbench serve` on a git Thread, with a shell
 * in a real pty running the real CLI and git. Three tasks wait on a fourth that is not done, so once approved
 * they wait in the queue, held: the panel lists them first to land first; dragging an entry reorders the queue
 * (dnd-kit's sortable list), and so do the keyboard's Up and Down buttons; once the task they wait on is done,
 * they land in the queue's order.
 */
const win = windowForFile({ repo: true });


const card = win.card;
const queueOrder = () => win.page.locator('[data-testid^="queue-item-"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')?.replace('queue-item-', '')));

async function addTask(title: string, id: string): Promise<void> {
  await win.page.getByTestId('add-task-title').fill(title);
  await win.page.getByTestId('add-task-submit').click();
  await card(id).waitFor();
}

/** The agent claims `id` (it waits on `gate`: forced), makes it wait on `gate`, commits `file` and says done. */
const workOn = (id: string, file: string, gate = 'T-1') =>
  `wt=$(forkbench claim ${id} --force --json | sed -n 's/.*"path":"\\([^"]*\\)".*/\\1/p') && forkbench edit ${id} --after ${gate} >/dev/null && (cd "$wt" && echo ${id} > ${file} && git add -A && git commit -qm ${id} && forkbench done ${id} >/dev/null) && echo "${id} submitted"`;

/** The shell the first test launched (the one agent of this window), once it runs. */
async function shellAgent(): Promise<string> {
  const tab = win.page.locator('[data-testid^="agent-tab-"]').first();
  await expect.poll(() => tab.getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
  return ((await tab.getAttribute('data-testid')) as string).replace('agent-tab-', '');
}

async function submit(agent: string, id: string, file: string, gate?: string): Promise<void> {
  await typeIn(win.page, agent, workOn(id, file, gate));
  await expect.poll(() => screenText(win.page, agent), { timeout: 15_000 }).toContain(`${id} submitted`);
  await expect.poll(() => card(id).getAttribute('data-state'), { timeout: 10_000 }).toBe('review');
}

async function approve(id: string): Promise<void> {
  await win.page.getByTestId(`diff-button-${id}`).click();
  await win.page.getByTestId('diff-view').waitFor();
  await win.page.getByTestId(`diff-approve-${id}`).click();
  await win.page.getByTestId(`queue-item-${id}`).waitFor();
}

/** Drag a queue entry onto another's place, as a hand does: press, move in steps, let go once it has moved. */
async function dragEntry(from: string, onto: string): Promise<void> {
  const a = await win.page.getByTestId(`queue-item-${from}`).locator('.card-id').boundingBox();
  const b = await win.page.getByTestId(`queue-item-${onto}`).boundingBox();
  if (!a || !b) throw new Error('queue entries are not on screen');
  await win.page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await win.page.mouse.down();
  await win.page.mouse.move(a.x + a.width / 2, b.y + b.height / 2 + 2, { steps: 12 });
  await expect.poll(() => win.page.getByTestId(`queue-item-${from}`).getAttribute('class')).toContain('dragging');
  await win.page.mouse.up();
}

describe('the merge queue in the window', () => {
  it('lists approved tasks first to land first, reorders by drag and by keyboard, and lands them in that order', async () => {
    await win.page.goto(withQuery(win.served.url, 'debug=1'));
    await expect.poll(() => win.page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await expect.poll(() => win.page.getByTestId('git-base').textContent()).toContain('main');
    await addTask('Gate', 'T-1');
    await addTask('Alpha', 'T-2');
    await addTask('Beta', 'T-3');
    await addTask('Gamma', 'T-4');
    expect(await win.page.getByTestId('merge-queue').count()).toBe(0);
    await win.page.getByTestId('launch-menu').click();
    await win.page.getByTestId('launch-shell').click();
    const agent = await shellAgent();
    for (const [id, file] of [['T-2', 'alpha.txt'], ['T-3', 'beta.txt'], ['T-4', 'gamma.txt']] as const) await submit(agent, id, file);
    for (const id of ['T-2', 'T-3', 'T-4']) await approve(id);
    expect(await queueOrder()).toEqual(['T-2', 'T-3', 'T-4']);
    expect(await win.page.getByTestId('merge-queue-check').textContent()).toBe('no verify command is set: merges land unchecked');
    expect(await win.page.getByTestId('queue-item-T-3').textContent()).toContain('waits on T-1');
    await win.shot('queue-01-three-held');

    // Drag T-4 onto T-2's place: it lands first now.
    await dragEntry('T-4', 'T-2');
    await expect.poll(queueOrder).toEqual(['T-4', 'T-2', 'T-3']);
    // The keyboard's way: T-3's Up button, then T-4's Down button.
    await win.page.getByTestId('queue-up-T-3').click();
    await expect.poll(queueOrder).toEqual(['T-4', 'T-3', 'T-2']);
    await win.page.getByTestId('queue-down-T-4').focus();
    await win.page.keyboard.press('Enter');
    await expect.poll(queueOrder).toEqual(['T-3', 'T-4', 'T-2']);
    await win.shot('queue-02-reordered');

    // T-1 done (claimed, done, approved: nothing to merge): the three land in the queue's order.
    await typeIn(win.page, agent, `forkbench claim T-1 >/dev/null && forkbench done T-1 >/dev/null && echo "T-1 submitted"`);
    await expect.poll(() => card('T-1').getAttribute('data-state'), { timeout: 10_000 }).toBe('review');
    await win.page.getByTestId('diff-button-T-1').click();
    await win.page.getByTestId('diff-view').waitFor();
    await win.page.getByTestId('diff-approve-T-1').click();
    for (const id of ['T-1', 'T-2', 'T-3', 'T-4']) await expect.poll(() => card(id).getAttribute('data-state'), { timeout: 20_000 }).toBe('done');
    await expect.poll(() => win.page.getByTestId('merge-queue').count()).toBe(0);
    expect(git(win.served.folder, 'log', '--first-parent', '--format=%s', '-3', 'main').split('\n')).toEqual([
      `Merge ${servedNames(win.served).branch('T-2')}: Alpha`,
      `Merge ${servedNames(win.served).branch('T-4')}: Gamma`,
      `Merge ${servedNames(win.served).branch('T-3')}: Beta`,
    ]);
  }, 120_000);

  it('an Up click right after a drag moves the entry, on a loaded machine too', async () => {
    // Two more held in the queue behind a gate of their own, T-5, which stays open.
    await addTask('Gate 2', 'T-5');
    await addTask('Delta', 'T-6');
    await addTask('Epsilon', 'T-7');
    const agent = await shellAgent();
    await submit(agent, 'T-6', 'delta.txt', 'T-5');
    await submit(agent, 'T-7', 'epsilon.txt', 'T-5');
    for (const id of ['T-6', 'T-7']) await approve(id);
    expect(await queueOrder()).toEqual(['T-6', 'T-7']);
    // The drag and the click come before any timer of the page runs, as under load.
    const undo = await lagPage(win.page);
    try {
      await dragEntry('T-7', 'T-6');
      await expect.poll(queueOrder).toEqual(['T-7', 'T-6']);
      await win.page.getByTestId('queue-up-T-6').click();
      await expect.poll(queueOrder, { timeout: 10_000 }).toEqual(['T-6', 'T-7']);
    } finally {
      await undo();
    }
  }, 60_000);
});
