import { PtySession, type PtySessionOptions } from '../../src-main/pty/ptySession.js';

/** Polls `check` (which may read asynchronously: a pty host, /proc) until it gives a truthy value or the
 *  deadline passes: tests wait on state, not sleeps. */
export async function waitFor<T>(check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A session plus everything it printed so far. */
export interface Pane {
  session: PtySession;
  output(): string;
  chars(): number;
}

export function spawnPane(command: string, args: string[], options: PtySessionOptions = {}, env: Record<string, string> = {}): Pane {
  const session = PtySession.spawn(command, args, {
    cwd: process.cwd(),
    // A fixed, minimal environment: the developer's shell rc and prompt must not leak into assertions.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', LANG: 'C.UTF-8', PS1: '$ ', ...env },
    cols: 80,
    rows: 24,
  }, options);
  let text = '';
  let chars = 0;
  // Keep only a tail: a flood must not turn the test itself into the memory hog.
  session.onData((d) => {
    chars += d.length;
    text = (text + d).slice(-200_000);
  });
  return { session, output: () => text, chars: () => chars };
}

/** Panes spawned by one test file: `pane` spawns and tracks, `disposeAll` (an afterEach) disposes them. */
export function paneTracker() {
  const panes: Pane[] = [];
  return {
    pane(...args: Parameters<typeof spawnPane>): Pane {
      const p = spawnPane(...args);
      panes.push(p);
      return p;
    },
    disposeAll(): void {
      for (const p of panes.splice(0)) p.session.dispose();
    },
  };
}
