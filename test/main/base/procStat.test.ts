import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { isSameProcess, readStartTicks } from '../../../src-main/base/procStat.js';
import { processStartTime } from '../../../src-main/base/hostLock.js';

const linux = process.platform === 'linux';

describe('process identity (base/procStat.ts)', () => {
  it.runIf(linux)('a pid with its start time is that process while it runs, and no longer once it is gone', async () => {
    const child = spawn('sleep', ['60'], { stdio: 'ignore' });
    const pid = child.pid!;
    const ticks = readStartTicks(pid);
    expect(Number.isInteger(ticks)).toBe(true);
    expect(isSameProcess(pid, ticks)).toBe(true);
    // Another start time at that pid is another process (the pid was reused).
    expect(isSameProcess(pid, ticks! + 1)).toBe(false);
    // The host lock records the same start time, as text.
    expect(processStartTime(pid)).toBe(String(ticks));
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
    expect(isSameProcess(pid, ticks)).toBe(false);
    expect(readStartTicks(pid)).toBeUndefined();
    expect(processStartTime(pid)).toBeNull();
  });
});
