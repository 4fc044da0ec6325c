import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_PATH, proxyEnv, startProxyTrap, type ProxyTrap } from '../test/helpers/realCli/harness.js';
import type { WindowOptions } from './windowForFile.js';

export interface RealCliServe {
  /** The HOME of `serve` and so of every pane it starts: the test's own, never the developer's. */
  readonly home: string;
  /** The proxy every pane's proxy variables point at: what a CLI tried to fetch for itself, refused. */
  readonly trap: ProxyTrap;
  /** What windowForFile opens the window with: a repo Thread whose serve has the environment below. */
  readonly options: WindowOptions;
  /** The trap stopped and the home removed: after the window (windowForFile's `after`). */
  close(): Promise<void>;
}

/**
 * The window's serve set up for the real agent CLIs as the realCli tests run them (test/helpers/realCli/harness.ts):
 * `serve`'s environment, which its panes inherit, has the devDependencies' binaries first on PATH, a HOME and XDG
 * folders of the test's own, and every proxy variable at a trap on 127.0.0.1 (loopback, where the fake model
 * servers are, goes direct). `env` adds a CLI's own variables (its fake server's URL, a key, its folder in the
 * home); `seed` fills the home before `serve` starts, given the project folder (a CLI that keys its settings by
 * folder). The Thread is a git repository (windowForFile's `repo`).
 */
export async function realCliServe(o: { env: (home: string) => Record<string, string>; seed: (home: string, folder: string) => void }): Promise<RealCliServe> {
  const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-e2e-realcli-'));
  const home = join(dir, 'home');
  fs.mkdirSync(home);
  const trap = await startProxyTrap();
  const env = {
    PATH: CLI_PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    ...proxyEnv(trap),
    ...o.env(home),
  };
  return {
    home,
    trap,
    options: { repo: true, serve: { env, prepare: (folder) => o.seed(home, folder) } },
    async close() {
      await trap.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
