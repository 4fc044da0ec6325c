import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { legacyNote, legacyTask, legacyThread, writeLegacyJournal } from '../../helpers/legacyJournal.js';

/**
 * A damaged journal is refused, never silently cut or replaced (issue 16). Real files, damaged as a disk,
 * a sync tool or a hand edit damages them; only an incomplete last line (a write a crash cut short) is
 * repaired, and then with a copy of the file kept. Refusing changes nothing on disk but adding a copy.
 */
const dirs: string[] = [];
function freshDir(): string {
  const d = fs.mkdtempSync(join(tmpdir(), 'forkbench-damage-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const segmentsOf = (dir: string) => fs.readdirSync(dir).filter((f) => /^segment-\d+\.jsonl$/.test(f)).sort();
const lastSegment = (dir: string) => join(dir, segmentsOf(dir).at(-1) as string);
const copiesOf = (file: string) => fs.readdirSync(join(file, '..')).filter((f) => f.startsWith(`${file.split('/').at(-1)}.corrupt-`));

/** Every file in the folder and its bytes, less the .corrupt- copies a refusal may add. */
function contents(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fs.readdirSync(dir).sort()) if (!f.includes('.corrupt-')) out[f] = fs.readFileSync(join(dir, f)).toString('base64');
  return out;
}

/** A journal line as format 2 writes it, its CRC-32 made by zlib (not the journal's own code). */
function recordLine(value: object): string {
  const json = JSON.stringify(value);
  return `${json.slice(0, -1)},"crc":"${zlib.crc32(json).toString(16).padStart(8, '0')}"}\n`;
}

/** A board with a task and two acknowledged notes, closed. */
async function boardWithNotes(dir: string): Promise<void> {
  const a = await JournalBoard.open({ dir, threadId: 'th' });
  await a.run((e) => e.addTask({ title: 'parser' }));
  await a.run((e) => e.userNote('T-1', 'first note'));
  await a.run((e) => e.userNote('T-1', 'the acknowledged note'));
  await a.close();
}

async function refusal(dir: string): Promise<Error> {
  let err: unknown = null;
  try {
    const b = await JournalBoard.open({ dir, warn: () => undefined });
    await b.close();
  } catch (e) {
    err = e;
  }
  expect(err, 'the board opened').toBeInstanceOf(Error);
  return err as Error;
}

describe('a damaged journal', () => {
  it('one flipped byte in the last complete record: refused with where and what to do, the file unchanged', async () => {
    const dir = freshDir();
    await boardWithNotes(dir);
    const file = lastSegment(dir);
    const buf = fs.readFileSync(file);
    const at = buf.lastIndexOf('acknowledged');
    buf[at] = 'A'.charCodeAt(0); // still JSON, still a note: only its checksum can tell
    fs.writeFileSync(file, buf);
    const before = contents(dir);
    const lines = buf.toString().split('\n').length - 1;
    const err = await refusal(dir);
    expect(err.message).toContain(file);
    expect(err.message).toMatch(new RegExp(`line ${lines} \\(byte \\d+\\) fails its checksum`));
    expect(err.message).toMatch(/restore the file from a backup.*cut the file at byte \d+.*move the folder .* aside/);
    expect(contents(dir)).toEqual(before);
    expect(fs.readFileSync(file)).toEqual(buf);
    // the copy it names holds the damaged file as it was
    const copy = copiesOf(file);
    expect(copy).toHaveLength(1);
    expect(fs.readFileSync(join(dir, copy[0] as string))).toEqual(buf);
  });

  it('an incomplete last line (a write cut short) is dropped as before, with a .corrupt- copy of the file kept', async () => {
    const dir = freshDir();
    await boardWithNotes(dir);
    const file = lastSegment(dir);
    const good = fs.readFileSync(file);
    fs.appendFileSync(file, '{"seq":5,"at":1,"mono":9,"kind":"note","taskId":"T-1","by":"user","te');
    const torn = fs.readFileSync(file);
    const warnings: string[] = [];
    const b = await JournalBoard.open({ dir, warn: (m) => warnings.push(m) });
    expect(b.state.tasks.get('T-1')?.notes.map((n) => n.text)).toEqual(['first note', 'the acknowledged note']);
    await b.close();
    const copy = copiesOf(file);
    expect(copy).toHaveLength(1);
    expect(fs.readFileSync(join(dir, copy[0] as string))).toEqual(torn);
    expect(warnings.join('\n')).toMatch(/torn last record .* no newline.* kept as .*\.corrupt-/);
    expect(warnings.join('\n')).toContain(copy[0]);
    expect(fs.readFileSync(file).subarray(0, good.length)).toEqual(good);
  });

  it('a zeroed tail that ate the last newline is a cut-short write: dropped, with the file kept and the copy named', async () => {
    const dir = freshDir();
    await boardWithNotes(dir);
    const file = lastSegment(dir);
    const buf = fs.readFileSync(file);
    buf.fill(0, buf.length - 40); // the end of the last record and its newline: as a disk leaves an unwritten block
    fs.writeFileSync(file, buf);
    const warnings: string[] = [];
    const b = await JournalBoard.open({ dir, warn: (m) => warnings.push(m) });
    await b.close();
    const copy = copiesOf(file);
    expect(copy).toHaveLength(1);
    expect(fs.readFileSync(join(dir, copy[0] as string))).toEqual(buf);
    expect(warnings.join('\n')).toContain(copy[0]);
    expect(warnings.join('\n')).toMatch(/if a change you were told was saved is missing, it is in that copy/);
  });

  it('zeros inside the last record, its newline intact, are damage: refused, the file unchanged', async () => {
    const dir = freshDir();
    await boardWithNotes(dir);
    const file = lastSegment(dir);
    const buf = fs.readFileSync(file);
    buf.fill(0, buf.length - 30, buf.length - 1);
    fs.writeFileSync(file, buf);
    const before = contents(dir);
    const err = await refusal(dir);
    expect(err.message).toMatch(/line \d+ \(byte \d+\) (is not JSON|fails its checksum)/);
    expect(contents(dir)).toEqual(before);
  });

  it('zeros appended after the last newline (a block allocated, never written) are dropped with a copy, the board whole', async () => {
    const dir = freshDir();
    await boardWithNotes(dir);
    const file = lastSegment(dir);
    fs.appendFileSync(file, Buffer.alloc(4096));
    const warnings: string[] = [];
    const b = await JournalBoard.open({ dir, warn: (m) => warnings.push(m) });
    expect(b.state.tasks.get('T-1')?.notes).toHaveLength(2);
    await b.close();
    expect(copiesOf(file)).toHaveLength(1);
    expect(warnings.join('\n')).toMatch(/4096 bytes/);
  });

  it('one flipped byte in the snapshot: refused, the snapshot unchanged', async () => {
    const dir = freshDir();
    const a = await JournalBoard.open({ dir, threadId: 'th', compactEvery: 3 });
    for (let i = 0; i < 5; i++) await a.run((e) => e.addTask({ title: `task ${i}` }));
    await a.close();
    const snap = join(dir, 'snapshot.json');
    const buf = fs.readFileSync(snap);
    buf[buf.indexOf('task 1') + 5] = '7'.charCodeAt(0); // still JSON: "task 7"
    fs.writeFileSync(snap, buf);
    const before = contents(dir);
    const err = await refusal(dir);
    expect(err.message).toContain(snap);
    expect(err.message).toMatch(/fails its checksum/);
    expect(contents(dir)).toEqual(before);
  });

  it('the segment the snapshot names is missing: refused, not a board that lost its events', async () => {
    const dir = freshDir();
    const a = await JournalBoard.open({ dir, threadId: 'th', compactEvery: 3 });
    for (let i = 0; i < 5; i++) await a.run((e) => e.addTask({ title: `t${i}` }));
    await a.close();
    const named = (JSON.parse(fs.readFileSync(join(dir, 'snapshot.json'), 'utf8')) as { segment: number }).segment;
    const file = join(dir, `segment-${String(named).padStart(6, '0')}.jsonl`);
    expect(fs.existsSync(file)).toBe(true);
    fs.rmSync(file);
    const before = contents(dir);
    const err = await refusal(dir);
    expect(err.message).toContain(file);
    expect(err.message).toMatch(/it is missing, but the snapshot \(snapshot\.json\) says the board goes on in it.*restore it from a backup, or move the folder .* aside/);
    expect(contents(dir)).toEqual(before);
  });

  it('the only segment of a young board is missing: refused, not a new empty board', async () => {
    const dir = freshDir();
    await boardWithNotes(dir);
    const file = lastSegment(dir);
    fs.rmSync(file);
    const before = contents(dir);
    const err = await refusal(dir);
    expect(err.message).toContain(file);
    expect(err.message).toMatch(/missing/);
    expect(contents(dir)).toEqual(before);
  });

  it('an emptied segment: refused, not a new empty board, and left as it is', async () => {
    const dir = freshDir();
    await boardWithNotes(dir);
    const file = lastSegment(dir);
    fs.truncateSync(file, 0);
    const before = contents(dir);
    const err = await refusal(dir);
    expect(err.message).toContain(file);
    expect(err.message).toMatch(/it is empty.*move the folder .* aside/);
    expect(contents(dir)).toEqual(before);
    expect(fs.statSync(file).size).toBe(0);
  });

  it('an emptied segment of an old journal (no checksums) is refused too, not read as a new board', async () => {
    const dir = freshDir();
    const file = writeLegacyJournal(dir, [legacyThread('old'), legacyTask('T-1', 'kept')]);
    fs.truncateSync(file, 0);
    const err = await refusal(dir);
    expect(err.message).toContain(file);
    expect(err.message).toMatch(/holds no event/);
    expect(segmentsOf(dir)).toEqual(['segment-000001.jsonl']);
    expect(fs.statSync(file).size).toBe(0);
  });

  it('an event of a kind this version does not know is refused, even with a valid checksum', async () => {
    const dir = freshDir();
    await boardWithNotes(dir);
    const file = lastSegment(dir);
    fs.appendFileSync(file, recordLine({ seq: 5, at: 1, mono: 9, kind: 'frobnicate', taskId: 'T-1' }));
    const before = contents(dir);
    const err = await refusal(dir);
    expect(err.message).toMatch(/line \d+ \(byte \d+\) is an event of a kind this version of Forkbench does not know \("frobnicate"\)/);
    expect(contents(dir)).toEqual(before);
  });

  it('a sequence gap (a forged seq 50) is refused, even with a valid checksum: the board does not jump to 50', async () => {
    const dir = freshDir();
    await boardWithNotes(dir);
    const file = lastSegment(dir);
    fs.appendFileSync(file, recordLine({ seq: 50, at: 1, mono: 9, kind: 'note', taskId: 'T-1', by: 'user', text: 'forged' }));
    const before = contents(dir);
    const err = await refusal(dir);
    expect(err.message).toMatch(/is event #50, but the board before it ends at event #\d+: events #\d+–#49 are missing/);
    expect(contents(dir)).toEqual(before);
  });

  it('a sequence gap in an old journal (no checksums) is refused too', async () => {
    const dir = freshDir();
    const file = writeLegacyJournal(dir, [legacyThread('old'), legacyTask('T-1', 'kept')]);
    fs.appendFileSync(file, `${JSON.stringify({ seq: 50, at: 1, mono: 9, kind: 'note', taskId: 'T-1', by: 'user', text: 'forged' })}\n`);
    const err = await refusal(dir);
    expect(err.message).toMatch(/is event #50, but the board before it ends at event #2/);
  });

  it('an old journal without checksums still loads, and goes on in a checksummed segment', async () => {
    const dir = freshDir();
    const old = writeLegacyJournal(dir, [legacyThread('old', 'ship'), legacyTask('T-1', 'kept', 'body'), legacyNote('T-1', 'old note')]);
    const oldBytes = fs.readFileSync(old);
    const b = await JournalBoard.open({ dir });
    expect(b.state).toMatchObject({ threadId: 'old', goal: 'ship' });
    expect(b.state.tasks.get('T-1')).toMatchObject({ title: 'kept', body: 'body', notes: [{ text: 'old note' }] });
    await b.run((e) => e.userNote('T-1', 'new note'));
    expect((await b.log()).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    await b.close();
    // the old segment is left as it was; the new one begins with its header and checksums every line
    expect(fs.readFileSync(old)).toEqual(oldBytes);
    expect(segmentsOf(dir)).toEqual(['segment-000001.jsonl', 'segment-000002.jsonl']);
    for (const line of fs.readFileSync(join(dir, 'segment-000002.jsonl'), 'utf8').trimEnd().split('\n')) expect(line).toMatch(/,"crc":"[0-9a-f]{8}"\}$/);
    const again = await JournalBoard.open({ dir });
    expect(again.state.tasks.get('T-1')?.notes.map((n) => n.text)).toEqual(['old note', 'new note']);
    expect(again.logTail(10).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(again.logTail(10).every((e) => !('crc' in e))).toBe(true);
    await again.close();
  });

  it('an old journal that was compacted (a snapshot, an empty newest segment, no checksums) still loads and goes on', async () => {
    const dir = freshDir();
    const a = await JournalBoard.open({ dir, threadId: 'th', compactEvery: 4 });
    // 8 events: two compactions, the second leaving a new segment with nothing in it yet
    for (let i = 0; i < 7; i++) await a.run((e) => e.addTask({ title: `t${i}` }));
    await a.close();
    // as the version before checksums left it: bare event lines, no headers, no journal.json
    fs.rmSync(join(dir, 'journal.json'), { force: true });
    for (const f of segmentsOf(dir)) {
      const lines = fs.readFileSync(join(dir, f), 'utf8').split('\n').filter((l) => l && !l.startsWith('{"journal"'));
      fs.writeFileSync(join(dir, f), lines.map((l) => `${l.replace(/,"crc":"[0-9a-f]{8}"\}$/, '}')}\n`).join(''));
    }
    const named = (JSON.parse(fs.readFileSync(join(dir, 'snapshot.json'), 'utf8')) as { segment: number }).segment;
    expect(fs.statSync(join(dir, `segment-${String(named).padStart(6, '0')}.jsonl`)).size).toBe(0);
    for (const f of segmentsOf(dir)) expect(fs.readFileSync(join(dir, f), 'utf8')).not.toContain('crc');
    const b = await JournalBoard.open({ dir });
    expect([...b.state.tasks.values()].map((t) => t.title)).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't6']);
    await b.run((e) => e.addTask({ title: 'after' }));
    await b.close();
    const c = await JournalBoard.open({ dir });
    expect(c.state.tasks.get('T-8')?.title).toBe('after');
    await c.close();
  });

  it('a damaged line in a segment before the newest is refused, never cut', async () => {
    const dir = freshDir();
    const a = await JournalBoard.open({ dir, threadId: 'th', compactEvery: 1_000 });
    await a.run((e) => e.addTask({ title: 'one' }));
    await a.close();
    // an older segment, then the board goes on in a new one (journal.json names the first)
    const first = lastSegment(dir);
    const b = await JournalBoard.open({ dir, compactEvery: 2 });
    await b.run((e) => e.addTask({ title: 'two' }));
    await b.run((e) => e.addTask({ title: 'three' }));
    await b.close();
    expect(segmentsOf(dir).length).toBeGreaterThan(1);
    fs.rmSync(join(dir, 'snapshot.json')); // so loading reads the first segment too
    const buf = fs.readFileSync(first);
    fs.writeFileSync(first, buf.subarray(0, buf.length - 1)); // its last newline gone: cut short, but not the newest
    const err = await refusal(dir);
    expect(err.message).toContain(first);
    expect(err.message).toMatch(/has no end, but only the newest segment can be cut short/);
  });
});
