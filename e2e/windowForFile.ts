import * as fs from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { GIT_IDENTITY, makeRepo } from '../test/helpers/gitFixture.js';
import { CHROMIUM, CHROMIUM_ARGS, ensureRendererBuilt, openWindow, startServe, type Served, type WindowSession } from './harness.js';
import { windowOn, type WindowClient } from './windowClient.js';

/** startServe's options: a folder to prepare, env, serve's args, an earlier serve's root. */
export type ServeOptions = NonNullable<Parameters<typeof startServe>[0]>;

/** What differs between e2e files in the window they start from. */
export interface WindowOptions {
  /** The Thread's folder is a git repository (branch main, one commit of notes.txt), and serve commits (merges)
   *  as the tests' identity. */
  repo?: boolean;
  /** What serve starts with: env, args (`--board-url-file` for a shared board, `--keep-agents`), a folder to
   *  prepare, an earlier serve's root. */
  serve?: ServeOptions;
  /** A second window on the same serve without a browser (`host`): the WebSocket protocol the page speaks. */
  client?: boolean;
  /** false: no window before the tests; they start serves (`serve`) and pages (`chromium`) themselves. */
  page?: boolean;
}

/** The page's size in every e2e window: a laptop's screen, wide enough for the board's columns. */
export const VIEWPORT = { width: 1440, height: 900 };

/** A repo Thread's serve options: the folder made a repository before serve starts, git as the tests' identity. */
function withRepo(o: ServeOptions): ServeOptions {
  return {
    ...o,
    env: { ...GIT_IDENTITY, ...o.env },
    prepare: (folder) => {
      makeRepo(folder, { 'notes.txt': 'first line\n' });
      o.prepare?.(folder);
    },
  };
}

/**
 * The one e2e fixture: what every e2e file opens its served windows through. Called at the file's top level, it
 * opens (before the tests) `forkbench serve` and Chromium on one page, plus `host` when `client` is set, and
 * closes everything after them: the window, every further serve, browser and context made through it, then the
 * file's own `after` steps (a PostgreSQL cluster, folders), in that order, so a serve never outlives its board.
 * `options` may be a function for what is known only before the tests (a database's URL). Read `page`,
 * `served`, `host` and `shot` in the tests once open. harness.ts stays for the benches, which run outside vitest.
 */
export function windowForFile(options: WindowOptions | (() => Promise<WindowOptions>) = {}, openMs = 60_000) {
  let w: WindowSession | undefined;
  let client: WindowClient | undefined;
  let browser: Browser | undefined;
  const serves: Served[] = [];
  const contexts: BrowserContext[] = [];
  const afterSteps: Array<() => unknown> = [];
  beforeAll(async () => {
    const o = typeof options === 'function' ? await options() : options;
    if (o.page === false) return;
    const serve = o.repo ? withRepo(o.serve ?? {}) : (o.serve ?? {});
    w = await openWindow(serve);
    browser = w.browser;
    if (o.client) client = await windowOn(w.served);
  }, openMs);
  afterAll(async () => {
    client?.close();
    for (const c of contexts.splice(0)) await c.close().catch(() => undefined);
    await w?.close();
    if (browser !== w?.browser) await browser?.close();
    const roots = new Set<string>();
    for (const s of serves.splice(0)) {
      const code = await s.stop();
      if (code !== 0) console.error(`serve exited ${code}: ${s.stderr()}`);
      roots.add(s.root);
    }
    for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
    for (const step of afterSteps.splice(0).reverse()) await step();
  }, openMs);
  const session = (): WindowSession => {
    if (!w) throw new Error('the window is not open (windowForFile opens it before the tests unless `page: false`)');
    return w;
  };
  /** The file's Chromium: the window's, or one launched on first use when the file has no window. */
  const chromiumOf = async (): Promise<Browser> => {
    if (browser) return browser;
    ensureRendererBuilt();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    return browser;
  };
  return {
    get page(): Page {
      return session().page;
    },
    get served(): Served {
      return session().served;
    },
    /** The second window on the served host (`client: true`). */
    get host(): WindowClient {
      if (!client) throw new Error('no window client (windowForFile opens one with `client: true`)');
      return client;
    },
    get session(): WindowSession {
      return session();
    },
    shot: (name: string) => session().shot(name),
    /** A task's card on the board. */
    card: (id: string) => session().page.getByTestId(`card-${id}`),
    chromium: chromiumOf,
    /** Another serve (a second host, a restart on `root`): stopped after the file and its folder removed. */
    async serve(o: ServeOptions & { repo?: boolean } = {}): Promise<Served> {
      ensureRendererBuilt();
      const s = await startServe(o.repo ? withRepo(o) : o);
      serves.push(s);
      return s;
    },
    /** A page in a browser context of its own (no cookie shared with the file's other pages), at `link` if given. */
    async newPage(link?: string): Promise<Page> {
      const context = await (await chromiumOf()).newContext({ viewport: VIEWPORT });
      contexts.push(context);
      const page = await context.newPage();
      if (link) await page.goto(link);
      return page;
    },
    /** A browser context the file closes after its tests (closing it earlier is fine). */
    async newContext(o: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext> {
      const context = await (await chromiumOf()).newContext(o);
      contexts.push(context);
      return context;
    },
    /** A Chromium with a profile folder of its own (`profile`), as a person's installed browser keeps one. */
    async persistentContext(profile: string): Promise<BrowserContext> {
      ensureRendererBuilt();
      const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      contexts.push(context);
      return context;
    },
    /** A step of the file's own (stop a database, remove a folder), run after every window and serve is closed. */
    after(step: () => unknown): void {
      afterSteps.push(step);
    },
  };
}

export type FileWindow = ReturnType<typeof windowForFile>;
