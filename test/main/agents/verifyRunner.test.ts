import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { failureNote, runVerify } from '../../../src-main/agents/verifyRunner.js';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';
import { readProcStat } from '../../../src-main/base/procStat.js';

/** Whether `pid` still runs (a zombie has ended: only its parent has not reaped it yet). */
const running = (pid: number) => {
  const st = readProcStat(pid);
  return !!st && st.state !== 'zombie' && st.state !== 'gone';
};
/** The pids a test's verify left on the machine, ended after it whatever it found. */
const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) if (running(pid)) process.kill(pid, 'SIGKILL');
});
/** The verify's outcome, or 'hung' when it has none within `ms`. */
const within = <T,>(p: Promise<T>, ms: number): Promise<T | 'hung'> => Promise.race([p, new Promise<'hung'>((r) => setTimeout(() => r('hung'), ms).unref())]);
/** A pid the verify's shell wrote to `file`. */
const pidIn = (file: string) => {
  const pid = Number(fs.readFileSync(file, 'utf8'));
  leftovers.push(pid);
  return pid;
};

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

  // Issue 42, item 4: a test that leaves `setsid -f sleep 3600` holding the output pipe kept verify from
  // ever finishing (it waited for the pipe to close), and so the merge queue behind it.
  it('a grandchild that leaves with `setsid -f` and holds the output pipe neither keeps verify from finishing nor outlives it', async () => {
    const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-verify-'));
    try {
      const pidFile = join(dir, 'pid');
      const r = await within(runVerify(`setsid -f sh -c 'echo $$ > pid.tmp && mv pid.tmp pid; exec sleep 3600'; while [ ! -s pid ]; do sleep 0.01; done; echo fine`, dir, 60_000), 15_000);
      const pid = pidIn(pidFile);
      expect(r).toMatchObject({ passed: true, exitCode: 0, timedOut: false });
      expect(r !== 'hung' && r.tail).toBe('fine\n');
      expect(running(pid)).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('at the time limit, a `setsid -f` grandchild that ignores SIGTERM is ended too', async () => {
    const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-verify-'));
    try {
      const r = await runVerify(`setsid -f sh -c 'trap "" TERM; echo $$ > pid.tmp && mv pid.tmp pid; while :; do sleep 0.1; done' >/dev/null 2>&1; sleep 30`, dir, 1000);
      expect(r).toMatchObject({ passed: false, timedOut: true });
      const pid = pidIn(join(dir, 'pid'));
      await new Promise((res) => setTimeout(res, 200));
      expect(running(pid)).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('stopping a verify ends it and what it started at once, as a stop and not a failure of the work', async () => {
    const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-verify-'));
    try {
      const stop = new AbortController();
      const r = runVerify(`setsid -f sh -c 'echo $$ > pid.tmp && mv pid.tmp pid; exec sleep 3600'; sleep 3600`, dir, 600_000, process.env, { signal: stop.signal });
      const pidFile = join(dir, 'pid');
      for (let i = 0; i < 500 && !fs.existsSync(pidFile); i++) await new Promise((res) => setTimeout(res, 20));
      const pid = pidIn(pidFile);
      stop.abort();
      const o = await within(r, 15_000);
      expect(o).toMatchObject({ passed: false, timedOut: false, stopped: true });
      expect(o !== 'hung' && failureNote('sh check.sh', o)).toMatch(/^Verify `sh check\.sh` was stopped after/);
      expect(running(pid)).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('a host killed -9 mid-verify takes the verify’s whole tree with it: nothing is left to answer as a person', async () => {
    const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-verify-'));
    try {
      // A host of its own (a Node process running the runner), killed as a machine's host dies.
      const runner = join(import.meta.dirname, '..', '..', '..', 'src-main', 'agents', 'verifyRunner.ts');
      const script = `import { runVerify } from ${JSON.stringify(runner)}; runVerify("setsid -f sh -c 'echo $$ > pid.tmp && mv pid.tmp pid; exec sleep 3600'; sleep 3600", ${JSON.stringify(dir)}, 600000);`;
      const host = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: 'ignore' });
      const pidFile = join(dir, 'pid');
      for (let i = 0; i < 1000 && !fs.existsSync(pidFile); i++) await new Promise((res) => setTimeout(res, 20));
      const pid = pidIn(pidFile);
      host.kill('SIGKILL');
      for (let i = 0; i < 250 && running(pid); i++) await new Promise((res) => setTimeout(res, 20));
      expect(running(pid)).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
