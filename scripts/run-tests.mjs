#!/usr/bin/env node
// Runs vitest and ends with one plain line, "Tests: N passed, N failed, N skipped", that any CI can read.
// A run that executes no test fails: a glob that matches nothing must never look green.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';

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
  const r = JSON.parse(readFileSync(out, 'utf8'));
  passed = r.numPassedTests;
  failed = r.numFailedTests;
  skipped = r.numPendingTests + (r.numTodoTests ?? 0);
  // A file that fails to load has no tests but is a failure all the same.
  failed += r.testResults.filter((f) => f.status === 'failed' && f.assertionResults.length === 0).length;
} catch (err) {
  console.error(`could not read ${out}: ${err.message}`);
  failed += 1;
}
console.log(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
if (passed === 0) console.error('no test ran: that is a failure, not a pass');
process.exit(run.status !== 0 || failed > 0 || passed === 0 ? 1 : 0);
