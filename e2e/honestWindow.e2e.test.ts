/**
 * Issue 32, findings 4 and 6, in Debian's Chromium against `forkbench serve` (a real process, real ptys):
 * - a made-up link is said as never given out, a used one as used;
 * - a reject needs a reason: the dialog's OK stays disabled while the reason is blank, and the host refuses a
 *   blank reason sent to it directly;
 * - a drop (mouse or keyboard) or "Assign to…" that takes a claimed task from a live agent asks first, naming
 *   the holder and the task; Cancel leaves the holder, confirming moves it; an unclaimed task is not asked;
 * - after a Ctrl-C that ended the agents, the next run lists them (how they ended, what they held) with
 *   Relaunch (same name, Thread folder), Resume (a CLI that keeps a conversation) and Dismiss.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { SHOTS, type Served, withQuery } from './harness.js';
import { type ServeOptions, windowForFile } from './windowForFile.js';
import { agentTabIds, dragCard, launchFromMenu, screenText, typeIn, confirmAfterDrop } from './pageActions.js';
import { windowOn } from './windowClient.js';

const FAKE_CLI = join(import.meta.dirname, '..', 'test', 'fixtures', 'fakeSessionCli.sh');

const win = windowForFile({ page: false });
const dirs: string[] = [];
win.after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const serve = (o: ServeOptions = {}): Promise<Served> => win.serve(o);

async function newPage(link: string): Promise<Page> {
  fs.mkdirSync(SHOTS, { recursive: true });
  const page = await win.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.goto(withQuery(link, 'debug=1'));
  return page;
}

const connection = (page: Page) => page.getByTestId('connection-status').getAttribute('data-state');
const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`) });
const holder = (page: Page, taskId: string) => page.getByTestId(`card-${taskId}`).getAttribute('data-holder');

async function addTasks(page: Page, titles: string[]): Promise<void> {
  for (const title of titles) {
    await page.getByTestId('add-task-title').fill(title);
    await page.getByTestId('add-task-submit').click();
  }
  await page.getByTestId(`card-T-${titles.length}`).waitFor();
}

describe('the small honest things', () => {
  it('says a made-up link was never given out, and a used one was used', async () => {
    const s = await serve();
    const first = await newPage(s.url);
    await expect.poll(() => connection(first)).toBe('connected');

    // The same link in a browser with no session: it was used.
    const used = await newPage(s.url);
    await expect.poll(() => connection(used), { timeout: 5000 }).toBe('link-spent');
    expect(await used.getByTestId('connection-banner').textContent()).toMatch(/This link was used already/);
    await shot(used, 'honest-01-link-used');

    // A code of the same length and alphabet that the host never gave out: said as such, not as used.
    const madeUp = await newPage(`http://${s.host}:${s.port}/#code=${'Q'.repeat(43)}`);
    await expect.poll(() => connection(madeUp), { timeout: 5000 }).toBe('link-unknown');
    const banner = (await madeUp.getByTestId('connection-banner').textContent()) ?? '';
    expect(banner).toMatch(/This host never gave out this link/);
    expect(banner).not.toMatch(/used already/);
    await shot(madeUp, 'honest-02-link-made-up');
    for (const p of [first, used, madeUp]) await p.context().close();
  }, 60_000);

  it('a reject needs a reason, in the dialog and at the host; a drop or Assign that takes a working agent’s task asks', async () => {
    const s = await serve();
    const page = await newPage(s.url);
    await expect.poll(() => connection(page)).toBe('connected');
    await addTasks(page, ['Port the parser', 'Write the changelog', 'Tidy the README']);
    const a = await launchFromMenu(page);
    const b = await launchFromMenu(page);
    const nameOf = async (id: string) => (await page.getByTestId(`agent-tab-${id}`).getAttribute('data-name')) as string;
    const [nameA, nameB] = [await nameOf(a), await nameOf(b)];

    // --- A reject needs a reason.
    await typeIn(page, a, 'forkbench claim T-1 && forkbench done T-1');
    await expect.poll(() => page.getByTestId('card-T-1').getAttribute('data-state'), { timeout: 10_000 }).toBe('review');
    await page.getByTestId('reject-T-1').click();
    const ok = page.getByTestId('prompt-ok');
    expect(await ok.isDisabled()).toBe(true);
    expect(await page.getByTestId('prompt-missing').textContent()).toMatch(/A reject needs a reason/);
    await page.getByTestId('prompt-input').fill('   ');
    expect(await ok.isDisabled()).toBe(true);
    await shot(page, 'honest-03-reject-needs-reason');
    // Enter on a blank reason sends nothing either.
    await page.getByTestId('prompt-input').press('Enter');
    expect(await page.getByTestId('prompt-dialog').count()).toBe(1);
    await page.getByTestId('prompt-cancel').click();
    // The host refuses a blank reason sent to it directly, by the one protocol definition, and changes nothing.
    const host = await windowOn(s);
    const [thread] = await host.call('threads.list', {});
    const refused = await host.call('task.reject', { key: thread!.key, taskId: 'T-1', reason: ' ' }).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(refused).toMatch(/invalid-input/);
    expect(refused).toMatch(/a reject needs a reason/);
    host.close();
    expect(await page.getByTestId('card-T-1').getAttribute('data-state')).toBe('review');
    // With a reason: sent back, and the card says why.
    await page.getByTestId('reject-T-1').click();
    await page.getByTestId('prompt-input').fill('keep the old tests');
    expect(await ok.isDisabled()).toBe(false);
    await ok.click();
    await expect.poll(() => page.getByTestId('card-T-1').getAttribute('data-state')).toBe('claimed');
    expect(await page.getByTestId('card-sent-back-T-1').textContent()).toBe('rejected: keep the old tests');

    // --- A drop that takes a claimed task from a working agent asks, naming whose work it interrupts.
    await typeIn(page, a, 'forkbench claim T-2');
    await expect.poll(() => holder(page, 'T-2'), { timeout: 10_000 }).toBe(a);
    await dragCard(page, 'T-2', `agent-tab-${b}`);
    const body = page.getByTestId('confirm-body');
    await body.waitFor();
    expect(await body.textContent()).toMatch(
      new RegExp(`^T-2 "Write the changelog" is held by ${nameA} \\([^)]+, \\d+:\\d\\d left\\): take it from ${nameA} and give it to ${nameB}\\?`),
    );
    expect(await page.getByTestId('confirm-ok').textContent()).toBe(`Give it to ${nameB}`);
    await shot(page, 'honest-04-drag-asks');
    // Cancel (the focus is on it): the holder keeps it.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('confirm-cancel');
    await page.getByTestId('confirm-cancel').click();
    await page.getByTestId('confirm-dialog').waitFor({ state: 'detached' });
    expect(await holder(page, 'T-2')).toBe(a);
    // Confirmed: it moves.
    await dragCard(page, 'T-2', `agent-tab-${b}`);
    await confirmAfterDrop(page);
    await expect.poll(() => holder(page, 'T-2'), { timeout: 5000 }).toBe(b);

    // An unclaimed task is given at once: nothing to ask.
    await dragCard(page, 'T-3', `agent-tab-${a}`);
    await expect.poll(() => holder(page, 'T-3'), { timeout: 5000 }).toBe(a);
    expect(await page.getByTestId('confirm-dialog').count()).toBe(0);

    // "Assign to…" on a claimed card asks the same way.
    await page.getByTestId('assign-T-2').click();
    await page.getByTestId(`assign-T-2-to-${a}`).click();
    expect(await body.textContent()).toContain(`T-2 "Write the changelog" is held by ${nameB}`);
    await page.getByTestId('confirm-cancel').click();
    expect(await holder(page, 'T-2')).toBe(b);
    await page.getByTestId('assign-T-2').click();
    await page.getByTestId(`assign-T-2-to-${a}`).click();
    await page.getByTestId('confirm-ok').click();
    await expect.poll(() => holder(page, 'T-2'), { timeout: 5000 }).toBe(a);

    // The keyboard drag asks too: T-2 picked up with Space, moved over b's tab, dropped with Space.
    const live = page.locator('[id^="DndLiveRegion"]');
    // Picked up once the live region says so: the card re-renders as its holder changes, and a Space sent
    // before its focus settles picks nothing up. Each try waits for the announcement before trying again.
    let picked = false;
    for (let i = 0; i < 5 && !picked; i++) {
      await page.getByTestId('card-T-2').focus();
      await page.keyboard.press('Space');
      // dnd-kit says "Picked up", then at once where the card is over (its own column).
      picked = await live
        .filter({ hasText: /Picked up T-2|T-2 .* is over / })
        .waitFor({ timeout: 2000 })
        .then(
          () => true,
          () => false,
        );
    }
    expect(picked).toBe(true);
    for (let i = 0; i < 8 && !(await live.textContent())?.includes(`over ${nameB}’s tab`); i++) {
      await page.keyboard.press('ArrowRight');
      await page.evaluate(() => new Promise((r) => setTimeout(r, 50)));
    }
    expect(await live.textContent()).toContain(`over ${nameB}’s tab`);
    await page.keyboard.press('Space');
    await body.waitFor();
    expect(await body.textContent()).toContain(`T-2 "Write the changelog" is held by ${nameA}`);
    await page.keyboard.press('Escape');
    await page.getByTestId('confirm-dialog').waitFor({ state: 'detached' });
    expect(await holder(page, 'T-2')).toBe(a);
    await page.context().close();
  }, 120_000);

  it('after a Ctrl-C that ended the agents, the next run lists them with Relaunch, Resume and Dismiss', async () => {
    // A stand-in CLI installed as `claude`: it keeps a conversation, so it can be resumed.
    const bin = fs.mkdtempSync(join(tmpdir(), 'forkbench-e2e-bin-'));
    dirs.push(bin);
    fs.copyFileSync(FAKE_CLI, join(bin, 'claude'));
    fs.chmodSync(join(bin, 'claude'), 0o755);
    // It keeps its conversations in $HOME/sessions. Contained (issue 43), a `claude` agent writes of its home
    // only Claude Code's own state folder, ~/.claude, as the real CLI keeps its conversations there: the
    // stand-in's folder is one inside it.
    fs.mkdirSync(join(bin, '.claude', 'sessions'), { recursive: true });
    fs.symlinkSync(join('.claude', 'sessions'), join(bin, 'sessions'));
    const env = { PATH: `${bin}:${process.env.PATH}`, HOME: bin };
    const first = await serve({ env });
    let page = await newPage(first.url);
    await expect.poll(() => connection(page)).toBe('connected');
    await addTasks(page, ['Port the parser', 'Write the changelog']);
    const before = await agentTabIds(page);
    await page.getByTestId('launch-menu').click();
    await page.getByTestId('launch-claude').click();
    await expect.poll(async () => (await agentTabIds(page)).length, { timeout: 10_000 }).toBe(before.length + 1);
    const claude = (await agentTabIds(page)).find((t) => !before.includes(t)) as string;
    await expect.poll(() => screenText(page, claude), { timeout: 15_000 }).toContain(`CLAIMED 1 AS ${claude}`);
    const shell = await launchFromMenu(page);
    await typeIn(page, shell, 'forkbench claim T-2');
    await expect.poll(() => holder(page, 'T-2'), { timeout: 10_000 }).toBe(shell);
    const custom = await launchFromMenu(page, 'sleep 600');
    const names = Object.fromEntries(
      await Promise.all([claude, shell, custom].map(async (id) => [id, (await page.getByTestId(`agent-tab-${id}`).getAttribute('data-name')) as string])),
    );
    await page.context().close();

    // Ctrl-C: every agent ended, every claim released host-stopped.
    expect(await first.stop()).toBe(0);
    const second = await serve({ env, root: first.root });
    page = await newPage(second.url);
    await expect.poll(() => connection(page)).toBe('connected');
    const list = page.getByTestId('ended-agents');
    await list.waitFor();
    expect(await agentTabIds(page)).toEqual([]);
    expect(await page.locator('.tabs-empty').count()).toBe(0);
    expect(await page.getByTestId(`ended-how-${claude}`).textContent()).toBe('ended when the host stopped');
    expect(await page.getByTestId(`ended-held-${claude}`).textContent()).toBe('held T-1 "Port the parser"');
    expect(await page.getByTestId(`ended-held-${shell}`).textContent()).toBe('held T-2 "Write the changelog"');
    expect(await page.getByTestId(`ended-held-${custom}`).textContent()).toBe('held no task');
    for (const id of [claude, shell, custom]) expect(await page.getByTestId(`ended-${id}`).textContent()).toContain(names[id]);
    // Resume only where the CLI keeps a conversation.
    expect(await page.getByTestId(`ended-resume-${claude}`).count()).toBe(1);
    expect(await page.getByTestId(`ended-resume-${shell}`).count()).toBe(0);
    await shot(page, 'honest-05-ended-agents-listed');

    // Relaunch: a new shell under the same name, in the Thread folder, as a tab.
    await page.getByTestId(`ended-relaunch-${shell}`).click();
    await expect.poll(async () => (await agentTabIds(page)).length, { timeout: 10_000 }).toBe(1);
    const relaunched = (await agentTabIds(page))[0] as string;
    await expect.poll(() => page.getByTestId(`agent-tab-${relaunched}`).getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
    expect(await page.getByTestId(`agent-tab-${relaunched}`).getAttribute('data-name')).toBe(names[shell]);
    await expect.poll(() => page.getByTestId(`ended-${shell}`).count()).toBe(0);
    await typeIn(page, relaunched, 'echo WHERE=$PWD');
    await expect.poll(() => screenText(page, relaunched), { timeout: 10_000 }).toContain(`WHERE=${fs.realpathSync(second.folder)}`);

    // Resume: the same agent on its own conversation, as a tab again.
    await page.getByTestId(`ended-resume-${claude}`).click();
    await expect.poll(() => page.getByTestId(`agent-tab-${claude}`).getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
    await expect.poll(() => screenText(page, claude), { timeout: 15_000 }).toMatch(/RESUMED \S+: first message/);
    await expect.poll(() => page.getByTestId(`ended-${claude}`).count()).toBe(0);

    // Dismiss: gone from the list (and from the host's).
    await page.getByTestId(`ended-dismiss-${custom}`).click();
    await list.waitFor({ state: 'detached' });
    await shot(page, 'honest-06-relaunched-resumed-dismissed');
    await page.reload();
    await expect.poll(() => connection(page)).toBe('connected');
    await expect.poll(async () => (await agentTabIds(page)).sort()).toEqual([claude, relaunched].sort());
    expect(await page.getByTestId('ended-agents').count()).toBe(0);
    await page.context().close();
  }, 150_000);
});
