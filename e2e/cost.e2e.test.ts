import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { axeViolations, describeViolations } from './axe.js';
import { screenText, typeIn } from './pageActions.js';
import { windowOn } from './windowClient.js';
import { windowForFile } from './windowForFile.js';
import { withQuery } from './harness.js';

/**
 * Issue 47, item 4 in the window: a real shell pane reports what its turns spent with `forkbench usage`, once as
 * its own overhead and twice under its claim on T-1 (one turn priced by the CLI's own figure, one by the board's
 * bundled price table); the card, the details panel (breakdown, sparkline, claims), the agent list, the merge
 * queue's entry and the Thread summary show exactly those figures, and its CSV downloads them. Each is reached
 * with the keyboard, and axe finds nothing to fault in them.
 *
 * The figures: turn 1, 1,200 input + 340 output + 5,000 cache read + 100 cache write at the CLI's $0.0315; turn 2,
 * 1,000 input + 200 output of claude-sonnet-4 at the bundled $3 and $15 per million: $0.003 + $0.003 = $0.006. On
 * T-1: $0.0375 and 7,840 tokens. The overhead turn: 10 + 5 tokens at $0.001; the agent in all: $0.0385.
 */
const win = windowForFile({ repo: true });

const TURN_1 = 'forkbench usage --input 1200 --output 340 --cache-read 5000 --cache-write 100 --model claude-sonnet-4-5 --cost 0.0315';
const TURN_2 = 'forkbench usage --input 1000 --output 200 --model claude-sonnet-4';
const OVERHEAD = 'forkbench usage --input 10 --output 5 --cost 0.001';

