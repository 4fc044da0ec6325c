/**
 * What the browser benches share: the page's debug hook as the bench sees it, a probe for one measurement
 * at a time, waiting on the page, and launching and closing panes from the page as a person does.
 */
import type { Page } from 'playwright-core';
import { agentTabIds } from '../e2e/pageActions.js';
import { percentileOf } from './table.js';

export const p = percentileOf;
export const verdict = (ok: boolean) => (ok ? '(met)' : '(NOT met)');
export const f1 = (n: number) => n.toFixed(1);
export const progress = (what: string) => process.stderr.write(`  browser: ${what}…\n`);

/** What the bench reaches in the page through the debug hook (`?debug=1`, src-renderer/main.tsx). */
export interface PageDebug {
  terminalText(agentId: string): string;
  parsedChars(agentId: string): number;
  onParsed(agentId: string, fn: ((total: number) => void) | null): boolean;
  detachedPane(container: HTMLElement): { feed: { data(data: string): void; onParsed: ((total: number) => void) | null }; dispose(): void };
}
/** The bench's own state in the page, one measurement at a time. */
export interface Probe {
  t0: number;
  first: number;
  result: Promise<number>;
}
export type BenchWindow = { __forkbenchDebug: PageDebug; __probe: Probe; __drawnAt?: number; __benchText?: string };

/**
 * tsx (the bench runs under it) names functions with an `__name` helper that exists only in Node; the page
 * functions handed to page.evaluate may carry a call to it.
 */
export const NAME_SHIM = 'globalThis.__name ??= (f) => f;';

export async function until<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000, everyMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await get();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`bench: timed out waiting for ${what} (last: ${JSON.stringify(v)?.slice(0, 200)})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}



/** Launch a custom command from the page's Launch menu, as a person does; its tab is selected and its pane shown. */
export async function launchInPage(page: Page, command: string): Promise<string> {
  const before = new Set(await agentTabIds(page));
  await page.getByTestId('launch-menu').click();
  await page.getByTestId('launch-custom').click();
  await page.getByTestId('custom-command').fill(command);
  await page.getByTestId('custom-launch').click();
  const ids = await until(`the tab of "${command}"`, () => agentTabIds(page), (xs) => xs.some((x) => !before.has(x)));
  const id = ids.find((x) => !before.has(x)) as string;
  await until(`"${command}" to start`, () => page.getByTestId(`agent-tab-${id}`).getAttribute('data-status'), (s) => s !== 'starting');
  await page.getByTestId(`terminal-${id}`).locator('.xterm-rows').waitFor();
  await page.getByTestId(`terminal-${id}`).click();
  return id;
}


export async function closeInPage(page: Page, id: string): Promise<void> {
  await page.getByTestId(`close-${id}`).click();
  // A running agent's tab asks first (issue 20); one that exited closes at once.
  const tab = page.getByTestId(`agent-tab-${id}`);
  await Promise.race([page.getByTestId('confirm-dialog').waitFor(), tab.waitFor({ state: 'detached' })]);
  if ((await page.getByTestId('confirm-dialog').count()) > 0) await page.getByTestId('confirm-ok').click();
  await tab.waitFor({ state: 'detached' });
}

/** The probe's result: ms, as the page measured it. */
export async function probeResult(page: Page, what: string, timeoutMs = 30_000): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`browser bench: no result for ${what} in ${timeoutMs} ms`)), timeoutMs)));
  try {
    return await Promise.race([page.evaluate(() => (window as unknown as BenchWindow).__probe.result), timeout]);
  } finally {
    clearTimeout(timer);
  }
}


/**
 * Arm the probe for one key: t0 is the keydown's timestamp as the page got it; the result is the ms from it
 * until the pane has parsed `more` chars of live output beyond what it has parsed now.
 */
export function armParsed(page: Page, agentId: string, more: number): Promise<void> {
  return page.evaluate(
    ([id, n]) => {
      const w = window as unknown as BenchWindow;
      const dbg = w.__forkbenchDebug;
      const base = dbg.parsedChars(id);
      const want = base + n;
      const probe = { t0: 0, first: 0 } as Probe;
      window.addEventListener('keydown', (e) => (probe.t0 = probe.t0 || e.timeStamp), { capture: true, once: true });
      probe.result = new Promise<number>((resolve) => {
        dbg.onParsed(id, (total) => {
          if (!probe.first && total > base) probe.first = performance.now();
          if (total < want) return;
          dbg.onParsed(id, null);
          resolve(performance.now() - probe.t0);
        });
      });
      w.__probe = probe;
    },
    [agentId, more] as const,
  );
}
