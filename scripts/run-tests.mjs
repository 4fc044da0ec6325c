#!/usr/bin/env node
// Runs vitest and ends with one plain line, "Tests: N passed, N failed, N skipped", that any CI can read.
// A run that executes no test fails: a glob that matches nothing must never look green. A file that failed
// outside its tests (did not load, a beforeAll/afterAll hook threw) counts as failed: see vitest-tally.mjs.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { relative } from 'node:path';
import { tally } from './vitest-tally.mjs';

const out = 'test-results/vitest.json';
mkdirSync('test-results', { recursive: true });
rmSync(out, { force: true });
const run = spawnSync(
  process.execPath,
  ['node_modules/vitest/vitest.mjs', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${out}`, ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
let passed = 0, failed = 0, skipped = 0;
try {
  const r = tally(JSON.parse(readFileSync(out, 'utf8')), run.status);
  ({ passed, failed, skipped } = r);
  for (const n of r.notes) console.error(`counted as failed: ${relative(process.cwd(), n.file) || n.file}: ${n.why}`);
} catch (err) {
  console.error(`could not read ${out}: ${err.message}`);
  failed += 1;
}
if (passed === 0) console.error('no test ran: that is a failure, not a pass');
console.log(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(run.status !== 0 || failed > 0 || passed === 0 ? 1 : 0);
