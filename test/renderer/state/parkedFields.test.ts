import { describe, expect, it } from 'vitest';
import { formatBudget, formatGrace, parseBudget, parseGrace } from '../../../src-renderer/state/parkedFields.js';
import { formatBytes, savedWorkOf, totalBytes } from '../../../src-renderer/state/savedWork.js';
import { NEW_TASK } from '../../../src-shared/board/reducer.js';
import type { SavedWork, Task } from '../../../src-shared/board/model.js';

describe('parked folders in the settings form and the Worktrees panel (issue 47 item 5)', () => {
  it('the grace is typed in minutes (the default 5 when unset) and sent in ms; empty or not a number sends nothing', () => {
    expect(formatGrace(undefined)).toBe('5');
    expect(formatGrace(90_000)).toBe('1.5');
    expect(parseGrace('0.02')).toBe(1_200);
    expect(parseGrace('10')).toBe(600_000);
    expect(parseGrace('')).toBeNull();
    expect(parseGrace('soon')).toBeNull();
  });

  it('the budget is MB, empty for none', () => {
    expect(formatBudget(null)).toBe('');
    expect(formatBudget(undefined)).toBe('');
    expect(formatBudget(512)).toBe('512');
    expect(parseBudget(' ')).toBeNull();
    expect(parseBudget('512')).toBe(512);
  });

  it('bytes read as a person reads them; totals of folders from a host that sends no figure count 0', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(8192)).toBe('8.0 KB');
    expect(formatBytes(1536 * 1024)).toBe('1.5 MB');
    expect(formatBytes(300 * 1024 ** 3)).toBe('300 GB');
    expect(totalBytes([{ bytes: 10 }, {}, { bytes: 5 }])).toBe(15);
  });

  it('saved work is listed oldest first, each with its task', () => {
    const w = (ref: string, at: number, token: number): SavedWork => ({ ref, sha: 'a'.repeat(40), path: `/p/${ref}`, token, author: 'shell-1', files: 1, at });
    const task = (id: string, saved: SavedWork[]): Task => ({ ...NEW_TASK, id, title: `title ${id}`, state: 'open', createdAt: 0, saved });
    const tasks = new Map([
      ['T-1', task('T-1', [w('r3', 30, 3)])],
      ['T-2', task('T-2', [w('r1', 10, 1), w('r2', 20, 2)])],
    ]);
    expect(savedWorkOf({ tasks }).map((r) => [r.taskId, r.ref, r.title])).toEqual([
      ['T-2', 'r1', 'title T-2'],
      ['T-2', 'r2', 'title T-2'],
      ['T-1', 'r3', 'title T-1'],
    ]);
    expect(savedWorkOf(null)).toEqual([]);
  });
});
