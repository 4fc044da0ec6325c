import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  descendantsOf,
  listProcesses,
  parseCpuTime,
  parsePsStatTime,
  parsePsTable,
  readProcFacts,
  readTreeCpu,
  sumTreeCpu,
} from '../../../src-main/pty/procReader.js';
import { parseProcStat, stateFromCode } from '../../../src-main/base/procStat.js';

const linux = process.platform === 'linux';
const children: ChildProcess[] = [];
afterEach(() => {
  // Each child leads its own process group, so its grandchildren (a busy loop) die with it.
  for (const c of children.splice(0)) {
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});
function run(cmd: string, args: string[]): ChildProcess {
  const c = spawn(cmd, args, { stdio: 'ignore', detached: true });
  children.push(c);
  return c;
}

/** A /proc/<pid>/stat line with the given comm, state and CPU fields (ticks). */
function statLine(comm: string, state: string, utime: number, stime: number, cutime = 0, cstime = 0): string {
  return `4242 (${comm}) ${state} 100 4200 4100 34816 4200 4194560 120 0 0 0 ${utime} ${stime} ${cutime} ${cstime} 20 0 1 0 9999 3133440 390 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n`;
}

describe('parseProcStat', () => {
  it('reads pid, comm, state, parents and CPU from a plain line', () => {
    expect(parseProcStat(statLine('node', 'R', 250, 50, 10, 5))).toEqual({
      pid: 4242, comm: 'node', code: 'R', state: 'running', ppid: 100, pgrp: 4200, session: 4100, tpgid: 4200,
      cpuMs: 3000, reapedChildCpuMs: 150, startTicks: 9999,
    });
  });

  it.each([
    ['spaces', 'my agent 2'],
    ['parens', 'x) S 1 2 (y'],
    ['a trailing paren', 'evil)'],
    ['only parens', ')()('],
    ['empty', ''],
  ])('finds the fields after a comm with %s', (_label, comm) => {
    const s = parseProcStat(statLine(comm, 'T', 7, 3));
    expect(s?.comm).toBe(comm);
    expect(s?.state).toBe('stopped');
    expect(s?.ppid).toBe(100);
    expect(s?.cpuMs).toBe(100);
  });

  it('maps state letters', () => {
    expect(['R', 'S', 'D', 'I', 'T', 't', 'Z', 'X'].map(stateFromCode)).toEqual([
      'running', 'sleeping', 'sleeping', 'sleeping', 'stopped', 'stopped', 'zombie', 'gone',
    ]);
  });

  it('rejects truncated or garbage lines', () => {
    expect(parseProcStat('')).toBeUndefined();
    expect(parseProcStat('12 (x) S 1 2')).toBeUndefined();
    expect(parseProcStat('no parens at all')).toBeUndefined();
  });

  it.runIf(linux)('parses the real /proc/self/stat', () => {
    // Synchronous: read from the main thread, which is then by definition running.
    const s = parseProcStat(readFileSync('/proc/self/stat', 'utf8'));
    expect(s?.pid).toBe(process.pid);
    expect(s?.state).toBe('running');
    expect(s!.cpuMs).toBeGreaterThan(0);
  });
});

describe('ps parsing (the macOS path; not otherwise run in CI)', () => {
  it.each([
    ['0:00.03', 30],
    ['12:34.56', 754_560],
    ['125:00.00', 7_500_000], // BSD ps lets minutes pass 59
    ['1:02:03.45', 3_723_450],
    ['00:00:01', 1_000],
    ['1-02:03:04', 93_784_000],
  ])('parses CPU time %s', (text, ms) => {
    expect(parseCpuTime(text)).toBe(ms);
  });

  it('rejects malformed CPU times', () => {
    expect(parseCpuTime('abc')).toBeUndefined();
    expect(parseCpuTime('1:2:x')).toBeUndefined();
  });

  it.each([
    ['S+   0:00.03\n', 'sleeping', 30],
    ['Ss   12:34.56', 'sleeping', 754_560],
    ['R+   0:05.00', 'running', 5_000],
    ['T    0:00.10', 'stopped', 100],
    ['Z    0:00.00', 'zombie', 0],
    ['U    0:00.00', 'sleeping', 0],
    ['S<Ll 00:00:04', 'sleeping', 4_000],
  ])('parses `ps -o stat=,time=` output %j', (out, state, cpuMs) => {
    expect(parsePsStatTime(out)).toEqual({ state, cpuMs });
  });

  it('empty ps output means the process is gone', () => {
    expect(parsePsStatTime('')).toEqual({ state: 'gone', cpuMs: 0 });
    expect(parsePsStatTime('\n')).toEqual({ state: 'gone', cpuMs: 0 });
  });

  it('parses a `ps -A -o pid=,ppid=,pgid=,stat=,time=` table and walks it', () => {
    const table = parsePsTable(
      ['    1     0     1 Ss     0:10.00', '  500     1   500 Ss     0:00.50', '  501   500   501 S+     0:01.00',
        '  502   501   501 R+     0:02.00', '  900     1   900 S      0:09.00', 'garbage line'].join('\n'),
    );
    expect(table.map((p) => p.pid)).toEqual([1, 500, 501, 502, 900]);
    const tree = descendantsOf(table, 500);
    expect(tree.map((p) => p.pid)).toEqual([500, 501, 502]);
    expect(sumTreeCpu(tree)).toBe(3_500);
    expect(descendantsOf(table, 12345)).toEqual([]);
  });

  it.runIf(linux)('agrees with the real procps ps for this process', async () => {
    const { execFileSync } = await import('node:child_process');
    const parsed = parsePsStatTime(execFileSync('ps', ['-o', 'stat=,time=', '-p', String(process.pid)], { encoding: 'utf8' }));
    expect(parsed?.state).toMatch(/running|sleeping/);
  });
});

describe.runIf(linux)('live processes', () => {
  it('reports a weirdly named process as sleeping', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fb-comm-'));
    try {
      const weird = join(dir, 'a b) (c');
      symlinkSync('/bin/sleep', weird);
      const c = run(weird, ['30']);
      // Right after exec the process may still be running its startup; what matters is the parse.
      const facts = await waitForAsync(async () => {
        const p = (await listProcesses()).find((x) => x.pid === c.pid);
        return p?.comm === 'a b) (c' && p.state === 'sleeping' ? p : undefined;
      }, 3_000);
      expect(facts.ppid).toBe(process.pid);
      expect((await readProcFacts(c.pid!)).state).toBe('sleeping');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a SIGSTOPped process as stopped, and running again after SIGCONT', async () => {
    const c = run('sleep', ['30']);
    process.kill(c.pid!, 'SIGSTOP');
    await waitForAsync(async () => (await readProcFacts(c.pid!)).state === 'stopped', 3_000);
    process.kill(c.pid!, 'SIGCONT');
    await waitForAsync(async () => (await readProcFacts(c.pid!)).state === 'sleeping', 3_000);
  });

  it('reports an unreaped child as a zombie', async () => {
    // `exec sleep` replaces the shell with a process that never waits, so the background child stays a zombie.
    // (Not waiting for "gone" after: how soon the orphan is reaped depends on the machine's pid 1.)
    const parent = run('sh', ['-c', 'sleep 0.01 & exec sleep 30']);
    const zombie = await waitForAsync(async () => (await listProcesses()).find((p) => p.ppid === parent.pid && p.state === 'zombie'), 3_000);
    expect((await readProcFacts(zombie.pid)).state).toBe('zombie');
  });

  it('sums CPU over the tree: a busy grandchild counts, a sleeping one does not', async () => {
    // `; true` keeps the outer shell alive as the parent instead of exec'ing the last command.
    const busy = run('sh', ['-c', 'sh -c "while :; do :; done"; true']);
    const idle = run('sh', ['-c', 'sleep 30; true']);
    await waitForAsync(async () => (await readTreeCpu(busy.pid!)).processes === 2, 3_000);
    await waitForAsync(async () => (await readTreeCpu(idle.pid!)).processes === 2, 3_000);
    const [b0, i0, root0] = [await readTreeCpu(busy.pid!), await readTreeCpu(idle.pid!), await readProcFacts(busy.pid!)];
    await new Promise((r) => setTimeout(r, 400));
    const [b1, i1, root1] = [await readTreeCpu(busy.pid!), await readTreeCpu(idle.pid!), await readProcFacts(busy.pid!)];
    expect(b1.cpuMs - b0.cpuMs).toBeGreaterThan(50); // ~400 on an idle machine; slack for a loaded CI box
    expect(root1.cpuMs - root0.cpuMs).toBeLessThan(50); // the root itself only waits
    expect(i1.cpuMs - i0.cpuMs).toBeLessThan(50);
    expect(b1.state).toBe('sleeping');
  });

  it('a missing pid is gone', async () => {
    expect(await readProcFacts(2 ** 22 + 12345)).toEqual({ pid: 2 ** 22 + 12345, state: 'gone', cpuMs: 0 });
    expect((await readTreeCpu(2 ** 22 + 12345)).state).toBe('gone');
  });
});

async function waitForAsync<T>(check: () => Promise<T | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
