#!/usr/bin/env node
// Builds the window (src-renderer) with vite into dist-renderer/. Runs vite through its API so the build
// uses the project's pinned vite and prints one line, not a file listing.
import { build } from 'vite';

const t0 = performance.now();
await build({ configFile: 'vite.config.ts', logLevel: 'warn' });
console.log(`renderer built in ${Math.round(performance.now() - t0)} ms -> dist-renderer/`);
