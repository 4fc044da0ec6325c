import * as fs from 'node:fs';
import { join } from 'node:path';
import type { BoardEventBody } from '../../src-shared/board/events.js';
import { DEFAULT_SETTINGS } from '../../src-shared/board/reducer.js';

/**
 * A board folder as Forkbench wrote it before its journal had checksums and a manifest: one segment of bare
 * event lines, numbered from 1. Tests use it for data that is already on disk: what an older version
 * accepted (a title with an escape sequence) and a newer one must still load, and show safely.
 */
export function writeLegacyJournal(dir: string, bodies: BoardEventBody[]): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const at = Date.now();
  const lines = bodies.map((b, i) => `${JSON.stringify({ seq: i + 1, at, mono: i, ...b })}\n`);
  const file = join(dir, 'segment-000001.jsonl');
  fs.writeFileSync(file, lines.join(''), { mode: 0o600 });
  return file;
}

export const legacyThread = (threadId: string, goal = ''): BoardEventBody => ({ kind: 'thread-created', threadId, goal, settings: DEFAULT_SETTINGS });
export const legacyTask = (taskId: string, title: string, body = ''): BoardEventBody => ({ kind: 'task-added', taskId, title, body, verify: null, by: 'user' });
export const legacyNote = (taskId: string, text: string): BoardEventBody => ({ kind: 'note', taskId, by: 'user', text });
