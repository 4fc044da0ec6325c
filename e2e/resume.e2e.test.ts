/**
 * "Resume conversation" in the Thread window, end to end: `forkbench serve` as a real process, Debian's
 * Chromium, a real pty, and a stand-in agent CLI (test/fixtures/fakeSessionCli.sh, installed as `claude` on
 * serve's PATH) that keeps its conversation by the session id its profile gives it. The agent claims T-1,
 * is killed -9, and its tab offers the resume; pressing it starts the same agent (same tab, same id) on the
 * same conversation, and it claims T-1 again under a new token.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type WindowSession, withQuery } from './harness.js';
import { windowForFile } from './windowForFile.js';
import { screenText } from './pageActions.js';

const FAKE_CLI = join(import.meta.dirname, '..', 'test', 'fixtures', 'fakeSessionCli.sh');

let w: WindowSession;
let page: Page;
let bin: string;

const win = windowForFile(async () => {
  bin = fs.mkdtempSync(join(tmpdir(), 'forkbench-e2e-bin-'));
  fs.copyFileSync(FAKE_CLI, join(bin, 'claude'));
  fs.chmodSync(join(bin, 'claude'), 0o755);
  win.after(() => fs.rmSync(bin, { recursive: true, force: true }));
  return { serve: { env: { PATH: `${bin}:${process.env.PATH}`, HOME: bin } } };
});

beforeAll(() => {
  w = win.session;
  ({ page } = w);
});

describe('resuming a conversation from its tab', () => {
  it('a killed agent is resumed in its own tab, on its own conversation, and claims again', async () => {
    await page.goto(withQuery(w.served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await page.getByTestId('add-task-title').fill('Write the parser');
    await page.getByTestId('add-task-submit').click();
    await expect.poll(() => page.getByTestId('card-T-1').getAttribute('data-state')).toBe('open');

    await page.getByTestId('launch-menu').click();
    await page.getByTestId('launch-claude').click();
    const tab = page.locator('[data-testid^="agent-tab-"]');
    await expect.poll(() => tab.count()).toBe(1);
    const id = (await tab.first().getAttribute('data-testid'))!.replace('agent-tab-', '');
    await expect.poll(() => screenText(page, id), { timeout: 15_000 }).toContain(`CLAIMED 1 AS ${id}`);
    const sessionId = /NEW SESSION (\S+)/.exec(await screenText(page, id))?.[1];
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const pid = Number(await page.getByTestId(`agent-tab-${id}`).getAttribute('data-pid'));
    // No resume for a running agent.
    expect(await page.getByTestId(`resume-${id}`).count()).toBe(0);

    process.kill(-pid, 'SIGKILL');
    await expect.poll(() => page.getByTestId(`agent-tab-${id}`).getAttribute('data-status')).toBe('exited');
    await expect.poll(() => page.getByTestId('card-T-1').getAttribute('data-state')).toBe('open');
    await page.getByTestId(`resume-${id}`).waitFor();
    await w.shot('resume-01-exited-offers-resume');

    await page.getByTestId(`resume-${id}`).click();
    await expect.poll(() => page.getByTestId(`agent-tab-${id}`).getAttribute('data-status')).not.toBe('exited');
    await expect.poll(() => screenText(page, id), { timeout: 15_000 }).toContain(`RESUMED ${sessionId}: first message`);
    await expect.poll(() => screenText(page, id), { timeout: 15_000 }).toContain(`CLAIMED 2 AS ${id}`);
    await expect.poll(() => page.getByTestId('card-T-1').getAttribute('data-holder')).toBe(id);
    // One tab still: the same agent, not a new one.
    expect(await tab.count()).toBe(1);
    expect(Number(await page.getByTestId(`agent-tab-${id}`).getAttribute('data-pid'))).not.toBe(pid);
    expect(await page.getByTestId(`resume-${id}`).count()).toBe(0);
    await w.shot('resume-02-resumed');
  }, 90_000);
});
