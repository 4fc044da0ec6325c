import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { failureNote, runVerify } from '../../../src-main/agents/verifyRunner.js';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';

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

  it('a failing command’s coloured, CR-ridden output becomes a note the board takes, with no raw control in it', async () => {
    const bad = await runVerify(`printf '\\033[31mFAIL\\033[0m parser\\r\\nprogress 10%%\\rprogress 100%%\\n\\033]0;title\\007\\n'; exit 1`, tmpdir(), 10_000);
    const note = failureNote('npm test', bad);
    expect(note).toContain('FAIL parser\nprogress 10%\nprogress 100%\n\\x1b]0;title\\x07');
    expect(note).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    // the host returns the task with this note as the reason: the board must not refuse it
    const engine = new LeaseEngine(new ManualClock());
    engine.createThread('th');
    engine.addTask({ title: 't' });
    expect(engine.userNote('T-1', note, 'verify').ok).toBe(true);
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
