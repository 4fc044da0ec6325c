// Turns vitest's JSON report into the three numbers of the final "Tests: N passed, N failed, N skipped" line.
//
// vitest counts only tests. A file can fail without any failed test: it did not load (no tests at all), a
// beforeAll hook threw (vitest then reports every test of that suite as "skipped", and the file as
// "failed"), or an afterAll hook threw after its tests passed. None of that may read as "0 failed":
//   - in a file whose status is "failed" but that has no failed test, the tests that never ran (skipped
//     with no duration: a hook failed before them) count as failed, not skipped;
//   - if there are none, the file itself counts as one failure.
// A test that skipped itself at run time (ctx.skip(): it has a duration) stays skipped. The JSON cannot tell
// a hook-skipped test from an it.skip one in the same failed file, so such an it.skip counts as failed
// too: a failed file may over-count its failures, never hide them.

/**
 * @param {{ testResults?: Array<{ name: string, status: string, message?: string,
 *   assertionResults: Array<{ status: string, duration?: number }> }> }} report vitest's JSON report
 * @param {number | null} [exitCode] vitest's exit code: non-zero with no failure found counts as one failure
 */
export function tally(report, exitCode = 0) {
  let passed = 0, failed = 0, skipped = 0;
  /** @type {Array<{ file: string, why: string }>} */
  const notes = [];
  for (const file of report.testResults ?? []) {
    const tests = file.assertionResults ?? [];
    const p = tests.filter((t) => t.status === 'passed').length;
    const f = tests.filter((t) => t.status === 'failed').length;
    const neverRan = tests.filter((t) => t.status !== 'passed' && t.status !== 'failed' && t.duration === undefined).length;
    const s = tests.length - p - f;
    passed += p;
    failed += f;
    skipped += s;
    if (file.status === 'failed' && f === 0) {
      const why = (file.message ?? '').split('\n')[0] || 'a hook failed';
      if (neverRan > 0) {
        failed += neverRan;
        skipped -= neverRan;
        notes.push({ file: file.name, why: `${neverRan} test(s) never ran: ${why}` });
      } else {
        failed += 1;
        notes.push({ file: file.name, why: tests.length ? `failed after its tests: ${why}` : `did not load: ${why}` });
      }
    }
  }
  if (exitCode !== 0 && failed === 0) {
    failed += 1;
    notes.push({ file: 'vitest', why: `exited ${exitCode ?? 'on a signal'} with no failed test in its report (see its output above)` });
  }
  return { passed, failed, skipped, notes };
}
