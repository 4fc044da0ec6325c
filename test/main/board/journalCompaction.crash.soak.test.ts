import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { loadBoard } from '../../../src-main/board/journal.js';

/**
 * Journal compaction's crash loop (moved from journalCompaction.test.ts into the soak tier, test/setup/tiers.ts,
 * as it is): a SIGKILL in the middle of a snapshot or a removal, round after round, loses nothing.
 */
const dirs: string[] = [];
function freshDir(): string {
  const d = fs.mkdtempSync(join(tmpdir(), 'forkbench-compact-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const segmentBytes = (dir: string) =>
  fs
    .readdirSync(dir)
    .filter((f) => /^segment-\d+\.jsonl$/.test(f))
    .reduce((n, f) => n + fs.statSync(join(dir, f)).size, 0);

describe('journal compaction', () => {
  it('SIGKILL while a snapshot is written or segments removed, 16 times, loses no acknowledged write, leaves no temp file and stays bounded', async () => {
    const dir = freshDir();
    const acked: string[] = [];
    let midSnapshot = 0;
    for (let round = 0; round < 16; round++) {
      const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '..', '..', 'fixtures', 'board', 'compactWriter.ts'), dir, `r${round}`], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      // Even rounds: killed the moment a snapshot's temp file appears (in the middle of writing it); odd
      // rounds: after a random number of acknowledged writes, wherever that lands (a removal, an append).
      const onSnapshot = round % 2 === 0;
      const watcher = onSnapshot
        ? fs.watch(dir, (_ev, name) => {
            if (name && /^snapshot\.json\..*\.tmp$/.test(String(name)) && child.exitCode === null) {
              midSnapshot++;
              child.kill('SIGKILL');
            }
          })
        : null;
      const killAfter = 5 + Math.floor(Math.random() * 60);
      await new Promise<void>((resolve, reject) => {
        let buf = '';
        let seen = 0;
        child.stdout.on('data', (d: Buffer) => {
          buf += d.toString();
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (!line.startsWith('ACK ')) continue;
            acked.push(line.slice(4));
            if (++seen === killAfter && !onSnapshot) setTimeout(() => child.kill('SIGKILL'), Math.random() * 5);
            // A snapshot comes every ~16 writes; one that never does is a failure to count, not a hang.
            if (seen === 400 && onSnapshot) child.kill('SIGKILL');
          }
        });
        child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`writer exited ${code} ${signal}: ${stderr}`))));
      });
      watcher?.close();
      // Every round's board loads, whatever the kill interrupted.
      expect(() => loadBoard(dir)).not.toThrow();
    }
    expect(midSnapshot).toBeGreaterThanOrEqual(4);
    const b = await JournalBoard.open({ dir, compactBytes: 32 * 1024, historyKeepBytes: 64 * 1024 });
    for (const a of acked) {
      const [taskId, round, k] = a.split(' ');
      const t = b.state.tasks.get(taskId as string);
      expect(t?.title, `acknowledged ${a} is missing`).toBe(`${round} ${k}`);
      expect(t?.body.startsWith(`${round} ${k} `)).toBe(true);
    }
    await b.close();
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(segmentBytes(dir)).toBeLessThanOrEqual(64 * 1024 + 32 * 1024 + 8 * 1024);
  }, 180_000);
});
