import * as fs from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { BoardLimits, Limits } from '../src-shared/board/limits.js';
import type { Served, WindowSession } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { launchFromMenu, typeIn } from './pageActions.js';

/**
 * Issue 29, finding 4: one agent cannot make a Thread's window unusable. A program in an agent's pane floods
 * the agents' socket with `add`s of 64 KiB bodies, as fast as the board answers (the flood that made 14,203
 * tasks in 25 s and a window that never opened). The board takes its quota and refuses the rest with which
 * limit and when to retry; another agent and the person go on adding; the page reloads and opens, and a
 * flooded task's body is read when it is opened. Real serve, real panes, the real agents' socket, Chromium.
 */
const ROOT = join(import.meta.dirname, '..');
const FLOOD = 600;
const win = windowForFile();
let w: WindowSession;
let served: Served;
let page: Page;

beforeAll(() => {
  w = win.session;
  ({ served, page } = w);
});

const card = (id: string) => page.getByTestId(`card-${id}`);
const paneText = (agentId: string) => page.getByTestId(`terminal-${agentId}`).innerText();

/** The flood: the CLI's own client on the pane's socket and secret, one `add` after another. It lies in the
 *  Thread folder, as its tally does: the pane's sandbox hides the test's /tmp folder behind a private /tmp,
 *  and in a Thread without git the Thread folder is where an agent reads and writes. */
function floodScript(out: string): string {
  const file = join(served.folder, 'flood.mjs');
  fs.writeFileSync(
    file,
    `import { RpcClient } from ${JSON.stringify(join(ROOT, 'dist-main', 'src-main', 'cli', 'rpcClient.js'))};
const c = await RpcClient.reach(process.env.FORKBENCH_SOCKET, process.env.FORKBENCH_SECRET);
const tally = { ok: 0, refused: 0, firstRefusal: null, lastRefusal: null, cli: null };
for (let i = 0; i < ${FLOOD}; i++) {
  try {
    await c.call('add', { title: 'flood ' + i, body: ('flood ' + i + ' ').padEnd(${Limits.maxBodyChars}, 'x') });
    tally.ok++;
  } catch (err) {
    tally.refused++;
    tally.firstRefusal ??= err.message;
    tally.lastRefusal = err.message;
  }
}
c.close();
// Right after it, the flooder's own CLI, as an agent would run it: it says why, with a failing status.
const cli = (await import('node:child_process')).spawnSync('forkbench', ['add', 'one more', '--body', 'y'.repeat(64000)], { encoding: 'utf8' });
tally.cli = { status: cli.status, stderr: cli.stderr };
(await import('node:fs')).writeFileSync(${JSON.stringify(out)}, JSON.stringify(tally));
console.log('FLOOD' + '-DONE');
`,
  );
  return file;
}

describe('an add flood from one agent', () => {
  it('is refused after its quota; another agent and the person still add; the window reloads and opens', async () => {
    await page.goto(served.url);
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    const flooder = await launchFromMenu(page);
    const other = await launchFromMenu(page);

    const out = join(served.folder, 'flood.json');
    await typeIn(page, flooder, `${process.execPath} ${floodScript(out)}`);
    await expect.poll(() => paneText(flooder), { timeout: 120_000, interval: 500 }).toContain('FLOOD-DONE');
    const tally = JSON.parse(fs.readFileSync(out, 'utf8')) as { ok: number; refused: number; firstRefusal: string; lastRefusal: string; cli: { status: number; stderr: string } };
    // 1 MiB of text in a row is 15 bodies of 64 KiB; everything after that within the flood is refused.
    const burst = Math.floor(BoardLimits.agentTextBurstChars / (Limits.maxBodyChars + 'flood 0'.length));
    expect(tally.ok).toBeGreaterThanOrEqual(burst);
    expect(tally.ok).toBeLessThan(burst + 40); // and the sustained rate's trickle while it ran
    expect(tally.ok + tally.refused).toBe(FLOOD);
    expect(tally.firstRefusal).toMatch(/has used its text quota .*nothing was written\. Try again in \d+ (ms|s)\./);

    // The flooder's own CLI hears the same, in words, with the exit status of a refusal (3).
    expect(tally.cli).toMatchObject({ status: 3, stderr: expect.stringMatching(/refused \(rate-limited\): .*has used its text quota.*Try again in/) });

    // Another agent is not held to the flooder's quota.
    await typeIn(page, other, 'forkbench add "from the other agent" && echo "OTHER"-ADDED');
    await expect.poll(() => paneText(other), { timeout: 20_000 }).toContain('OTHER-ADDED');
    // The person adds from the window.
    await page.getByTestId('add-task-title').fill('from the person');
    await page.getByTestId('add-task-title').press('Enter');
    const total = tally.ok + 2;
    // The Open column counts every card (it mounts only those in view).
    const openCount = () => page.getByTestId('column-open').locator('.count').textContent();
    await expect.poll(openCount, { timeout: 20_000 }).toBe(String(total));

    // The window opens again from scratch: a reload reads a snapshot of titles and counts.
    await page.reload();
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state'), { timeout: 20_000 }).toBe('connected');
    await expect.poll(openCount, { timeout: 20_000 }).toBe(String(total));
    // A flooded task's card shows the start of its body; its details read the whole of it from the host.
    expect((await card('T-1').locator('.card-body').innerText()).length).toBeLessThan(400);
    await card('T-1').locator('.card-title').click();
    await expect.poll(async () => (await page.getByTestId('details-body').innerText()).length, { timeout: 10_000 }).toBe(Limits.maxBodyChars);
    await w.shot('board-flood-01-details');
    await page.keyboard.press('Escape');
    await page.getByTestId('task-details').waitFor({ state: 'detached' });

    // Editing a card whose body the window has only the start of reads the whole body first: saving a new
    // title keeps every character of it.
    await page.getByTestId('edit-T-2').click();
    await expect.poll(async () => (await page.getByTestId('edit-body-T-2').inputValue()).length, { timeout: 10_000 }).toBe(Limits.maxBodyChars);
    await page.getByTestId('edit-title-T-2').fill('flood 1, renamed');
    await page.getByTestId('edit-save-T-2').click();
    await expect.poll(() => page.getByTestId('card-title-T-2').textContent()).toBe('flood 1, renamed');
    await card('T-2').locator('.card-title').click();
    await expect.poll(async () => (await page.getByTestId('details-body').innerText()).length, { timeout: 10_000 }).toBe(Limits.maxBodyChars);
    expect((await page.getByTestId('details-body').innerText()).startsWith('flood 1 ')).toBe(true);
  }, 240_000);
});
