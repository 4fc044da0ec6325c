import { describe, expect, it } from 'vitest';
import { agentExitedNotice, lapseNotice, sentBackNotice } from '../../../src-shared/notices/notices.js';
import { NoticeDisplay, noticeLines } from '../../../src-renderer/state/noticeGroups.js';

describe('the notices stack (issue 44: notices once)', () => {
  it('six lapses in a row are one line that counts them, naming each task once, the newest in full', () => {
    const lapses = [1, 2, 3, 4, 5, 6].map((n) => lapseNotice(`T-${n}`, 'shell 1', `task ${n}`, 'open', n));
    const { lines, hidden } = noticeLines(lapses);
    expect(hidden).toBe(0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ kind: 'lapse', title: '6 claims lapsed', ids: lapses.map((l) => l.id) });
    expect(lines[0]!.body).toBe(`T-1, T-2, T-3, T-4, T-5, T-6. Newest: Claim lapsed: T-6 — shell 1's lease on "task 6" ran out; the task is back in the backlog.`);
  });

  it('one notice per id, kinds newest first, at most three lines, and how many the rest stand for', () => {
    const exit = agentExitedNotice('shell 2', { code: 1, signal: null }, 1);
    const lapse = lapseNotice('T-1', 'shell 1', 'a', 'open', 2);
    const conflict = sentBackNotice('T-4', 'b', 'conflict', 'Merge queue: x conflicts in notes.txt', 'shell 1', 3);
    const other = { id: 'read-only:k@4', about: 'read-only:k', title: 'Board read-only: p', body: 'disk full' };
    const { lines, hidden } = noticeLines([exit, lapse, lapse, conflict, other]);
    expect(lines.map((l) => l.title)).toEqual(['Board read-only: p', 'Merge conflict: T-4', 'Claim lapsed: T-1']);
    expect(lines.length).toBeLessThanOrEqual(NoticeDisplay.maxLines);
    expect(hidden).toBe(1);
    expect(lines[2]!.ids).toEqual([lapse.id]);
  });

  it('a conflict says it is one, with the files, and to whom the work went back', () => {
    const n = sentBackNotice('T-4', 'Fix parser', 'conflict', 'Merge queue: forkbench/T-4 does not merge cleanly into main: conflicts in notes.txt.', 'shell 1', 3);
    expect(n.title).toBe('Merge conflict: T-4');
    expect(n.body).toContain('went back to shell 1 with a full lease');
    expect(n.body).toContain('conflicts in notes.txt');
    expect(n.body).not.toContain('lapsed');
  });
});
