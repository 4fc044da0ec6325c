import * as fs from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { JournalBoard } from '../src-main/board/journalBoard.js';
import { threadDirOf, threadKeyOf } from '../src-main/thread/threadHost.js';
import type { CompactTask } from '../src-shared/board/serialized.js';
import { boardUrlFile, startPgCluster, type PgCluster } from '../test/helpers/pgCluster.js';
import { SHOTS, type Served, type WindowSession, withQuery } from './harness.js';
import { VIEWPORT, windowForFile } from './windowForFile.js';
import { poorContrast, visibleTexts } from './pageAudit.js';
import { windowOn, type WindowClient } from './windowClient.js';

/**
 * Issue 45, item 1, in Chromium: a Thread whose board on this computer holds 200 tasks (notes, dependencies,
 * one in review, a verify command) is moved onto a shared board that another host (B) already uses. Saving the
 * URL in Thread settings asks first, saying how many tasks; "Copy" carries them: the panel shows each old id
 * with its new one, every task is on B with its notes, dependencies and state, and B's window shows where each
 * came from. Back to this computer's board (whole), then onto the shared board again with "Copy": nothing is
 * copied twice.
 */
const TASKS = 200;
/** B's own tasks on the shared board before the move: A's come after them, under new ids. */
const THEIRS = 3;
/** The review task's id on this computer. */
const IN_REVIEW = 'T-5';
const VERIFY = 'test -f package.json';
const BOARD_NAME = 'e2e move';
/** A change on one host reaches another's window by NOTIFY (or its 2 s poll): room for a loaded machine. */
const ACROSS_HOSTS_MS = 30_000;

/** Which tasks carry what, on this computer: a note on every tenth, T-n waits on T-(n-1) for every n ≡ 2 (mod 20). */
const noted = (n: number) => n % 10 === 0;
const waits = (n: number) => n % 20 === 2;

let pgc: PgCluster;
let url: string;
let a: WindowSession;
let b: Served;
let pageB: Page;
let hostB: WindowClient;
let keyB: string;

/** The local board, written as a host writes it, before A's serve starts on its folders. */
async function localBoardOf(root: string): Promise<void> {
  const folder = join(root, 'project');
  fs.mkdirSync(folder, { recursive: true });
  const key = threadKeyOf(folder);
  const j = await JournalBoard.open({ dir: threadDirOf(join(root, 'data'), key), threadId: key, goal: 'the parser, shipped' });
  for (let n = 1; n <= TASKS; n++) {
    const r = await j.run((e) => e.addTask({ title: `task ${n}`, body: `what task ${n} is about` }, 'user', waits(n) ? [`T-${n - 1}`] : undefined));
    if (!r.ok) throw new Error(r.error.message);
    if (noted(n)) await j.run((e) => e.userNote(`T-${n}`, `note on task ${n}`));
  }
  // One in review: its agent said done (its claim ended with the host that ran it).
  await j.run((e) => e.assign(IN_REVIEW, 'agent-x'));
  await j.run((e) => e.done('agent-x', IN_REVIEW));
  // The verify command, set after the review (done would have run it).
  await j.run((e) => e.setSettings({ verify: VERIFY }));
  await j.close();
}

const win = windowForFile(async () => {
  pgc = await startPgCluster();
  win.after(() => pgc?.dispose());
  url = await pgc.createDatabase('e2emove');
  const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-e2e-'));
  await localBoardOf(root);
  return { serve: { root } };
}, 180_000);

/** A folder for B's URL file, removed with the rest. */
let b0Dir: string | null = null;
function b0(): string {
  b0Dir ??= fs.mkdtempSync(join(tmpdir(), 'forkbench-e2e-url-'));
  return b0Dir;
}
win.after(() => b0Dir && fs.rmSync(b0Dir, { recursive: true, force: true }));

beforeAll(async () => {
  a = win.session;
  b = await win.serve({ args: ['--board-url-file', boardUrlFile(join(b0(), 'url'), url), '--board-name', BOARD_NAME] });
  keyB = threadKeyOf(b.folder);
  hostB = await windowOn(b);
  win.after(() => hostB?.close());
  pageB = await a.browser.newPage({ viewport: VIEWPORT });
  pageB.on('pageerror', (e) => console.error('page B error:', e.message));
}, 180_000);

