import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../../src-main/base/atomicWrite.js';

const dirs: string[] = [];
const freshDir = () => {
  const d = fs.mkdtempSync(join(tmpdir(), 'atomic-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Two whole contents a reader can tell apart, each large enough (4 MiB) that a plain write would be seen
 *  half done by a reader polling in another process. */
const SIZE = 4 * 1024 * 1024;
const OLD = 'o'.repeat(SIZE);
const NEW = 'n'.repeat(SIZE);

describe('writeFileAtomic', () => {
  it('replaces the content and leaves no temp file, durable or not', () => {
    const dir = freshDir();
    const f = join(dir, 'file');
    fs.writeFileSync(f, 'before');
    writeFileAtomic(f, 'after');
    expect(fs.readFileSync(f, 'utf8')).toBe('after');
    writeFileAtomic(f, 'durable', { durable: true });
    expect(fs.readFileSync(f, 'utf8')).toBe('durable');
    expect(fs.readdirSync(dir)).toEqual(['file']);
  });

  it('gives the new file the mode asked for, owner-only by default', () => {
    const dir = freshDir();
    writeFileAtomic(join(dir, 'private'), 'x');
    writeFileAtomic(join(dir, 'script'), '#!/bin/sh\n', { mode: 0o700 });
    expect(fs.statSync(join(dir, 'private')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(join(dir, 'script')).mode & 0o777).toBe(0o700);
  });

  it('a failed write leaves the old content and no temp file', () => {
    const dir = freshDir();
    const f = join(dir, 'file');
    fs.writeFileSync(f, 'old');
    // Renaming a file onto a non-empty folder fails, after the temp file is written: the last step breaks.
    const target = join(dir, 'folder');
    fs.mkdirSync(target);
    fs.writeFileSync(join(target, 'inside'), 'keep');
    expect(() => writeFileAtomic(target, 'new')).toThrow();
    expect(fs.readFileSync(f, 'utf8')).toBe('old');
    expect(fs.readdirSync(dir).sort()).toEqual(['file', 'folder']);
  });

  it('a reader in another process sees the old content or the new, never part of either', async () => {
    const dir = freshDir();
    const f = join(dir, 'file');
    fs.writeFileSync(f, OLD);
    // The reader polls until told to stop and reports every content that was neither whole old nor whole new.
    const reader = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'); const f = ${JSON.stringify(f)}; let reads = 0, bad = 0, stop = false;
         process.stdin.on('data', () => { stop = true; });
         (function loop() {
           for (let i = 0; i < 50; i++) {
             const s = fs.readFileSync(f, 'latin1'); reads++;
             if (s.length !== ${SIZE} || (s[0] !== s[s.length - 1]) || s.indexOf(s[0] === 'o' ? 'n' : 'o') !== -1) bad++;
           }
           if (stop) { process.stdout.write(JSON.stringify({ reads, bad })); process.exit(0); }
           setImmediate(loop);
         })();`,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    let out = '';
    reader.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise<void>((r) => reader.on('exit', () => r()));
    // Let the reader get going, then swap the content back and forth under it.
    await new Promise((r) => setTimeout(r, 100));
    const WRITES = 40;
    for (let i = 0; i < WRITES; i++) {
      writeFileAtomic(f, i % 2 === 0 ? NEW : OLD);
      await new Promise((r) => setImmediate(r));
    }
    reader.stdin.end('stop');
    await exited;
    const { reads, bad } = JSON.parse(out) as { reads: number; bad: number };
    expect(reads).toBeGreaterThan(0);
    expect(bad).toBe(0);
    expect(fs.readFileSync(f, 'utf8')).toBe(OLD);
    expect(fs.readdirSync(dir)).toEqual(['file']);
  });
});
