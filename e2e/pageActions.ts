import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * What a person does in the Thread window, for the e2e tests: type in a terminal, drag a card. Each waits on
 * what the page shows, never on a fixed delay.
 */

/** The agents' ids, in the order their tabs stand. */
export const agentTabIds = (page: Page): Promise<string[]> =>
  page.locator('[data-testid^="agent-tab-"]').evaluateAll((els) => els.map((e) => (e.getAttribute('data-testid') as string).slice('agent-tab-'.length)));

/** The agent whose tab appeared since `before` (its ids then), once the tab says it is running. */
export async function newAgentTab(page: Page, before: readonly string[]): Promise<string> {
  await expect.poll(async () => (await agentTabIds(page)).length, { timeout: 10_000 }).toBe(before.length + 1);
  const id = (await agentTabIds(page)).find((t) => !before.includes(t)) as string;
  await expect.poll(() => page.getByTestId(`agent-tab-${id}`).getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
  return id;
}

/** Launch from the Launch menu as a person does: the login shell, or `command` as a custom one. Its id,
 *  once its tab says it is running. */
export async function launchFromMenu(page: Page, command?: string): Promise<string> {
  const before = await agentTabIds(page);
  await page.getByTestId('launch-menu').click();
  if (command === undefined) await page.getByTestId('launch-shell').click();
  else {
    await page.getByTestId('launch-custom').click();
    await page.getByTestId('custom-command').fill(command);
    await page.getByTestId('custom-launch').click();
  }
  return newAgentTab(page, before);
}

/** Type a command into an agent's terminal, as a person would. */
export async function typeIn(page: Page, agentId: string, text: string): Promise<void> {
  await page.getByTestId(`agent-tab-${agentId}`).click();
  await page.getByTestId(`terminal-${agentId}`).click();
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

/**
 * Drag a card by its grip onto a drop target the way a hand does: press, move in steps, and let go only once
 * the target shows it is under the card (dnd-kit has seen the pointer there), not after a fixed delay.
 */
export async function dragCard(page: Page, taskId: string, targetTestId: string): Promise<void> {
  const center = async (testId: string) => {
    const box = await page.getByTestId(testId).boundingBox();
    if (!box) throw new Error(`${testId} is not on screen`);
    return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  };
  const from = await center(`drag-${taskId}`);
  const to = await center(targetTestId);
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(to.x, to.y, { steps: 12 });
  await expect.poll(() => page.getByTestId(targetTestId).getAttribute('class'), { timeout: 5000 }).toContain('drop-over');
  await page.mouse.up();
}

/**
 * Answer the question a drop asked with its OK button, as a person does, at once: the cards' sensor swallows
 * only the click of the drop's own release (ReleasingPointerSensor), so a click right after it counts.
 */
export async function confirmAfterDrop(page: Page): Promise<void> {
  const dialog = page.getByTestId('confirm-dialog');
  await dialog.waitFor();
  await page.getByTestId('confirm-ok').click();
  await dialog.waitFor({ state: 'detached' });
}

/** The text of an agent's terminal (scrollback and screen), through the page's debug hook (`?debug=1`). */
export function screenText(page: Page, agentId: string): Promise<string> {
  return page.evaluate((id) => (window as unknown as { __forkbenchDebug?: { terminalText(id: string): string } }).__forkbenchDebug?.terminalText(id) ?? '', agentId);
}