async function opened(page: Page, served: Served): Promise<void> {
  await page.goto(withQuery(served.url, 'debug=1'));
  await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state'), { timeout: 20_000 }).toBe('connected');
  await page.getByTestId('thread-goal').waitFor();
}

/** B's board as its window gets it. */
const boardOnB = async () => (await hostB.call('thread.snapshot', { key: keyB })).board.tasks as CompactTask[];

/** Saves the URL in A's Shared board section: the dialog that asks comes up. */
async function saveUrl(page: Page): Promise<void> {
  await page.getByTestId('board-url').fill(url);
  await page.getByTestId('board-name').fill(BOARD_NAME);
  await page.getByTestId('board-save').click();
  await page.getByTestId('board-move-dialog').waitFor();
}

describe('moving a Thread onto a shared board, in Chromium', () => {
  it('asks, copies 200 tasks under new ids shown beside the old, every task on the other host as it was; a second move copies nothing', async () => {
    const pageA = a.page;
    await opened(pageA, a.served);
    await opened(pageB, b);
    for (let i = 1; i <= THEIRS; i++) await hostB.call('task.add', { key: keyB, title: `theirs ${i}` });

    await pageA.getByTestId('thread-settings').click();
    expect(await pageA.getByTestId('shared-board-current').textContent()).toContain('journal');
    expect(await pageA.getByTestId('settings-verify').inputValue()).toBe(VERIFY);
    expect(await pageA.getByTestId('shared-board').textContent()).toContain(`You are asked first what happens to the ${TASKS} tasks`);

    // Asked, saying how many and what each choice does; Cancel changes nothing.
    await saveUrl(pageA);
    const body = (await pageA.getByTestId('board-move-body').textContent()) ?? '';
    expect(body).toContain(`holds ${TASKS} tasks`);
    expect(body).toMatch(/Copy.*new ids/);
    expect(body).toMatch(/Start empty.*kept/);
    expect(await pageA.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('board-move-cancel');
    expect(poorContrast(await visibleTexts(pageA, '[data-testid="board-move-dialog"]'))).toEqual([]);
    await a.shot('board-move-01-asked');
    await pageA.getByTestId('board-move-cancel').click();
    await pageA.getByTestId('board-move-dialog').waitFor({ state: 'detached' });
    expect(await pageA.getByTestId('shared-board-current').textContent()).toContain('journal');
    expect((await boardOnB()).length).toBe(THEIRS);

    // Copy.
    await saveUrl(pageA);
    await pageA.getByTestId('board-move-copy').click();
    await expect.poll(() => pageA.getByTestId('shared-board-current').textContent(), { timeout: 60_000 }).toContain(`board ${BOARD_NAME}`);
    const summary = pageA.getByTestId('board-carried-summary');
    await summary.waitFor();
    expect(await summary.textContent()).toContain(`copied ${TASKS} tasks of the local board of ${a.served.folder} on ${hostname()}`);
    expect(await summary.textContent()).toContain(`T-1…T-${TASKS} → T-${THEIRS + 1}…T-${THEIRS + TASKS}`);
    await pageA.getByTestId('board-carried').locator('summary').click();
    for (const n of [1, 5, TASKS]) expect(await pageA.getByTestId(`carried-T-${n}`).textContent()).toBe(`T-${n} → T-${n + THEIRS}`);
    // The settings form, open through the move, now shows the shared board's settings (it keeps its own: no verify).
    await expect.poll(() => pageA.getByTestId('settings-verify').inputValue()).toBe('');
    await a.shot('board-move-02-copied');

    // On B: every task, with its notes, dependencies and state, under its new id and saying its old one.
    await expect.poll(async () => (await boardOnB()).length, { timeout: ACROSS_HOSTS_MS }).toBe(THEIRS + TASKS);
    const onB = new Map((await boardOnB()).map((t) => [t.id, t]));
    for (let n = 1; n <= TASKS; n++) {
      const t = onB.get(`T-${n + THEIRS}`);
      expect(t?.title).toBe(`task ${n}`);
      expect(t?.copiedFrom?.taskId).toBe(`T-${n}`);
      expect(t?.state).toBe(`T-${n}` === IN_REVIEW ? 'review' : 'open');
      expect(t?.after ?? []).toEqual(waits(n) ? [`T-${n - 1 + THEIRS}`] : []);
      expect(t?.omitted?.notes ?? 0).toBe(noted(n) ? 1 : 0);
    }
    for (const n of [10, 100, 200]) {
      const d = await hostB.call('task.details', { key: keyB, taskId: `T-${n + THEIRS}` });
      expect(d.notes.map((x) => x.text)).toEqual([`note on task ${n}`]);
      expect(d.body).toBe(`what task ${n} is about`);
    }
    expect((await hostB.call('thread.snapshot', { key: keyB })).board.settings.verify).toBeNull();
    // The board in use kept its verify (none); each carried task has the one it was checked by.
    expect(onB.get(`T-${1 + THEIRS}`)?.verify).toBe(VERIFY);

    // B's window: the review task in Review, saying where it came from; a noted one's details show its note.
    await opened(pageB, b);
    const reviewId = `T-${5 + THEIRS}`;
    await pageB.getByTestId('board-search').fill('task 5');
    const reviewCard = pageB.getByTestId(`card-${reviewId}`);
    await expect.poll(() => reviewCard.getAttribute('data-state'), { timeout: ACROSS_HOSTS_MS }).toBe('review');
    expect(await pageB.getByTestId(`card-copied-${reviewId}`).textContent()).toBe('was T-5');
    await pageB.getByTestId('board-search').fill('task 22');
    await pageB.getByTestId(`card-T-${22 + THEIRS}`).locator('.card-title').click();
    const details = pageB.getByTestId('task-details');
    await details.waitFor();
    expect(await details.getByTestId('details-copied-from').textContent()).toContain('T-22');
    expect(await details.getByTestId('details-after-input').inputValue()).toBe(`T-${21 + THEIRS}`);
    await pageB.keyboard.press('Escape');
    await pageB.getByTestId('board-search').fill('task 20');
    await pageB.getByTestId(`card-T-${20 + THEIRS}`).locator('.card-title').click();
    await details.waitFor();
    await expect.poll(() => details.getByTestId('note-text').first().textContent()).toBe('note on task 20');
    await pageB.screenshot({ path: join(SHOTS, 'board-move-03-on-b.png') });
    await pageB.keyboard.press('Escape');

    // Back to this computer's board: whole, under its own ids.
    await pageA.getByTestId('board-journal').click();
    await expect.poll(() => pageA.getByTestId('shared-board-current').textContent(), { timeout: 60_000 }).toContain('journal');
    const hostA = await windowOn(a.served);
    const onA = (await hostA.call('thread.snapshot', { key: threadKeyOf(a.served.folder) })).board;
    hostA.close();
    expect(onA.tasks.length).toBe(TASKS);
    expect(onA.settings.verify).toBe(VERIFY);
    expect(onA.tasks.find((t) => t.id === IN_REVIEW)?.state).toBe('review');
    await expect.poll(() => pageA.getByTestId('settings-verify').inputValue()).toBe(VERIFY);

    // The move again, "Copy" again: nothing twice, and the panel says which ids they have there.
    await saveUrl(pageA);
    await pageA.getByTestId('board-move-copy').click();
    await expect.poll(() => pageA.getByTestId('shared-board-current').textContent(), { timeout: 60_000 }).toContain(`board ${BOARD_NAME}`);
    await expect.poll(() => pageA.getByTestId('board-carried-summary').textContent()).toContain(`copied no task of the local board of ${a.served.folder} on ${hostname()}; ${TASKS} tasks were copied before and were not copied again`);
    await pageA.getByTestId('board-carried').locator('summary').click();
    expect(await pageA.getByTestId('carried-T-1').textContent()).toBe(`T-1 → T-${1 + THEIRS}`);
    await a.shot('board-move-04-again');
    expect((await boardOnB()).length).toBe(THEIRS + TASKS);
  }, 300_000);
});
