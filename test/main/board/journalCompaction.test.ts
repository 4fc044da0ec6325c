import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { loadBoard, readLog, readTaskLog } from '../../../src-main/board/journal.js';
import { segName } from '../../../src-main/board/journalFiles.js';
import { encodeLine, segmentHeader } from '../../../src-main/board/journalRecord.js';

/**
 * Issue 29, finding 4: the journal on disk stays bounded. A flood wrote a 933 MB segment; every segment was
 * kept for ever. Now a segment is snapshotted at a size too, and the segments a snapshot covers are removed
 * beyond a few compactions' worth of history — and a SIGKILL in the middle of that loses nothing.
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

const COMPACT = 64 * 1024;
const KEEP = 128 * 1024;
const segmentBytes = (dir: string) =>
  fs
    .readdirSync(dir)
    .filter((f) => /^segment-\d+\.jsonl$/.test(f))
    .reduce((n, f) => n + fs.statSync(join(dir, f)).size, 0);

describe('journal compaction', () => {
  it('keeps the folder bounded while 8 MB is written, and a restart loads the same board and goes on bounded', async () => {
    const dir = freshDir();
    const opts = { dir, threadId: 'th', compactBytes: COMPACT, historyKeepBytes: KEEP };
    const a = await JournalBoard.open(opts);
    // Written by the person, who has no write quota (an agent's flood is refused long before this).
    for (let i = 0; i < 2000; i++) {
      const r = await a.run((e) => e.addTask({ title: `task ${i}`, body: `${i} `.padEnd(4096, 'x') }));
      expect(r.ok).toBe(true);
      // A segment is at most one compaction's worth plus the writes of one flush.
      if (i % 100 === 0) expect(segmentBytes(dir)).toBeLessThanOrEqual(KEEP + COMPACT + 8 * 1024);
    }
    const before = structuredClone(a.state);
    await a.close();
    expect(segmentBytes(dir)).toBeLessThanOrEqual(KEEP + COMPACT + 8 * 1024);
    // The history that is kept is an unbroken run up to the last event.
    const seqs = [...readLog(dir)].map((e) => e.seq);
    expect(seqs.at(-1)).toBe(before.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => (seqs[0] as number) + i));
    const b = await JournalBoard.open(opts);
    expect(b.state).toEqual(before);
    expect(b.logTail(30).map((e) => e.seq)).toEqual(seqs.slice(-30));
    for (let i = 0; i < 500; i++) await b.run((e) => e.editTask(`T-${i + 1}`, { body: `edited ${i}`.padEnd(4096, 'y') }));
    await b.close();
    expect(segmentBytes(dir)).toBeLessThanOrEqual(KEEP + COMPACT + 8 * 1024);
    const { board } = loadBoard(dir);
    expect(board.tasks.get('T-500')?.body.startsWith('edited 499')).toBe(true);
    expect(board.tasks.get('T-2000')?.body.startsWith('1999 ')).toBe(true);
  }, 120_000);

  it("reads one task's events by a byte search, the same as the whole log filtered (T-1 is not T-10)", async () => {
    const dir = freshDir();
    const a = await JournalBoard.open({ dir, threadId: 'th', compactBytes: 4096, historyKeepBytes: 1 << 20 });
    for (let i = 0; i < 12; i++) await a.run((e) => e.addTask({ title: `t${i}` }));
    for (const id of ['T-1', 'T-10', 'T-1', 'T-12']) {
      const c = await a.run((e) => e.claim('ag', id));
      if (c.ok) await a.run((e) => e.note('ag', id, `"taskId":"T-1" in a note about ${id}`, c.value.token));
      await a.apply((e) => e.releaseAllHeldBy('ag', 'agent-exited'));
    }
    await a.close();
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('segment-')).length).toBeGreaterThan(1);
    for (const id of ['T-1', 'T-10', 'T-12', 'T-5', 'T-99']) {
      const all = [...readLog(dir)].filter((e) => 'taskId' in e && e.taskId === id);
      expect(readTaskLog(dir, id)).toEqual(all);
    }
    expect(readTaskLog(dir, 'T-1').filter((e) => e.kind === 'note')).toHaveLength(2);
  });

  it('a snapshot that cannot be written loses nothing: the board goes on in its segment and snapshots later', async () => {
    const dir = freshDir();
    const warnings: string[] = [];
    const a = await JournalBoard.open({ dir, threadId: 'th', compactBytes: 16 * 1024, warn: (m) => warnings.push(m) });
    // Where this process writes its snapshot's temp file, something that is not a file: the write fails.
    const blocker = join(dir, `snapshot.json.${process.pid}.tmp`);
    fs.mkdirSync(blocker);
    for (let i = 0; i < 20; i++) expect((await a.run((e) => e.addTask({ title: `t${i}`, body: 'x'.repeat(2000) }))).ok).toBe(true);
    expect(warnings.join('\n')).toMatch(/snapshot could not be written .*nothing was lost/);
    expect(fs.existsSync(join(dir, 'snapshot.json'))).toBe(false);
    expect(a.readOnlyReason).toBeNull();
    fs.rmdirSync(blocker);
    for (let i = 20; i < 40; i++) expect((await a.run((e) => e.addTask({ title: `t${i}`, body: 'x'.repeat(2000) }))).ok).toBe(true);
    const before = structuredClone(a.state);
    await a.close();
    expect(fs.existsSync(join(dir, 'snapshot.json'))).toBe(true);
    expect(loadBoard(dir).board).toEqual(before);
  });

  it('writes the snapshot a task a line, still one JSON document with its checksum, and reads it back exactly', async () => {
    const dir = freshDir();
    const a = await JournalBoard.open({ dir, threadId: 'th', compactEvery: 50 });
    const odd = 'line one\nline two\t"quoted" \\ back — ünïcødé 🙂 \u0001';
    for (let i = 0; i < 60; i++) await a.run((e) => e.addTask({ title: `t${i}`, body: i % 2 ? odd : '' }));
    await a.run((e) => e.userNote('T-3', odd));
    const before = structuredClone(a.state);
    await a.close();
    const text = fs.readFileSync(join(dir, 'snapshot.json'), 'utf8');
    const lines = text.split('\n');
    const inFile = (JSON.parse(text) as { board: { tasks: unknown[] } }).board.tasks.length;
    expect(inFile).toBeGreaterThanOrEqual(40);
    expect(lines.length).toBe(inFile + 2); // a head, a line per task, a tail
    expect(lines[1]).toMatch(/^\{"id":"T-1",/);
    expect(loadBoard(dir).board).toEqual(before);
  });
});

describe('compaction crash safety', () => {
  it('an open finishes a removal a killed host left half done: segments beyond the history kept go, the board and its kept history stay', async () => {
    const dir = freshDir();
    // Written keeping 1 MiB of history, then opened keeping 64 KiB: what a kill in the middle of prune() leaves
    // (old segments the snapshot covers, beyond the history kept), without a kill's randomness.
    const a = await JournalBoard.open({ dir, threadId: 'th', compactBytes: 32 * 1024, historyKeepBytes: 1 << 20 });
    for (let i = 0; i < 200; i++) await a.run((e) => e.addTask({ title: `t${i}`, body: `${i} `.padEnd(2048, 'x') }));
    const before = structuredClone(a.state);
    await a.close();
    expect(segmentBytes(dir)).toBeGreaterThan(256 * 1024);
    const b = await JournalBoard.open({ dir, threadId: 'th', compactBytes: 32 * 1024, historyKeepBytes: 64 * 1024 });
    expect(b.state).toEqual(before);
    await b.close();
    expect(segmentBytes(dir)).toBeLessThanOrEqual(64 * 1024 + 32 * 1024 + 8 * 1024);
    const seqs = [...readLog(dir)].map((e) => e.seq);
    expect(seqs.at(-1)).toBe(before.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => (seqs[0] as number) + i));
    expect(loadBoard(dir).board).toEqual(before);
  });

  it('segments left by kills inside two snapshots in a row count toward the next one, so what a start replays stays one compaction long', async () => {
    // What a kill between compact()'s new segment and its snapshot leaves, twice over, without a kill's
    // randomness: a full segment the snapshot does not cover, then a new segment (header only) after it.
    const dir = freshDir();
    const a = await JournalBoard.open({ dir, threadId: 'th', compactBytes: 1 << 20, historyKeepBytes: 64 * 1024 });
    for (let i = 0; i < 20; i++) await a.run((e) => e.addTask({ title: `t${i}`, body: `${i} `.padEnd(2048, 'x') }));
    await a.close();
    const segs = () => fs.readdirSync(dir).filter((f) => /^segment-\d+\.jsonl$/.test(f)).sort();
    const last = Number(/\d+/.exec(segs().at(-1) as string)?.[0]);
    const seq = loadBoard(dir).board.seq;
    const crashedCompact = (n: number) => fs.writeFileSync(join(dir, segName(n)), encodeLine(segmentHeader(n, seq)));
    crashedCompact(last + 1);
    expect(segs().length).toBe(2);
    const b = await JournalBoard.open({ dir, threadId: 'th', compactBytes: 32 * 1024, historyKeepBytes: 64 * 1024 });
    await b.run((e) => e.addTask({ title: 'after', body: 'x' }));
    await b.close();
    // The one write after the start took the snapshot the kills interrupted: the snapshot names a segment
    // holding nothing but what came after it.
    expect(/"segment":(\d+)/.exec(fs.readFileSync(join(dir, 'snapshot.json'), 'utf8'))?.[1]).toBe(String(last + 2));
    expect(loadBoard(dir).board.tasks.size).toBe(21);
  });
});
