#!/usr/bin/env node
// The `forkbench` command. CommonJS on purpose: it starts ~15 ms faster than an ESM entry, and agents run it
// for every board call. The bundle is built by `npm install` (prepare) into dist-main/cli/.
'use strict';
const { join } = require('node:path');
let cli;
try {
  cli = require(join(__dirname, '..', 'dist-main', 'cli', 'forkbench.cjs'));
} catch (err) {
  if (err && err.code === 'MODULE_NOT_FOUND') {
    process.stderr.write('forkbench: not built yet; run `npm install` (or `npm run build`) in the Forkbench folder\n');
    process.exit(4);
  }
  throw err;
}
cli.main();
