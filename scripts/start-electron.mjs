#!/usr/bin/env node
// `npm start`: launch the Electron shell. Where the Electron binary cannot be had (no download possible, as on
// a build machine without internet), say so in one line and point to the browser mode instead of a stack.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const fallback = 'Run `npm run serve` to use Forkbench in your browser instead.';
let pkgDir;
try {
  pkgDir = dirname(require.resolve('electron/package.json'));
} catch {
  console.error(`forkbench: the electron package is not installed (run \`npm install\`). ${fallback}`);
  process.exit(1);
}
const binaryOf = () => {
  const pathFile = join(pkgDir, 'path.txt');
  if (process.env.ELECTRON_OVERRIDE_DIST_PATH) return join(process.env.ELECTRON_OVERRIDE_DIST_PATH, 'electron');
  return existsSync(pathFile) ? join(pkgDir, 'dist', readFileSync(pathFile, 'utf8')) : null;
};
let bin = binaryOf();
if (!bin || !existsSync(bin)) {
  // electron 45 downloads its binary on first use; try once, quietly, and keep its output for the message.
  const r = spawnSync(process.execPath, [join(pkgDir, 'install.js')], { encoding: 'utf8', timeout: 300_000 });
  bin = binaryOf();
  if (r.status !== 0 || !bin || !existsSync(bin)) {
    const why = (`${r.stderr ?? ''}${r.stdout ?? ''}`.match(/(TypeError|Error)[^\n]*/) ?? [r.error?.message ?? 'download failed'])[0];
    console.error(`forkbench: the Electron binary is not available on this machine (${why.trim()}). ${fallback}`);
    process.exit(1);
  }
}
const child = spawn(bin, ['.', ...process.argv.slice(2)], { stdio: 'inherit', cwd: join(dirname(new URL(import.meta.url).pathname), '..') });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
