import { describe, expect, it } from 'vitest';
import { axeViolations, describeViolations, settleScheme } from './axe.js';
import { withQuery } from './harness.js';
import { launchFromMenu } from './pageActions.js';
import { windowForFile } from './windowForFile.js';

/**
 * Issue 43, items 1 and 4, in the window: `forkbench serve` with real panes in bubblewrap, in Chromium. A tab's
 * details (the agent list's entry, and the tab's tooltip) say "Contained by bubblewrap"; Thread settings runs
 * the custom profile without a sandbox, the window says so plainly (the host's notice, with what undoes it),
 * and the next custom agent's details say "Not contained" and why, while the one before keeps its sandbox.
 */
const w = windowForFile();

const THREAD_SETTING_WHY = "the sandbox is turned off for custom in this Thread's settings";

/** The agent's line in the agent list (the tab's details), read with the list open, which is then closed. */
async function detailsLine(id: string): Promise<string> {
  const { page } = w;
  await page.getByTestId('agent-list-button').click();
  const line = page.getByTestId(`agent-containment-${id}`);
  await line.waitFor();
  const text = (await line.textContent()) ?? '';
  await page.keyboard.press('Escape');
  await page.getByTestId('agent-list').waitFor({ state: 'detached' });
  return text;
}

describe('whether each agent is contained, in the window', () => {
  it('a tab says "Contained by bubblewrap"; with the Thread setting, the next custom agent says "Not contained" and the window warns once', async () => {
    const { page } = w;
    await page.goto(withQuery(w.served.url, 'debug=1'));
    await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-state'), { timeout: 20_000 }).toBe('connected');

    const first = await launchFromMenu(page, 'exec sh -i');
    await expect.poll(() => detailsLine(first), { timeout: 10_000 }).toBe('Contained by bubblewrap');
    expect(await page.getByTestId(`agent-tab-${first}`).getAttribute('title')).toContain('Contained by bubblewrap.');
    // Every agent contained: no warning stands.
    expect(await page.getByTestId('notices').textContent()).not.toContain('not contained');

    await page.getByTestId('thread-settings').click();
    await page.getByTestId('settings-uncontained-custom').check();
    await page.getByTestId('settings-uncontained-note').waitFor();
    await w.shot('containment-00-settings');
    for (const s of ['light', 'dark'] as const) {
      await settleScheme(page, s);
      expect(describeViolations(await axeViolations(page, '.thread-settings-panel')), `settings, ${s}`).toBe('');
    }
    await page.getByTestId('settings-save').click();
    await page.getByTestId('settings-uncontained').waitFor({ state: 'detached' });
    // The plain warning, from the host, once: one notice standing.
    const warning = page.getByTestId('host-notice').filter({ hasText: 'Agents are not contained' });
    await expect.poll(() => warning.count(), { timeout: 10_000 }).toBe(1);
    expect(await warning.textContent()).toContain(
      `agents of custom are not contained: the sandbox is turned off for them in this Thread's settings. To fix it: untick them under "Run without a sandbox" in Thread settings`,
    );
    expect(await page.getByTestId('thread-settings').getAttribute('title')).toContain('no sandbox for custom');

    const second = await launchFromMenu(page, 'exec sh -i');
    await expect.poll(() => detailsLine(second), { timeout: 10_000 }).toBe(`Not contained: ${THREAD_SETTING_WHY}`);
    // The agent launched before the change keeps its sandbox.
    expect(await detailsLine(first)).toBe('Contained by bubblewrap');
    expect(await warning.count()).toBe(1);

    await page.getByTestId('agent-list-button').click();
    await page.getByTestId(`agent-containment-${second}`).waitFor();
    for (const s of ['light', 'dark'] as const) {
      await settleScheme(page, s);
      expect(describeViolations(await axeViolations(page, '.tabbar')), `agent list, ${s}`).toBe('');
    }
    await w.shot('containment-01-agent-list');
    await page.keyboard.press('Escape');
  });
});
