/**
 * Issue 42: a journal's events are checked when it is opened, like input. A CRC is no seal (whoever can write
 * the folder can compute one): an event appended while no host ran, with a valid checksum, that gives a claim a
 * 10-year lease was simply applied, and one that could not apply (a task added twice) kept the board from
 * opening at all. Each is now set aside: the board opens without it, names it (position, kind, why) once,
 * and takes writes at the positions after it.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { segments, segName } from '../../../src-main/board/journalFiles.js';
import { encodeLine } from '../../../src-main/board/journalRecord.js';
import { QUARANTINE_FILE } from '../../../src-main/board/quarantine.js';

const TEN_YEARS_MS = 10 * 365 * 24 * 3_600_000;
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});
function freshDir(): string {
  const d = fs.mkdtempSync(join(tmpdir(), 'fb-journal-quarantine-'));
  roots.push(d);
  return join(d, 'board');
}

/** Append an event to the newest segment as the journal writes one, checksum and all, as if no host ran. */
function appendByHand(dir: string, event: (seq: number, mono: number) => Record<string, unknown>): number {
  const file = join(dir, segName(segments(dir).at(-1)!));
  const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
  const last = JSON.parse(lines.at(-1)!) as { seq: number; mono: number };
  const seq = last.seq + 1;
  fs.appendFileSync(file, encodeLine({ ...event(seq, last.mono), seq }));
  return seq;
}

describe('a journal event written by hand while no host ran', () => {
  it('a 10-year lease with a valid checksum: not applied, set aside, named once; the board opens and takes writes', async () => {
    const dir = freshDir();
    const a = await JournalBoard.open({ dir, threadId: 'th' });
    await a.run((e) => e.addTask({ title: 'one' }));
    await a.close();
    const seq = appendByHand(dir, (_s, mono) => ({ kind: 'grant', taskId: 'T-1', agentId: 'shell-x', token: 1, deadline: mono + TEN_YEARS_MS, by: 'shell-x', at: Date.now(), mono }));

    const b = await JournalBoard.open({ dir, threadId: 'th' });
    expect(b.state.tasks.get('T-1')?.claim).toBeNull();
    expect(b.quarantine.found()).toEqual([expect.objectContaining({ seq, kind: 'grant', store: 'journal', why: "its lease runs 87,600 h, past the board's longest (12 h)" })]);
    // A window's log and the task's details do not show it as if it happened.
    expect(b.logTail(50).map((e) => e.seq)).not.toContain(seq);
    expect((await b.taskLog('T-1')).map((e) => e.kind)).toEqual(['task-added']);
    const claimed = await b.run((e) => e.claim('agent-1', 'T-1'));
    expect(claimed).toMatchObject({ ok: true, value: { token: 1 } });
    expect(b.state.seq).toBeGreaterThan(seq);
    await b.close();
    expect(JSON.parse(fs.readFileSync(join(dir, QUARANTINE_FILE), 'utf8')).events).toEqual([expect.objectContaining({ seq, kind: 'grant' })]);

    // Opened again: still skipped, not told again.
    const c = await JournalBoard.open({ dir, threadId: 'th' });
    expect(c.quarantine.found()).toEqual([]);
    expect(c.state.tasks.get('T-1')?.claim?.agentId).not.toBe('shell-x');
    await c.close();
  });

  it('an event that cannot apply (a task added twice) no longer keeps the board from opening', async () => {
    const dir = freshDir();
    const a = await JournalBoard.open({ dir, threadId: 'th' });
    await a.run((e) => e.addTask({ title: 'one' }));
    await a.close();
    const seq = appendByHand(dir, (_s, mono) => ({ kind: 'task-added', taskId: 'T-1', title: 'again', body: '', verify: null, by: 'user', at: Date.now(), mono }));
    const b = await JournalBoard.open({ dir, threadId: 'th' });
    expect(b.quarantine.found()).toEqual([expect.objectContaining({ seq, kind: 'task-added', why: 'T-1 was added already' })]);
    expect(b.state.tasks.get('T-1')?.title).toBe('one');
    expect((await b.run((e) => e.addTask({ title: 'two' }))).ok).toBe(true);
    await b.close();
  });
});
