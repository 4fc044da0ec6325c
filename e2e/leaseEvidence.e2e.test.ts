import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { threadKeyOf } from '../src-main/thread/threadHost.js';
import { claudeQuietCodexReclaimed, leaseScript } from '../test/helpers/leaseScript.js';
import { axeViolations, describeViolations } from './axe.js';

import { windowForFile } from './windowForFile.js';
/**
 * Issue 34, item 5 in the window: Thread settings show each profile's quiet-gap histogram, its lapses and
 * live claims reclaimed, and the suggested lease; "use 180 s" sets that profile's lease (a person's click,
 * through the board's one settings call), and nothing else changes a lease. The board is the one the
 * scripted agents made on the real engine and liveness loop (test/helpers/leaseScript.ts), which serve
 * then opens from its journal.
 */
const win = windowForFile(async () => {
  const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-e2e-'));
  const project = join(root, 'project');
  fs.mkdirSync(project);
  const key = threadKeyOf(project);
  const s = await leaseScript(join(root, 'data', 'threads', key), key);
  await claudeQuietCodexReclaimed(s);
  await s.close();
  return { serve: { root } };
}, 120_000);

const counts = (profile: string) => win.page.locator(`[data-testid^="evidence-bucket-${profile}-"]`).evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-count'))));

describe('lease evidence in Thread settings', () => {
  it("shows each profile's histogram and suggestion, and one click sets the suggested lease for that profile only", async () => {
    await win.page.goto(win.served.url);
    await expect.poll(() => win.page.getByTestId('connection-status').getAttribute('data-state')).toBe('connected');
    await win.page.getByTestId('thread-settings').click();
    await win.page.getByTestId('lease-evidence').waitFor();

    // <30 s, 30-60, 60-90, 90-120, 120-180, 180-300, 300 s+
    expect(await counts('claude')).toEqual([0, 3, 0, 3, 0, 0, 0]);
    expect(await win.page.getByTestId('evidence-lapses-claude').textContent()).toBe('lapses 0');
    expect(await win.page.getByTestId('evidence-reclaimed-claude').textContent()).toBe('live claims reclaimed 0');
    expect(await win.page.getByTestId('evidence-suggestion-claude').textContent()).toBe("Claude Code's longest quiet gap in the last 6 claims was 90 s: suggest 150 s");
    expect(await counts('codex')).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(await win.page.getByTestId('evidence-lapses-codex').textContent()).toBe('lapses 3');
    expect(await win.page.getByTestId('evidence-reclaimed-codex').textContent()).toBe('live claims reclaimed 2');
    expect(await win.page.getByTestId('evidence-suggestion-codex').textContent()).toBe('no claim of Codex CLI has ended well yet; 2 live claims were reclaimed at 120 s: suggest 180 s');
    expect(await win.page.getByTestId('evidence-use-codex').textContent()).toBe('use 180 s');
    await win.shot('lease-evidence-01-suggestions');
    // The histogram is a list a screen reader reads bucket by bucket: axe finds nothing to fault.
    expect(describeViolations(await axeViolations(win.page))).toBe('');

    // Nothing set a lease by itself: both profiles have the Thread's.
    expect(await win.page.getByTestId('evidence-codex').locator('.lease-profile-head').textContent()).toContain("lease 120 s (the Thread's)");
    await win.page.getByTestId('evidence-use-codex').click();
    await expect.poll(() => win.page.getByTestId('evidence-codex').locator('.lease-profile-head').textContent()).toContain('lease 180 s (set for this profile)');
    // The evidence now says keep it, so there is no button; Claude Code's lease is still the Thread's.
    expect(await win.page.getByTestId('evidence-suggestion-codex').textContent()).toBe('no claim of Codex CLI has ended well yet; 2 live claims were reclaimed at 120 s: keep 180 s');
    expect(await win.page.getByTestId('evidence-use-codex').count()).toBe(0);
    expect(await win.page.getByTestId('evidence-claude').locator('.lease-profile-head').textContent()).toContain("lease 120 s (the Thread's)");
    // The log says who set which lease.
    await expect.poll(() => win.page.locator('[data-testid="log-entry"]').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('settings changed by you: lease 120 s (codex 180 s), poison limit 3')]));
    await win.shot('lease-evidence-02-codex-set');

    // Back to the Thread's lease with one click too.
    await win.page.getByTestId('evidence-default-codex').click();
    await expect.poll(() => win.page.getByTestId('evidence-codex').locator('.lease-profile-head').textContent()).toContain("lease 120 s (the Thread's)");
    expect(await win.page.getByTestId('evidence-use-codex').textContent()).toBe('use 180 s');
  });
});
