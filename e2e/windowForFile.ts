import type { Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { openWindow, type Served, type WindowSession } from './harness.js';

/**
 * One window for a test file, opened (by `open`, openWindow by default) before its tests and closed after
 * them. Call at the file's top level; read `page`, `served` and `shot` in the tests, once it is open. Apart
 * from harness.ts, which the benches import outside vitest.
 */
export function windowForFile(open: () => Promise<WindowSession> = () => openWindow(), openMs = 60_000) {
  let w: WindowSession | undefined;
  beforeAll(async () => {
    w = await open();
  }, openMs);
  afterAll(() => w?.close());
  const session = (): WindowSession => {
    if (!w) throw new Error('the window is not open yet (windowForFile opens it before the tests)');
    return w;
  };
  return {
    get page(): Page {
      return session().page;
    },
    get served(): Served {
      return session().served;
    },
    shot: (name: string) => session().shot(name),
    /** A task's card on the board. */
    card: (id: string) => session().page.getByTestId(`card-${id}`),
  };
}