describe('cost in the window', () => {
  let agent = '';
  let name = '';

  it('a pane’s reported turns show on the card, in the details panel and in the agent list, exactly', async () => {
    const { page } = win;
    // debug=1: the terminal's text is read through the page's debug hook (screenText).
    await page.goto(withQuery(win.served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    const host = await windowOn(win.served);
    const [thread] = await host.call('threads.list', {});
    await host.call('task.add', { key: thread!.key, title: 'Port the parser', writeKey: 'cost-e2e-add-1' });
    await host.call('task.add', { key: thread!.key, title: 'Write the grammar', writeKey: 'cost-e2e-add-2' });
    await win.card('T-2').waitFor();
    agent = (await host.call('agent.launch', { key: thread!.key, profile: 'shell', cols: 100, rows: 30 })).id;
    host.close();
    const tab = page.getByTestId(`agent-tab-${agent}`);
    await expect.poll(() => tab.getAttribute('data-status'), { timeout: 15_000 }).toBe('running');
    name = (await tab.getAttribute('data-name'))!;

    // Spent holding nothing: the agent's own overhead, on no card.
    await typeIn(page, agent, OVERHEAD);
    await expect.poll(() => page.getByTestId('thread-cost-today').textContent(), { timeout: 15_000 }).toBe('today $0.001');
    expect(await page.getByTestId('card-cost-T-1').count()).toBe(0);

    // The claim's worktree kept in the shell, for the commit the last test makes there.
    await typeIn(page, agent, `wt=$(forkbench claim T-1 --json | sed -n 's/.*"path":"\\([^"]*\\)".*/\\1/p')`);
    await expect.poll(() => win.card('T-1').getAttribute('data-state'), { timeout: 15_000 }).toBe('claimed');
    await typeIn(page, agent, TURN_1);
    await expect.poll(() => page.getByTestId('card-cost-T-1').textContent(), { timeout: 15_000 }).toBe('$0.0315');
    await typeIn(page, agent, TURN_2);
    await expect.poll(() => page.getByTestId('card-cost-T-1').textContent(), { timeout: 15_000 }).toBe('$0.0375');
    expect(await page.getByTestId('card-cost-T-1').getAttribute('aria-label')).toBe('spent $0.0375; 7,840 tokens in 2 turns');
    // Held alone: nothing was counted as "the task it last acted on".
    expect(await page.getByTestId('card-cost-T-1-last-acted').count()).toBe(0);
    await win.shot('cost-01-card');

    // The details panel, opened from the keyboard: the card is one Tab stop, Enter opens it.
    await win.card('T-1').focus();
    await page.keyboard.press('Enter');
    const details = page.getByTestId('task-details');
    await details.waitFor();
    const cost = details.getByTestId('details-cost');
    expect(await cost.getByTestId('details-cost-spent').textContent()).toBe('$0.0375');
    expect(await cost.getByTestId('details-cost-turns').textContent()).toBe('7,840 tokens in 2 turns');
    const kinds = Object.fromEntries(await Promise.all(['input', 'cacheRead', 'cacheWrite', 'output', 'reasoning'].map(async (k) => [k, await cost.getByTestId(`details-cost-${k}`).textContent()])));
    expect(kinds).toEqual({ input: '2,200', cacheRead: '5,000', cacheWrite: '100', output: '540', reasoning: '0' });
    expect(await cost.getByTestId(`details-cost-agent-${agent}`).locator('th').textContent()).toBe(name);
    expect(await cost.getByTestId(`details-cost-agent-spent-${agent}`).textContent()).toBe('$0.0375');
    expect(await cost.getByTestId(`details-cost-agent-tokens-${agent}`).textContent()).toBe('7,840');
    await expect.poll(() => cost.getByTestId('details-cost-claim-count').textContent()).toBe('1 claim');
    expect(await cost.getByTestId('details-cost-lapses').textContent()).toBe('0 lapses');
    expect(await cost.getByTestId('details-cost-held').textContent()).toMatch(/^\d+ s worked under claims$/);
    // The sparkline is an image a screen reader names in words.
    const spark = details.getByRole('img', { name: /^Spend over \d+ s: from \$0\.0315 to \$0\.0375 in 2 steps$/ });
    expect(await spark.getAttribute('data-testid')).toBe('details-sparkline');
    expect(describeViolations(await axeViolations(page, '[data-testid="task-details"]'))).toBe('');
    await win.shot('cost-02-details');
    await page.keyboard.press('Escape');
    await details.waitFor({ state: 'detached' });

    // The agent list (Alt+Shift+A): its spend, its overhead apart.
    await page.keyboard.press('Alt+Shift+A');
    const item = page.getByTestId(`agent-list-item-${agent}`);
    await item.waitFor();
    expect(await item.getByTestId(`agent-spend-total-${agent}`).textContent()).toBe('spent $0.0385');
    expect(await item.getByTestId(`agent-spend-overhead-${agent}`).textContent()).toBe('overhead $0.001');
    // Its item is focused, and a screen reader hears the spend in the item's name.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe(`agent-list-item-${agent}`);
    expect(await page.getByRole('menuitemradio', { name: /spent \$0\.0385 overhead \$0\.001/ }).count()).toBe(1);
    expect(describeViolations(await axeViolations(page, '[data-testid="agent-list"]'))).toBe('');
    await win.shot('cost-03-agent-list');
    await page.keyboard.press('Escape');
  }, 90_000);

  it('the Thread summary says today and this week, names the costliest task, and exports the same figures as CSV', async () => {
    const { page } = win;
    expect(await page.getByTestId('thread-cost-today').textContent()).toBe('today $0.0385');
    expect(await page.getByTestId('thread-cost-week').textContent()).toBe('this week $0.0385');
    const toggle = page.getByTestId('thread-cost-toggle');
    await toggle.focus();
    await page.keyboard.press('Enter');
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    expect(await page.getByTestId('thread-cost-total').textContent()).toBe('all told $0.0385 (7,855 tokens)');
    expect(await page.getByTestId('thread-cost-overhead').textContent()).toBe('agents’ overhead $0.001');
    expect(await page.getByTestId('thread-cost-top').locator('li').allTextContents()).toEqual(['T-1 Port the parser $0.0375']);
    expect(describeViolations(await axeViolations(page, '[data-testid="thread-cost"]'))).toBe('');
    await win.shot('cost-04-thread-summary');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('thread-cost-csv').click()]);
    const csv = fs.readFileSync((await download.path())!, 'utf8');
    // The host's CSV (cost.csv, as `forkbench cost --csv`): the Thread, each task, each agent and its overhead,
    // each profile and each UTC day.
    const day = new Date().toISOString().slice(0, 10);
    expect(csv.split('\r\n')).toEqual([
      'scope,id,label,input,output,cache_read,cache_write,reasoning,usd,unpriced_turns,turns',
      'thread,,,2210,545,5000,100,0,0.0385,0,3',
      'task,T-1,Port the parser,2200,540,5000,100,0,0.0375,0,2',
      `agent,${agent},shell,2210,545,5000,100,0,0.0385,0,3`,
      `agent-overhead,${agent},shell,10,5,0,0,0,0.001,0,1`,
      'profile,shell,,2210,545,5000,100,0,0.0385,0,3',
      `day,${day},,2210,545,5000,100,0,0.0385,0,3`,
      '',
    ]);
  }, 60_000);

  it('the merge queue entry says what landing the task cost', async () => {
    const { page } = win;
    // T-1 waits on T-2, which is not done: approved, it stays in the queue, held, for the panel to show.
    await typeIn(page, agent, 'forkbench edit T-1 --after T-2 >/dev/null && (cd "$wt" && echo parsed > parser.txt && git add -A && git commit -qm parser && forkbench done T-1 >/dev/null) && echo "T-1 submitted"');
    await expect.poll(() => screenText(page, agent), { timeout: 15_000 }).toContain('T-1 submitted');
    await expect.poll(() => win.card('T-1').getAttribute('data-state'), { timeout: 15_000 }).toBe('review');
    await page.getByTestId('diff-button-T-1').click();
    await page.getByTestId('diff-view').waitFor();
    await page.getByTestId('diff-approve-T-1').click();
    const entry = page.getByTestId('queue-item-T-1');
    await entry.waitFor();
    expect(await entry.getByTestId('queue-cost-T-1').textContent()).toBe('$0.0375');
    expect(await entry.getByTestId('queue-cost-T-1').getAttribute('aria-label')).toBe('spent $0.0375; 7,840 tokens in 2 turns');
    // The figure itself (the entry around it, a <li> dnd-kit gives role=button, is faulted by axe's minor
    // aria-allowed-role as it was before this figure: the queue's own, not this test's).
    expect(describeViolations(await axeViolations(page, '[data-testid="queue-cost-T-1"]'))).toBe('');
    await win.shot('cost-05-merge-queue');
  }, 60_000);

  it('Thread settings: prices of the Thread’s own price the turns after them; a wrong line is named and nothing is sent', async () => {
    const { page } = win;
    await page.getByTestId('thread-settings').click();
    const prices = page.getByTestId('settings-prices');
    await prices.fill('my-model 2');
    await page.getByTestId('settings-prices-save').click();
    expect(await page.getByTestId('settings-prices-error').textContent()).toBe('line 1: a model and 2 to 4 prices (input, output, cache read, cache write), e.g. "my-model 3 15"');
    // $2 and $10 per million: 1,000 input and 100 output tokens are $0.002 + $0.001.
    await prices.fill('my-model 2 10');
    await page.getByTestId('settings-prices-save').click();
    await expect.poll(() => page.getByTestId('settings-prices-error').count()).toBe(0);
    // On the board before the turn is reported: the fold prices a turn with the prices as they are then.
    const host = await windowOn(win.served);
    const [thread] = await host.call('threads.list', {});
    await expect.poll(async () => (await host.call('thread.snapshot', { key: thread!.key })).board.settings.prices).toEqual({ 'my-model': { input: 2, output: 10, cacheRead: 2, cacheWrite: 2 } });
    host.close();
    expect(describeViolations(await axeViolations(page, '[data-testid="cost-settings"]'))).toBe('');
    await win.shot('cost-06-settings');
    // Closed with Escape from the settings' form, as a person leaves it.
    await page.getByTestId('settings-lease').press('Escape');
    await expect.poll(() => page.getByTestId('settings-prices').count()).toBe(0);
    await typeIn(page, agent, 'forkbench usage --input 1000 --output 100 --model my-model');
    await expect.poll(() => page.getByTestId('thread-cost-today').textContent(), { timeout: 15_000 }).toBe('today $0.0415');
  }, 60_000);

  it('a task’s budget: set in its details, a mistake named and nothing sent, the notice at 80%, and at 100% the person raises it or stops the agent', async () => {
    const { page } = win;
    const host = await windowOn(win.served);
    const [thread] = await host.call('threads.list', {});
    await host.call('task.add', { key: thread!.key, title: 'Tune the cache', writeKey: 'cost-e2e-add-3' });
    host.close();
    await win.card('T-3').waitFor();
    await typeIn(page, agent, 'forkbench claim T-3');
    await expect.poll(() => win.card('T-3').getAttribute('data-state'), { timeout: 15_000 }).toBe('claimed');

    await win.card('T-3').focus();
    await page.keyboard.press('Enter');
    const details = page.getByTestId('task-details');
    await details.waitFor();
    const amount = details.getByTestId('details-budget-amount');
    await amount.fill('five');
    await amount.press('Enter');
    expect(await details.getByTestId('details-budget-error').textContent()).toBe('"five" is not an amount of dollars above nothing (e.g. 5 or 4.50)');
    expect(await amount.getAttribute('aria-invalid')).toBe('true');
    await amount.fill('1');
    await amount.press('Enter');
    await expect.poll(() => page.locator('[data-testid="log-entry"]').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('T-3')]));
    expect(await details.getByTestId('details-budget-error').count()).toBe(0);
    // Set, the field shows the board's budget and keeps the focus: Escape still closes the panel from it.
    await expect.poll(() => amount.inputValue()).toBe('1');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('details-budget-amount');
    expect(describeViolations(await axeViolations(page, '[data-testid="task-details"]'))).toBe('');
    await page.keyboard.press('Escape');
    await details.waitFor({ state: 'detached' });

    await typeIn(page, agent, 'forkbench usage --input 100 --output 10 --cost 0.85');
    const alert = page.getByTestId('budget-alert-T-3');
    await expect.poll(() => alert.getAttribute('data-level'), { timeout: 15_000 }).toBe('notice');
    expect(await alert.getByTestId('budget-alert-T-3-text').textContent()).toBe('T-3 has spent $0.85 of $1.00: past 80% of its budget.');
    // The agent holds T-1 (in review) and T-3: its turns count to T-3, the task it last acted on, marked so.
    expect(await page.getByTestId('card-cost-T-3-last-acted').count()).toBe(1);
    expect(await page.getByTestId('card-cost-T-3').getAttribute('aria-label')).toBe('spent $0.85; 110 tokens in 1 turn; 1 turn counted here as the task its agent last acted on, while it held several');
    await typeIn(page, agent, 'forkbench usage --input 100 --output 10 --cost 0.2');
    await expect.poll(() => alert.getAttribute('data-level'), { timeout: 15_000 }).toBe('stop');
    expect(await alert.getByTestId('budget-alert-T-3-text').textContent()).toBe('T-3 reached its budget: $1.05 of $1.00. It is not dispatched again, and its agent was told.');
    expect(describeViolations(await axeViolations(page, '[data-testid="budget-alerts"]'))).toBe('');
    await win.shot('cost-07-budget-reached');

    // Raise: the field offers half as much again; the budget is no longer near its limit, so the line goes.
    const raise = alert.getByTestId('budget-alert-T-3-raise-amount');
    expect(await raise.inputValue()).toBe('1.5');
    await raise.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => alert.count(), { timeout: 10_000 }).toBe(0);

    // Spent again: this time the person stops the agent, asked first as closing an agent always is.
    await typeIn(page, agent, 'forkbench usage --input 100 --output 10 --cost 0.5');
    await expect.poll(() => alert.getAttribute('data-level'), { timeout: 15_000 }).toBe('stop');
    await alert.getByTestId('budget-alert-T-3-stop').click();
    await page.getByTestId('confirm-dialog').waitFor();
    expect(await page.getByTestId('confirm-dialog').textContent()).toContain(`Close ${name}?`);
    await page.getByTestId('confirm-ok').click();
    await expect.poll(() => page.getByTestId(`agent-tab-${agent}`).count(), { timeout: 15_000 }).toBe(0);
    await expect.poll(() => win.card('T-3').getAttribute('data-state'), { timeout: 15_000 }).toBe('open');
  }, 90_000);
});
