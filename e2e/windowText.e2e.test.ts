import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { Limits } from '../src-shared/board/limits.js';
import { threadKeyOf } from '../src-main/thread/threadHost.js';
import { legacyNote, legacyTask, legacyThread, writeLegacyJournal } from '../test/helpers/legacyJournal.js';
import { type Served, type WindowSession, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';

/**
 * Issue 20, finding 7, in Debian's Chromium against `forkbench serve`:
 * - text an older journal holds with controls (U+202E reverses what follows, ESC starts a terminal command)
 *   is drawn with each control as a visible escape, isolated from what is around it (<bdi>);
 * - limits show while typing: a count, and past the limit a reason that keeps the form from being sent
 *   (add-task title and details, the goal, a card's edit, the reason dialog).
 */
const RLO_TITLE = 'fix the \u202eevil\u202c parser \x1b[2J';
const RLO_NOTE = 'looks \u202edone\u202c to me';
const ESC_GOAL = 'ship \x1b[31mred\x1b[0m';

let w: WindowSession;
let served: Served;
let page: Page;

const win = windowForFile({
  serve: {
    // The Thread's journal as an older Forkbench wrote it, before the board refused these characters.
    prepare: (folder) => {
      const key = threadKeyOf(folder);
      writeLegacyJournal(join(folder, '..', 'data', 'threads', key), [legacyThread(key, ESC_GOAL), legacyTask('T-1', RLO_TITLE, 'body \u202ereversed'), legacyNote('T-1', RLO_NOTE)]);
    },
  },
});

beforeAll(() => {
  w = win.session;
  ({ served, page } = w);
});

const card = (id: string) => page.getByTestId(`card-${id}`);
/** Any raw control or bidi character the page would draw: there must be none. */
const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('journal text and limits in the window', () => {
  it('an old title with U+202E and ESC is drawn as escapes, isolated, on the card, in the details and in the log', async () => {
    await page.goto(withQuery(served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await card('T-1').waitFor();
    const title = page.getByTestId('card-title-T-1');
    expect(await title.textContent()).toBe('fix the \\u202eevil\\u202c parser \\x1b[2J');
    expect(await title.evaluate((el) => el.tagName)).toBe('BDI');
    expect(await card('T-1').locator('.card-body').textContent()).toBe('body \\u202ereversed');
    expect(await page.getByTestId('thread-goal').textContent()).toBe('ship \\x1b[31mred\\x1b[0m');
    // the card's accessible name is the same visible text
    expect(await card('T-1').getAttribute('aria-label')).toBe('T-1: fix the \\u202eevil\\u202c parser \\x1b[2J');

    await title.click();
    const details = page.getByTestId('task-details');
    await details.waitFor();
    expect(await details.locator('#details-title').textContent()).toBe('fix the \\u202eevil\\u202c parser \\x1b[2J');
    await expect.poll(() => details.getByTestId('note-text').textContent()).toBe('looks \\u202edone\\u202c to me');
    await expect.poll(() => details.getByTestId('details-history').textContent()).toContain('\\u202e');
    expect(await page.locator('[data-testid="log-entry"]').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('fix the \\u202eevil')]));
    // nowhere on the page is one drawn raw
    const text = await page.evaluate(() => document.body.innerText);
    const raw = RAW.exec(text);
    expect(raw && JSON.stringify(text.slice(Math.max(0, raw.index - 40), raw.index + 40))).toBeNull();
    await w.shot('text-01-old-journal-escapes');
    await page.keyboard.press('Escape');
    await details.waitFor({ state: 'detached' });

    // The command palette names the task it opens with the same escapes.
    await page.keyboard.press('Control+k');
    await page.getByTestId('palette-input').fill('evil');
    expect(await page.getByTestId('palette-item-open-task-T-1').textContent()).toContain('Open T-1 “fix the \\u202eevil\\u202c parser \\x1b[2J”');
    const inPalette = await page.getByTestId('command-palette').evaluate((el) => (el as HTMLElement).innerText);
    expect(RAW.exec(inPalette)).toBeNull();
    await page.keyboard.press('Escape');
    await page.getByTestId('command-palette').waitFor({ state: 'detached' });
  });

  it('limits show while typing, and past them the form is not sent and says why', async () => {
    const titleInput = page.getByTestId('add-task-title');
    const submit = page.getByTestId('add-task-submit');
    await titleInput.fill('t'.repeat(Limits.maxTitleChars));
    expect(await page.getByTestId('add-task-title-count').textContent()).toBe('500 / 500');
    expect(await submit.isEnabled()).toBe(true);
    await titleInput.press('End');
    await page.keyboard.type('!');
    expect(await page.getByTestId('add-task-title-count').textContent()).toBe('501 / 500');
    expect(await page.getByTestId('add-task-title-count').getAttribute('data-over')).toBe('true');
    expect(await submit.isDisabled()).toBe(true);
    expect(await page.getByTestId('add-task-limit').textContent()).toBe('The title is 501 characters; at most 500 fit. Remove 1 to continue.');
    // Ctrl+Enter in Details does not send it either
    await page.getByTestId('add-task-body').press('Control+Enter');
    expect(await page.locator('[data-testid^="card-T-"][data-state]').count()).toBe(1);
    await w.shot('text-02-title-over-limit');
    await titleInput.press('End');
    await titleInput.press('Backspace');
    await expect.poll(() => submit.isEnabled()).toBe(true);
    expect(await page.getByTestId('add-task-limit').count()).toBe(0);

    const body = page.getByTestId('add-task-body');
    await body.fill('b'.repeat(Limits.maxBodyChars));
    await body.press('End');
    await page.keyboard.type('!');
    expect(await page.getByTestId('add-task-body-count').textContent()).toBe('65,537 / 65,536');
    expect(await submit.isDisabled()).toBe(true);
    expect(await page.getByTestId('add-task-limit').textContent()).toContain('The details text is 65,537 characters');
    await body.fill('');
    await titleInput.fill('Second task');
    await submit.click();
    await card('T-2').waitFor();
    // After that round trip, nothing over a limit was ever sent: no refusal came back, and the second task
    // is T-2, not T-3.
    expect(await page.getByTestId('card-title-T-2').textContent()).toBe('Second task');
    expect(await page.getByTestId('error-line').count()).toBe(0);

    // The goal: Enter past its limit keeps the editor open with the reason; Escape gives the change up.
    await page.getByTestId('thread-goal').click();
    const goal = page.getByTestId('goal-input');
    await goal.fill('g'.repeat(Limits.maxGoalChars));
    await goal.press('End');
    await page.keyboard.type('!');
    expect(await page.getByTestId('goal-count').getAttribute('data-over')).toBe('true');
    await goal.press('Enter');
    expect(await goal.isVisible()).toBe(true);
    expect(await page.getByTestId('goal-limit').textContent()).toContain('The goal is 65,537 characters');
    await w.shot('text-03-goal-over-limit');
    await goal.press('Escape');
    await expect.poll(() => page.getByTestId('thread-goal').textContent()).toBe('ship \\x1b[31mred\\x1b[0m');

    // A card's edit: Save is off past the limit.
    await page.getByTestId('edit-T-2').click();
    const editTitle = page.getByTestId('edit-title-T-2');
    await editTitle.fill('e'.repeat(Limits.maxTitleChars));
    await editTitle.press('End');
    await page.keyboard.type('!');
    expect(await page.getByTestId('edit-title-count-T-2').textContent()).toBe('501 / 500');
    expect(await page.getByTestId('edit-save-T-2').isDisabled()).toBe(true);
    expect(await page.getByTestId('edit-limit-T-2').textContent()).toContain('The title is 501 characters');
    await w.shot('text-04-edit-over-limit');
    await editTitle.press('Escape');

    // The reason dialog (Block): OK is off past the limit and Enter does not send; a fitting reason does.
    await page.getByTestId('block-T-2').click();
    const reason = page.getByTestId('prompt-input');
    await reason.fill('r'.repeat(Limits.maxNoteChars));
    await reason.press('End');
    await page.keyboard.type('!');
    expect(await page.getByTestId('prompt-count').textContent()).toBe('65,537 / 65,536');
    expect(await page.getByTestId('prompt-ok').isDisabled()).toBe(true);
    expect(await page.getByTestId('prompt-limit').textContent()).toContain('The reason is 65,537 characters');
    await reason.press('Enter');
    expect(await page.getByTestId('prompt-dialog').isVisible()).toBe(true);
    expect(await card('T-2').getAttribute('data-state')).toBe('open');
    await w.shot('text-05-reason-over-limit');
    await reason.fill('waiting on the API');
    await reason.press('Enter');
    await expect.poll(() => card('T-2').getAttribute('data-state')).toBe('blocked');
    expect(await page.getByTestId('card-blocked-T-2').textContent()).toBe('blocked: waiting on the API');
  }, 60_000);
});
