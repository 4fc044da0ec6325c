import type { Board } from '../../src-shared/board/reducer.js';
import type { SavedWork } from '../../src-shared/board/model.js';
import type { WorktreeInfo } from '../../src-shared/protocol/windowApi.js';

/** One saved work as the Worktrees panel lists it (issue 47 item 5): the board's record, with its task. */
export interface SavedRow extends SavedWork {
  taskId: string;
  title: string;
}

/** Every parked folder's saved work on the board, oldest first (the order they were saved in). */
export function savedWorkOf(board: Pick<Board, 'tasks'> | null): SavedRow[] {
  const rows: SavedRow[] = [];
  for (const t of board?.tasks.values() ?? []) for (const w of t.saved ?? []) rows.push({ ...w, taskId: t.id, title: t.title });
  return rows.sort((a, b) => a.at - b.at || a.token - b.token);
}

/** The disk the listed folders take, in bytes (a host from before sends no figure: 0). */
export function totalBytes(list: readonly Pick<WorktreeInfo, 'bytes'>[]): number {
  return list.reduce((n, w) => n + (w.bytes ?? 0), 0);
}

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];
/** Binary steps (1 KB = 1024 B), as `du -h` and the budget setting (MB) count. */
const STEP = 1024;

/** Bytes as a person reads them: three significant figures at most, in the largest unit under 1,024. */
export function formatBytes(n: number): string {
  let v = n;
  let u = 0;
  while (v >= STEP && u < UNITS.length - 1) {
    v /= STEP;
    u++;
  }
  return u === 0 ? `${v} B` : `${v >= 100 ? Math.round(v) : v.toFixed(1)} ${UNITS[u]}`;
}
