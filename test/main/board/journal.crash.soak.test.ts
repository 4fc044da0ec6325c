import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadBoard, readLog } from '../../../src-main/board/journal.js';

/**
 * The journal's crash loop (moved from journal.test.ts into the soak tier, test/setup/tiers.ts, as it is): a
 * writer killed at random moments, round after round, loses no acknowledged write.
 */
const dirs: string[] = [];
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'forkbench-board-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('crash safety', () => {
  it('SIGKILL at random moments, 20 times, loses no acknowledged write and leaves a board that loads', async () => {
    const dir = freshDir();
    const acked: string[] = [];
    let kills = 0;
    for (let round = 0; round < 20; round++) {
      const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '..', '..', 'fixtures', 'board', 'crashWriter.ts'), dir, `r${round}`], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const killAfter = 1 + Math.floor(Math.random() * 120); // acks before the kill: from the first write to a few hundred
      await new Promise<void>((resolve, reject) => {
        let buf = '';
        let seen = 0;
        child.stdout.on('data', (d: Buffer) => {
          buf += d.toString();
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (line.startsWith('ACK ')) {
              acked.push(line.slice(4));
              if (++seen === killAfter) setTimeout(() => child.kill('SIGKILL'), Math.random() * 5);
            }
          }
        });
        child.on('exit', (code, signal) => {
          if (signal === 'SIGKILL') {
            kills++;
            resolve();
          } else reject(new Error(`writer exited ${code} ${signal}: ${stderr}`));
        });
      });
    }
    expect(kills).toBe(20);
    const { board } = loadBoard(dir);
    const grants = new Map<number, string>();
    let lastToken = 0;
    for (const e of readLog(dir)) {
      if (e.kind === 'grant') {
        // tokens are never reused, across every restart
        expect(e.token).toBeGreaterThan(lastToken);
        lastToken = e.token;
        grants.set(e.token, e.taskId);
      }
    }
    for (const a of acked) {
      const [kind, taskId, ...rest] = a.split(' ');
      const t = board.tasks.get(taskId as string);
      expect(t, `acknowledged ${a} is missing`).toBeDefined();
      if (kind === 'add') expect(t?.title).toBe(rest.join(' '));
      if (kind === 'claim') expect(grants.get(Number(rest[0]))).toBe(taskId);
      if (kind === 'note') expect(t?.notes.map((n) => n.text)).toContain(rest.join(' '));
    }
    expect(acked.length).toBeGreaterThan(20);
  }, 120_000);
});
