import type { Page } from 'playwright-core';

/**
 * The page as a loaded machine runs it, for the tests that reproduce a race under load: its CPU throttled
 * `rate` times (CDP), and its timers held still (Playwright's clock), as a main thread busy with other work
 * runs a timer late: Chromium runs input before timers, so a person's next click or keystroke comes before a
 * timer that was due first. Whatever the window does must not wait on a timer to let that input through.
 * Returns the undo: time flows again and the CPU runs at full speed (the clock stays installed, flowing: call
 * it in a file's last test). `rate` 4: a quarter of a core, as two cores shared by a CI run's workers and
 * their browsers and servers leave each.
 */
export async function lagPage(page: Page, rate = 4): Promise<() => Promise<void>> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate });
  await page.clock.install();
  // A second ahead of the page's time, as pauseAt refuses one the clock has passed; timers due by then fire.
  await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 1000);
  return async () => {
    await page.clock.resume();
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
    await cdp.detach();
  };
}
