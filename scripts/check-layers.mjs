#!/usr/bin/env node
// Keeps the layers one-way: src-shared (no Node, no DOM) <- src-main (Node) <- src-main/electron (the only
// place Electron may be imported); src-renderer imports only src-shared and browser packages.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';

const root = process.cwd();
const files = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : /\.(ts|tsx)$/.test(name) ? [p] : [];
  });
const importRe = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;
const problems = [];
const layerOf = (p) => relative(root, p).split(/[\\/]/)[0];

for (const layer of ['src-shared', 'src-main', 'src-renderer']) {
  for (const file of files(join(root, layer))) {
    const rel = relative(root, file);
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(importRe)) {
      const spec = m[1] ?? m[2] ?? m[3];
      const isRelative = spec.startsWith('.');
      const target = isRelative ? layerOf(resolve(dirname(file), spec)) : null;
      const bad = (why) => problems.push(`${rel}: imports '${spec}': ${why}`);
      if (layer === 'src-shared') {
        if (isRelative && target !== 'src-shared') bad('src-shared may import only src-shared');
        if (!isRelative && spec !== 'zod') bad('src-shared may import only zod from packages (no Node, no DOM)');
      }
      if (layer === 'src-main') {
        if (isRelative && !['src-shared', 'src-main'].includes(target)) bad('src-main may import only src-shared and src-main');
        const inShell = rel.split(/[\\/]/)[1] === 'electron';
        if (!isRelative && /^electron(\/|$)/.test(spec) && !inShell) bad('only src-main/electron may import Electron');
        if (isRelative && !inShell && resolve(dirname(file), spec).includes(`${join('src-main', 'electron')}`))
          bad('the host must not depend on the Electron shell');
      }
      if (layer === 'src-renderer') {
        if (isRelative && !['src-shared', 'src-renderer'].includes(target)) bad('src-renderer may import only src-shared');
        if (!isRelative && (spec.startsWith('node:') || /^electron(\/|$)/.test(spec) || ['fs', 'path', 'child_process', 'node-pty'].includes(spec)))
          bad('src-renderer runs in a browser');
      }
    }
  }
}
if (problems.length) {
  console.error(`layer check: ${problems.length} problem(s)\n${problems.join('\n')}`);
  process.exit(1);
}
console.log('layer check: ok');
