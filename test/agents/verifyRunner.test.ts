import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { failureNote, runVerify } from '../../src-main/agents/verifyRunner.js';

describe('verify runner', () => {
  it('runs in the given folder and keeps the tail of the output', async () => {
    const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-verify-'));
    try {
      const ok = await runVerify('pwd; echo fine', dir, 10_000);
      expect(ok).toMatchObject({ passed: true, exitCode: 0, timedOut: false });
      expect(ok.tail).toContain(fs.realpathSync(dir));
      const bad = await runVerify('seq 1 5000; echo "2 tests failed" >&2; exit 3', dir, 10_000);
      expect(bad).toMatchObject({ passed: false, exitCode: 3 });
      expect(bad.tail.length).toBeLessThanOrEqual(4096);
      expect(bad.tail).toMatch(/2 tests failed\n$/);
      expect(failureNote('npm test', bad)).toMatch(/^Verify `npm test` exited with 3/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('kills the whole process group at the time limit', async () => {
    const marker = join(tmpdir(), `forkbench-verify-${process.pid}-${Date.now()}`);
    const r = await runVerify(`(sleep 3; touch ${marker}) & sleep 30`, tmpdir(), 300);
    expect(r).toMatchObject({ passed: false, timedOut: true });
    await new Promise((res) => setTimeout(res, 3500));
    // the background child was in the group too: it never got to touch the file
    expect(fs.existsSync(marker)).toBe(false);
  });
});
