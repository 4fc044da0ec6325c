import * as fs from 'node:fs';
import { join } from 'node:path';
import { Limits } from '../../src-shared/board/limits.js';
import { DEFAULT_SETTINGS } from '../../src-shared/board/reducer.js';
import { encodeLine, JOURNAL_FORMAT, segmentHeader } from '../../src-main/board/journalRecord.js';

/**
 * The board folder an `add` flood left before the board had quotas: `tasks` tasks by one agent, each with a
 * full-size (64 KiB) body of its own, every line checksummed, all in one segment. For the tests and the
 * bench of a board too large for one string.
 */
export function writeFloodedBoard(boardDir: string, threadId: string, tasks: number): void {
  fs.mkdirSync(boardDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(join(boardDir, 'journal.json'), JSON.stringify({ format: JOURNAL_FORMAT, since: 1 }));
  const fd = fs.openSync(join(boardDir, 'segment-000001.jsonl'), 'w', 0o600);
  const at = Date.UTC(2026, 0, 1);
  let chunk: string[] = [encodeLine(segmentHeader(1, 0)), encodeLine({ kind: 'thread-created', threadId, goal: '', settings: DEFAULT_SETTINGS, seq: 1, at, mono: 0 })];
  for (let i = 1; i <= tasks; i++) {
    const body = `flood ${i} `.padEnd(Limits.maxBodyChars, 'x');
    chunk.push(encodeLine({ kind: 'task-added', taskId: `T-${i}`, title: `flood ${i}`, body, verify: null, by: 'a1', seq: i + 1, at: at + i, mono: i }));
    if (chunk.length >= 256 || i === tasks) {
      fs.writeSync(fd, chunk.join(''));
      chunk = [];
    }
  }
  fs.closeSync(fd);
}
