import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
/** The `forkbench` command as an agent runs it: the compiled CLI, not the TypeScript. */
export const CLI = join(root, 'bin', 'forkbench.cjs');

let built = false;
/** Compile src-main once per test process if dist-main is missing or older than the sources. */
export function ensureBuilt(): void {
  if (built) return;
  const out = join(root, 'dist-main', 'cli', 'forkbench.cjs');
  const newest = (dir: string): number =>
    fs.readdirSync(dir, { withFileTypes: true }).reduce((m, d) => {
      const p = join(dir, d.name);
      return Math.max(m, d.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
    }, 0);
  const srcTime = Math.max(newest(join(root, 'src-main')), newest(join(root, 'src-shared')));
  if (!fs.existsSync(out) || fs.statSync(out).mtimeMs < srcTime) {
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.main.json')], { stdio: 'inherit', cwd: root });
    execFileSync(process.execPath, [join(root, 'scripts', 'build-cli.mjs')], { stdio: 'inherit', cwd: root });
  }
  built = true;
}
