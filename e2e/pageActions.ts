import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * What a person does in the Thread window, for the e2e tests: type in a terminal, drag a card. Each waits on
 * what the page shows, never on a fixed delay.
 */

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

/** The text of an agent's terminal (scrollback and screen), through the page's debug hook (`?debug=1`). */
export function screenText(page: Page, agentId: string): Promise<string> {
  return page.evaluate((id) => (window as unknown as { __forkbenchDebug?: { terminalText(id: string): string } }).__forkbenchDebug?.terminalText(id) ?? '', agentId);
}
