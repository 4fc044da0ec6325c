import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where Forkbench's own files are, found by walking up from this module: it runs from src-main/base (tsx),
 * dist-main/src-main/base (built) or a one-file bundle (the CLI, the packaged pty host), and each is some
 * folders below the package. The one walk up every caller shares.
 */
const HERE = dirname(fileURLToPath(import.meta.url));

/** The nearest folder at or above `from` for which `is` holds, or null once the filesystem's root is passed. */
export function findUp(is: (dir: string) => boolean, from = HERE): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    if (is(dir)) return dir;
    if (dir === dirname(dir)) return null;
  }
}

/** Forkbench's package.json at or above `from`: its folder and version; null where none is found. */
export function forkbenchPackage(from = HERE): { root: string; version: string } | null {
  let version = '';
  const root = findUp((dir) => {
    try {
      const pkg = JSON.parse(fs.readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name !== 'forkbench' || typeof pkg.version !== 'string') return false;
      version = pkg.version;
      return true;
    } catch {
      return false; // none here, or not JSON: go up
    }
  }, from);
  return root === null ? null : { root, version };
}

/** The folder that holds package.json and bin/forkbench.cjs: above this file in source and in dist-main
 *  (in a package: app.asar, which only Electron itself reads). */
export function appRoot(from = HERE): string {
  const root = findUp((dir) => fs.existsSync(join(dir, 'package.json')) && fs.existsSync(join(dir, 'bin', 'forkbench.cjs')), from);
  if (root === null) throw new Error(`cannot find the Forkbench folder (bin/forkbench.cjs) above ${from}`);
  return root;
}
