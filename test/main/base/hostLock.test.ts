import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimDataFolder } from '../../../src-main/base/dataFolderClaim.js';
import { dataLockPath, HostLock, processStartTime } from '../../../src-main/base/hostLock.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const BUILT = join(ROOT, 'dist-main', 'src-main', 'base', 'hostLock.js');

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-lock-'));
});
afterEach(() => {
  fs.chmodSync(root, 0o700);
  fs.rmSync(root, { recursive: true, force: true });
});

/** A real process that tries the lock and says what it got, then waits (holding it) until killed. */
function contender(path: string, go?: string) {
  const script = `
    const fs = require('node:fs');
    import(${JSON.stringify(BUILT)}).then(async ({ HostLock }) => {
      // start together: each waits for the go file, so the acquires overlap
      while (${JSON.stringify(go ?? '')} && !fs.existsSync(${JSON.stringify(go ?? '')})) await new Promise((r) => setTimeout(r, 1));
      const got = HostLock.acquire(${JSON.stringify(path)}, { kind: 'test', url: 'http://127.0.0.1:' + process.pid });
      process.stdout.write((got.ok ? 'won' : 'lost ' + got.holder.pid) + '\\n');
      setInterval(() => {}, 1000);
    });`;
  const proc = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const said = new Promise<string>((resolve) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.trim());
    });
  });
  return { proc, said };
}

const exited = (p: ReturnType<typeof spawn>) => new Promise((resolve) => (p.exitCode !== null || p.signalCode !== null ? resolve(null) : p.once('exit', resolve)));

describe('HostLock', () => {
  it('a lock left by a kill -9 does not block the next start', async () => {
    const path = join(root, 'host.lock');
    const first = contender(path);
    expect(await first.said).toBe('won');
    const second = HostLock.acquire(path, { kind: 'test' });
    expect(second.ok).toBe(false);
    if (!second.ok) expect(second.holder).toMatchObject({ pid: first.proc.pid, url: `http://127.0.0.1:${first.proc.pid}` });
    first.proc.kill('SIGKILL');
    await exited(first.proc);
    const third = HostLock.acquire(path, { kind: 'test' });
    expect(third.ok).toBe(true);
    if (third.ok) third.lock.release();
    expect(fs.existsSync(path)).toBe(false);
  });

  it('a pid reused by another process does not look like the holder (start time differs)', () => {
    const path = join(root, 'host.lock');
    // our own pid, alive, but a start time that is not ours: the host that wrote it is gone
    const mine = processStartTime(process.pid);
    expect(mine).not.toBeNull();
    fs.writeFileSync(path, JSON.stringify({ pid: process.pid, startTime: String(Number(mine) + 12345), url: 'http://127.0.0.1:1', kind: 'old' }));
    const got = HostLock.acquire(path, { kind: 'test' });
    expect(got.ok).toBe(true);
  });

  it('of several hosts starting at once exactly one wins, over a stale lock too', async () => {
    const path = join(root, 'host.lock');
    // a stale lock from a dead pid makes every contender race through the takeover as well
    fs.writeFileSync(path, JSON.stringify({ pid: 2 ** 22 + 1, startTime: '1', url: null, kind: 'dead' }));
    const go = join(root, 'go');
    const all = Array.from({ length: 4 }, () => contender(path, go));
    await new Promise((r) => setTimeout(r, 400)); // every node is up and polling
    fs.writeFileSync(go, '');
    const said = await Promise.all(all.map((c) => c.said));
    for (const c of all) c.proc.kill('SIGKILL');
    await Promise.all(all.map((c) => exited(c.proc)));
    expect(said.filter((s) => s === 'won')).toHaveLength(1);
    const winner = all[said.indexOf('won')]!.proc.pid;
    for (const s of said) if (s !== 'won') expect(s).toBe(`lost ${winner}`);
  });

  it('release leaves a lock that another host took over alone', () => {
    const path = join(root, 'host.lock');
    const got = HostLock.acquire(path, { kind: 'test' });
    if (!got.ok) throw new Error('no lock');
    fs.writeFileSync(path, JSON.stringify({ pid: 1, startTime: processStartTime(1), url: null, kind: 'other' }));
    got.lock.release();
    expect(fs.existsSync(path)).toBe(true);
  });

  it('a read-only data folder gets a clear message and its board data is untouched', () => {
    const data = join(root, 'data');
    fs.mkdirSync(join(data, 'threads'), { recursive: true });
    fs.writeFileSync(join(data, 'threads', 'journal'), 'board data');
    // root ignores modes; under /sys nobody may create files, which is the same refusal
    const target = process.getuid?.() === 0 ? '/sys/forkbench-readonly-test' : data;
    if (target === data) fs.chmodSync(data, 0o555);
    const got = claimDataFolder(target, 'forkbench serve');
    fs.chmodSync(data, 0o700);
    expect(got.ok).toBe(false);
    if (!got.ok) expect(got.message).toMatch(/cannot lock the data folder .* read-only for you \((EACCES|EPERM|EROFS)\); nothing was opened or changed/);
    expect(fs.readFileSync(join(data, 'threads', 'journal'), 'utf8')).toBe('board data');
    expect(fs.existsSync(dataLockPath(data))).toBe(false);
  });
});
