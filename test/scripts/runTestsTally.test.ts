import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tally, type VitestJsonReport } from '../../scripts/vitest-tally.mjs';

/** Real vitest 4 JSON reports (paths shortened, stacks cut to their first line). */
const report = (name: string): VitestJsonReport =>
  JSON.parse(fs.readFileSync(join(import.meta.dirname, '..', 'fixtures', 'scripts', 'vitest-reports', `${name}.json`), 'utf8')) as VitestJsonReport;
const counts = (name: string, exitCode = 1) => {
  const { passed, failed, skipped } = tally(report(name), exitCode);
  return { passed, failed, skipped };
};

describe('run-tests tally: a suite that failed never reads as "0 failed"', () => {
  it('Chromium missing: the e2e beforeAll threw, vitest says 0 failed 1 skipped; we say 1 failed', () => {
    const r = report('chromium-missing') as VitestJsonReport & { numFailedTests: number; numPendingTests: number };
    expect([r.numFailedTests, r.numPendingTests]).toEqual([0, 1]); // what vitest itself counts
    expect(counts('chromium-missing')).toEqual({ passed: 0, failed: 1, skipped: 0 });
    expect(tally(report('chromium-missing'), 1).notes).toEqual([
      { file: 'e2e/thread.e2e.test.ts', why: expect.stringContaining('1 test(s) never ran: Chromium not found') },
    ]);
  });

  it('a top-level beforeAll that throws fails every test it kept from running', () => {
    expect(counts('top-level-beforeAll-throws')).toEqual({ passed: 0, failed: 2, skipped: 0 });
  });

  it('a describe-level beforeAll that throws: its tests fail, the passing describe still passes', () => {
    // The file's it.skip cannot be told apart from the hook-skipped tests in the report: counted as failed too.
    expect(counts('describe-beforeAll-throws')).toEqual({ passed: 1, failed: 3, skipped: 0 });
  });

  it('an afterAll that throws after its tests passed is one failure', () => {
    expect(counts('afterAll-throws')).toEqual({ passed: 1, failed: 1, skipped: 0 });
  });

  it('a file that does not load is one failure', () => {
    expect(counts('file-does-not-load')).toEqual({ passed: 0, failed: 1, skipped: 0 });
  });

  it('an ordinary run: failed tests count once; it.skip, it.todo and ctx.skip() stay skipped', () => {
    expect(counts('mixed-results')).toEqual({ passed: 1, failed: 1, skipped: 3 });
    expect(tally(report('mixed-results'), 1).notes).toEqual([]);
  });

  it('vitest failing with no failure in its report (an unhandled error) is one failure; a clean run is none', () => {
    const clean: VitestJsonReport = { testResults: [{ name: 'a.test.ts', status: 'passed', assertionResults: [{ status: 'passed', duration: 1 }] }] };
    expect(tally(clean, 0)).toMatchObject({ passed: 1, failed: 0, skipped: 0, notes: [] });
    expect(tally(clean, 1)).toMatchObject({ passed: 1, failed: 1, skipped: 0 });
  });
});
