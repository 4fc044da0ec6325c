#!/usr/bin/env node
// The `forkbench` command. The TypeScript is compiled by `npm install` (prepare) into dist-main/.
import { existsSync } from 'node:fs';

const entry = new URL('../dist-main/src-main/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('forkbench: not built yet; run `npm install` (or `npm run build`) in the Forkbench folder\n');
  process.exit(4);
}
const { main } = await import(entry.href);
await main();
