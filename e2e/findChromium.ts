// Finds the Chromium or Chrome the browser tests drive, in this order:
//   1. FORKBENCH_CHROMIUM, then 2. CHROME_PATH — a path, or a name looked up on PATH. A variable that is set
//      is obeyed: if it names nothing runnable that is the answer (say so), not a cue to try something else;
//   3. the usual install paths of this platform (Debian/Ubuntu, snap, macOS, Windows);
//   4. the usual command names on PATH.
// Nothing found is one line that says how to get one.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, win32 } from 'node:path';

export const GET_CHROMIUM = 'run `npm install` (its devDependencies ship one), install one with `apt-get install -y chromium`, or set CHROME_PATH to a Chrome or Chromium binary';

export interface ChromiumSearch {
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  /** Replaces the platform's usual install paths (the tests use temporary files). */
  installPaths?: readonly string[];
}

export type ChromiumResult =
  | { found: true; path: string; from: string }
  | { found: false; path: string; problem: string };

/** The usual install paths, most likely first. */
export function installPaths(platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): string[] {
  if (platform === 'darwin') {
    const apps = ['Google Chrome.app/Contents/MacOS/Google Chrome', 'Chromium.app/Contents/MacOS/Chromium'];
    return [...apps.map((a) => `/Applications/${a}`), ...(env.HOME ? apps.map((a) => `${env.HOME}/Applications/${a}`) : [])];
  }
  if (platform === 'win32') {
    const roots = [env.PROGRAMFILES ?? 'C:\\Program Files', env['PROGRAMFILES(X86)'] ?? 'C:\\Program Files (x86)', env.LOCALAPPDATA].filter(
      (r): r is string => !!r,
    );
    return [
      ...roots.map((r) => win32.join(r, 'Google', 'Chrome', 'Application', 'chrome.exe')),
      ...roots.map((r) => win32.join(r, 'Chromium', 'Application', 'chrome.exe')),
    ];
  }
  return ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable', '/snap/bin/chromium'];
}

/** Command names tried on PATH, after the install paths. */
export const PATH_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable', 'chrome'];

function runnable(path: string, platform: NodeJS.Platform): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    if (platform !== 'win32') accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string | undefined {
  const dirs = (env.PATH ?? env.Path ?? '').split(platform === 'win32' ? ';' : delimiter).filter(Boolean);
  const exts = platform === 'win32' && !/\.[a-z]+$/i.test(name) ? (env.PATHEXT ?? '.EXE').split(';') : [''];
  for (const dir of dirs) {
    for (const ext of exts) {
      const p = (platform === 'win32' ? win32.join : join)(dir, name + ext);
      if (runnable(p, platform)) return p;
    }
  }
  return undefined;
}

export function findChromium(o: ChromiumSearch = {}): ChromiumResult {
  const env = o.env ?? process.env;
  const platform = o.platform ?? process.platform;
  for (const name of ['FORKBENCH_CHROMIUM', 'CHROME_PATH']) {
    const value = env[name];
    if (!value) continue;
    const bare = !(platform === 'win32' ? win32.isAbsolute : isAbsolute)(value) && !/[\\/]/.test(value);
    const path = bare ? onPath(value, env, platform) : value;
    if (path && runnable(path, platform)) return { found: true, path, from: name };
    return {
      found: false,
      path: value,
      problem: `${name}=${value} is not ${bare ? 'a command on PATH' : 'a runnable file'}: fix or unset it; to get a browser, ${GET_CHROMIUM}`,
    };
  }
  const paths = o.installPaths ?? installPaths(platform, env);
  for (const path of paths) if (runnable(path, platform)) return { found: true, path, from: 'install path' };
  for (const name of PATH_NAMES) {
    const path = onPath(name, env, platform);
    if (path) return { found: true, path, from: 'PATH' };
  }
  return {
    found: false,
    path: paths[0] ?? 'chromium',
    problem: `no Chromium or Chrome found (looked at FORKBENCH_CHROMIUM, CHROME_PATH, ${paths.length} usual install paths, then ${PATH_NAMES.join('/')} on PATH): ${GET_CHROMIUM}`,
  };
}
