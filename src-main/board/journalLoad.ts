import * as fs from 'node:fs';
import { join } from 'node:path';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { Limits } from '../../src-shared/board/limits.js';
import type { KeptFrom } from '../../src-shared/board/eventPage.js';
import { deserializeBoard } from '../../src-shared/board/serialized.js';
import { applyEvent, emptyBoard, type Board } from '../../src-shared/board/reducer.js';
import { boundClaim, boundSettings } from '../../src-shared/board/eventBounds.js';
import { checkStoredEvent } from '../../src-shared/board/storedEvents.js';
import { decodeLine, isKeyLine, isSegmentHeader } from './journalRecord.js';
import type { WriteKeyRecord } from './writeKeys.js';
import { readSnapshot } from './snapshotFile.js';
import {
  copyAside,
  cutOrRestore,
  isEventRecord,
  readManifest,
  refuse,
  restoreOrMoveAside,
  segName,
  segments,
  SNAPSHOT_FORMAT,
  type Loaded,
  type SnapshotFile,
} from './journalFiles.js';

/** Reading the board back from its folder: load it to go on from, or read its events as the log. */

/**
 * Read the board back: snapshot, then every later event, checked. What a crash can do is repaired: an
 * incomplete last line (no newline: a write cut short) is dropped, after the file is copied aside. Anything
 * else is damage and refused with a BoardCorruptError that changes nothing: a complete line that fails its
 * checksum or is not JSON, an event of a kind this version does not know, a jump or step back in the
 * sequence, a segment missing or emptied that the snapshot or journal.json says exists.
 *
 * An event in its place that does not apply (storedEvents.ts: a field its kind lacks, a lease past the board's
 * longest, a task added twice, a token not above the last; a checksum is no seal, whoever can write the folder
 * can compute one) is set aside instead: the board moves past it unchanged, and `setAside` names it.
 */
export function loadBoard(dir: string): Loaded {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const warnings: string[] = [];
  const manifest = readManifest(dir);
  let board = emptyBoard();
  let mono = 0;
  let first = 1;
  let snapKeys: WriteKeyRecord[] = [];
  const snapPath = join(dir, 'snapshot.json');
  const hasSnapshot = fs.existsSync(snapPath);
  if (hasSnapshot) {
    let snap: SnapshotFile;
    try {
      // Checksummed like a journal line (snapshots written before checksums have none, and still load).
      snap = readSnapshot(fs.readFileSync(snapPath));
      if (snap.format !== SNAPSHOT_FORMAT) throw new Error(`unknown snapshot format ${String(snap.format)}`);
    } catch (err) {
      refuse(snapPath, (err as Error).message, restoreOrMoveAside(dir));
    }
    board = deserializeBoard(snap.board);
    mono = snap.mono;
    warnings.push(...boundSnapshot(board, mono, snapPath));
    snapKeys = [...(snap.keys ?? [])];
    first = snap.segment;
  }
  const segs = segments(dir).filter((n) => n >= first);
  // Every segment from the snapshot's on must be there: the one it names, the one journal.json names, and
  // every one up to the newest on disk.
  const newest = Math.max(segs.at(-1) ?? 0, hasSnapshot || manifest ? first : 0, manifest?.since ?? 0);
  for (let n = first; n <= newest; n++) {
    if (segs.includes(n)) continue;
    const who = hasSnapshot && n === first ? 'the snapshot (snapshot.json) says the board goes on in it' : manifest && n === manifest.since ? 'journal.json says the board has it' : `segments after it exist`;
    refuse(join(dir, segName(n)), `it is missing, but ${who}: its events would be lost`, restoreOrMoveAside(dir), false);
  }
  let segmentEvents = 0;
  let headed = false;
  let sawHeader = false;
  const keys: WriteKeyRecord[] = snapKeys;
  /** A keyed write being read: its key's line, and how many of its events are still to come. */
  let txn: { rec: WriteKeyRecord; left: number; offset: number; lineNo: number } | null = null;
  let tornCopy: string | null = null;
  const setAside: Loaded['setAside'] = [];
  const keep = (rec: WriteKeyRecord) => {
    keys.push(rec);
    mono = Math.max(mono, rec.at);
  };
  for (const [i, n] of segs.entries()) {
    const file = join(dir, segName(n));
    const isLast = i === segs.length - 1;
    const mustHead = manifest !== null && n >= manifest.since;
    const buf = fs.readFileSync(file);
    segmentEvents = 0;
    headed = false;
    if (buf.length === 0 && mustHead) {
      refuse(file, `it is empty, but every segment of this board begins with a header line (journal.json): it was emptied after it was written`, restoreOrMoveAside(dir), false);
    }
    let offset = 0;
    let lineNo = 0;
    while (offset < buf.length) {
      lineNo++;
      const nl = buf.indexOf(0x0a, offset);
      const where = `line ${lineNo} (byte ${offset})`;
      if (nl === -1) {
        if (!isLast) refuse(file, `${where} has no end, but only the newest segment can be cut short by a crash`, cutOrRestore(dir, lineNo, offset));
        // A crash mid-append leaves exactly this: the last write, without its newline. That write was never
        // acknowledged, so dropping it loses nothing anyone was told was saved; but a disk can cut a line
        // too, so the file as it was is kept.
        const backup = (tornCopy = copyAside(file));
        fs.truncateSync(file, offset);
        warnings.push(
          `dropped a torn last record (${buf.length - offset} bytes at ${where}, no newline: a write cut short by a crash) at the end of ${file}; ` +
            `the file as it was is kept as ${backup}. A write cut short was never acknowledged; if a change you were told was saved is missing, it is in that copy.`,
        );
        break;
      }
      const d = decodeLine(buf, offset, nl);
      if ('bad' in d) refuse(file, `${where} ${d.bad}`, cutOrRestore(dir, lineNo, offset));
      if (lineNo === 1 && isSegmentHeader(d.value)) {
        const h = d.value;
        if (h.segment !== n) refuse(file, `its header says it is segment ${h.segment}, not ${n}: a segment was renamed or copied over`, restoreOrMoveAside(dir));
        if (h.after !== board.seq) {
          const gap = h.after > board.seq ? `events #${board.seq + 1}–#${h.after} are missing` : `it repeats events after #${h.after}`;
          refuse(file, `it follows event #${h.after}, but the board before it ends at event #${board.seq}: ${gap} (a segment before it was lost, emptied or replaced)`, restoreOrMoveAside(dir));
        }
        headed = sawHeader = true;
        offset = nl + 1;
        continue;
      }
      if (mustHead && !headed) refuse(file, `it does not begin with a segment header, but every segment of this board does (journal.json)`, restoreOrMoveAside(dir));
      if (headed && !d.checked) refuse(file, `${where} has no checksum, but every record of this segment has one`, cutOrRestore(dir, lineNo, offset));
      const e = d.value;
      if (isKeyLine(e)) {
        if (txn) refuse(file, `${where} is a key's record, but the ${txn.left} last events of the keyed write at line ${txn.lineNo} are missing`, cutOrRestore(dir, lineNo, offset));
        txn = { rec: e.writeKey, left: e.events, offset, lineNo };
        if (txn.left === 0) {
          keep(txn.rec);
          txn = null;
        }
        offset = nl + 1;
        continue;
      }
      if (!isEventRecord(e)) {
        const kind = (e as { kind?: unknown } | null)?.kind;
        const what = typeof kind === 'string' && Number.isSafeInteger((e as { seq?: unknown }).seq) ? `is an event of a kind this version of Forkbench does not know ("${kind}"); if a newer version wrote it, open the board with that one` : 'is not a board event';
        refuse(file, `${where} ${what}`, cutOrRestore(dir, lineNo, offset));
      }
      if (e.seq !== board.seq + 1) {
        // Journals before format 2 were read past an event already applied; only a jump is refused there.
        if (e.seq <= board.seq && !headed) {
          offset = nl + 1;
          segmentEvents++;
          continue;
        }
        const how = e.seq > board.seq ? `events #${board.seq + 1}–#${e.seq - 1} are missing` : 'the sequence goes back';
        refuse(file, `${where} is event #${e.seq}, but the board before it ends at event #${board.seq}: ${how}`, cutOrRestore(dir, lineNo, offset));
      }
      const verdict = checkStoredEvent(e, board, e.seq);
      let why = verdict.ok ? null : verdict.why;
      if (verdict.ok) {
        try {
          applyEvent(board, e);
        } catch (err) {
          // The checks above are the reducer's own and more: one it still refuses is set aside all the same.
          why = (err as Error).message;
        }
      }
      if (why === null) mono = e.mono;
      else {
        // Its clock is not taken either: a board time written by hand would move every deadline.
        board.seq = e.seq;
        setAside.push({ seq: e.seq, kind: e.kind, why, store: 'journal', body: buf.toString('utf8', offset, nl) });
      }
      segmentEvents++;
      offset = nl + 1;
      if (txn && --txn.left === 0) {
        keep(txn.rec);
        txn = null;
      }
    }
    if (txn) {
      if (!isLast) refuse(file, `the keyed write at line ${txn.lineNo} ends before its ${txn.left} last events, but only the newest segment can be cut short by a crash`, cutOrRestore(dir, txn.lineNo, txn.offset));
      // A crash cut a keyed write short: its events and its key were one append, never acknowledged, so all
      // of it goes (a retry then does it once); the board is read again without it.
      const backup = tornCopy ?? copyAside(file);
      fs.truncateSync(file, txn.offset);
      const again = loadBoard(dir);
      again.warnings.unshift(
        ...warnings,
        `dropped a keyed write cut short by a crash (its key and ${txn.left} of its events missing, from line ${txn.lineNo} of ${file}); it was never acknowledged; the file as it was is kept as ${backup}.`,
      );
      return again;
    }
  }
  // Files that hold no board at all (an empty segment before headers existed) are not a new board either.
  if (board.seq === 0 && !sawHeader && (hasSnapshot || segs.length)) {
    refuse(join(dir, segName(segs[0] ?? first)), 'it holds no event, not even the one that creates the board: it was emptied or never written', restoreOrMoveAside(dir), false);
  }
  const segment = segs.at(-1) ?? first;
  return { board, mono, keys, warnings, segment, segmentEvents, snapshotSegment: first, headed, exists: segs.length > 0, manifest: manifest !== null, setAside };
}

/** A snapshot's leases and settings within the board's limits, in place; what was put back, said. */
function boundSnapshot(board: Board, mono: number, path: string): string[] {
  const said: string[] = [];
  for (const [id, t] of board.tasks) {
    if (!t.claim) continue;
    const b = boundClaim(t.claim, mono);
    if (!b.fixed) continue;
    board.tasks.set(id, { ...t, claim: b.claim });
    said.push(`${path}: ${id}'s claim holds ${b.fixed}, past the board's limits (a lease is at most ${Limits.maxLeaseMs / 3_600_000} h): the board never decides that, so it is read within the limits.`);
  }
  const s = boundSettings(board.settings);
  if (s.fixed.length > 0) {
    board.settings = s.settings;
    said.push(`${path}: the settings hold ${s.fixed.join(' and ')}, past the board's limits: read within them.`);
  }
  return said;
}

/** The events of one segment, oldest first, up to a torn tail if it has one. */
function readSegment(dir: string, n: number): BoardEvent[] {
  const events: BoardEvent[] = [];
  const buf = fs.readFileSync(join(dir, segName(n)));
  for (let offset = 0; offset < buf.length; ) {
    const nl = buf.indexOf(0x0a, offset);
    if (nl === -1) break; // a torn tail: the segment ends here
    const d = decodeLine(buf, offset, nl);
    if ('bad' in d) break;
    if (!isSegmentHeader(d.value) && !isKeyLine(d.value)) events.push(d.value as BoardEvent);
    offset = nl + 1;
  }
  return events;
}

/**
 * The events about one task still on disk, oldest first. Only lines that name the task are parsed (found by
 * a byte search for `"taskId":"T-12"`, as every event about it is written), so opening a task's details costs
 * a scan of the journal, not parsing all of it (up to ~100 MB kept: journalFiles.ts).
 */
export function readTaskLog(dir: string, taskId: string): BoardEvent[] {
  const needle = Buffer.from(`"taskId":${JSON.stringify(taskId)}`);
  const events: BoardEvent[] = [];
  for (const n of segments(dir)) {
    const buf = fs.readFileSync(join(dir, segName(n)));
    for (let at = buf.indexOf(needle); at !== -1; ) {
      const start = buf.lastIndexOf(0x0a, at) + 1;
      const nl = buf.indexOf(0x0a, at);
      if (nl === -1) break; // a torn tail: the segment ends here
      const d = decodeLine(buf, start, nl);
      if ('bad' in d) break;
      const e = d.value as BoardEvent;
      if (!isSegmentHeader(e) && !isKeyLine(e) && (e as { taskId?: unknown }).taskId === taskId) events.push(e);
      at = buf.indexOf(needle, nl + 1);
    }
  }
  return events;
}

/** Every event still on disk, oldest first: the log a person reads back. */
export function* readLog(dir: string): Generator<BoardEvent> {
  for (const n of segments(dir)) yield* readSegment(dir, n);
}

/**
 * The last `n` events on disk, oldest first. Segments are read backwards from their end, a block at a time,
 * so the cost follows `n`, not the length of the history (a segment holds up to 20k events, ~4 MB).
 */
export function readLogTail(dir: string, n: number): BoardEvent[] {
  return readLogPage(dir, Infinity, n).reverse();
}

/**
 * Up to `n` events at positions below `before`, newest first: a page of the log panel's history. A segment
 * whose header says it begins at or after `before` is passed over unread, and within a segment a line's
 * position is read from its bytes, so a page deep in the history costs about one segment's read, not all
 * the newer ones' parsing.
 */
export function readLogPage(dir: string, before: number, n: number): BoardEvent[] {
  const newestFirst: BoardEvent[] = [];
  for (const seg of segments(dir).reverse()) {
    if (newestFirst.length >= n) break;
    const file = join(dir, segName(seg));
    const after = segmentAfter(file);
    if (after !== null && after + 1 >= before) continue;
    newestFirst.push(...segmentTail(file, n - newestFirst.length, before));
  }
  return newestFirst;
}

/** Up to `n` events about `taskId` at positions below `before`, newest first (readTaskLog's byte search). */
export function readTaskLogPage(dir: string, taskId: string, before: number, n: number): BoardEvent[] {
  const mine = readTaskLog(dir, taskId);
  let end = mine.length;
  while (end > 0 && (mine[end - 1] as BoardEvent).seq >= before) end--;
  return mine.slice(Math.max(0, end - n), end).reverse();
}

/**
 * The oldest event still on disk: where the history a window can page back to begins. Older segments are
 * removed once the kept history passes HISTORY_KEEP_BYTES (journal.ts); null for a board with no event yet.
 */
export function keptFrom(dir: string): KeptFrom | null {
  for (const seg of segments(dir)) {
    const e = firstEvent(join(dir, segName(seg)));
    if (e) return { seq: e.seq, at: e.at };
  }
  return null;
}

/** How a key's record line begins (journalRecord.ts, KeyLine): told from an event without parsing it. */
const KEY_LINE_START = Buffer.from('{"writeKey":');
/** An event's position as its line spells it. The engine stamps `seq` after the event's own fields
 *  (leaseEngine.emit), so the last occurrence is the event's: inside a string a quote is escaped (`\"`), so
 *  no text a person or agent wrote can spell it. */
const SEQ_KEY = Buffer.from('"seq":');

/** Reading a segment backwards: 64 KiB holds ~300 events, what a window's log panel opens with. */
const TAIL_BLOCK = 64 * 1024;
/** A segment's header is its first line, ~50 bytes: this much of the file always holds it. */
const HEADER_BYTES = 256;

/** The position a segment's header says its first event follows, or null if it has no header (a journal
 *  written before headers: its lines are then read to find out). */
function segmentAfter(file: string): number | null {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(HEADER_BYTES);
    const got = fs.readSync(fd, buf, 0, HEADER_BYTES, 0);
    const nl = buf.subarray(0, got).indexOf(0x0a);
    if (nl === -1) return null;
    const d = decodeLine(buf, 0, nl);
    return !('bad' in d) && isSegmentHeader(d.value) ? d.value.after : null;
  } finally {
    fs.closeSync(fd);
  }
}

/** The first event of one segment, read forwards a block at a time (a line may be a 64 KiB task). */
function firstEvent(file: string): BoardEvent | null {
  const fd = fs.openSync(file, 'r');
  try {
    let carry = Buffer.alloc(0);
    for (let pos = 0; ; ) {
      const block = Buffer.alloc(TAIL_BLOCK);
      const got = fs.readSync(fd, block, 0, TAIL_BLOCK, pos);
      if (got === 0) return null;
      pos += got;
      const chunk = Buffer.concat([carry, block.subarray(0, got)]);
      let start = 0;
      for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
        const d = decodeLine(chunk, start, nl);
        if ('bad' in d) return null;
        if (isEventRecord(d.value)) return d.value;
        start = nl + 1;
      }
      carry = chunk.subarray(start);
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** The position in an event's line, or null where it cannot be read from the bytes (a legacy or torn line:
 *  it is then parsed like any other). */
function lineSeq(line: Buffer): number | null {
  const at = line.lastIndexOf(SEQ_KEY);
  if (at === -1) return null;
  let n = 0;
  let i = at + SEQ_KEY.length;
  const from = i;
  for (; i < line.length && (line[i] as number) >= 0x30 && (line[i] as number) <= 0x39; i++) n = n * 10 + ((line[i] as number) - 0x30);
  return i > from ? n : null;
}

/** Up to `want` events below `before` from the end of one segment, newest first. Like readSegment, a line
 *  that does not parse or fails its checksum (a torn tail) ends the segment: it and anything after it are
 *  left out. */
function segmentTail(file: string, want: number, before: number): BoardEvent[] {
  const fd = fs.openSync(file, 'r');
  try {
    let pos = fs.fstatSync(fd).size;
    let carry = Buffer.alloc(0);
    const lines: Buffer[] = []; // newest first
    let events = 0; // lines that are not a key's record (which the log leaves out)
    const take = (line: Buffer) => {
      if (line.compare(KEY_LINE_START, 0, KEY_LINE_START.length, 0, Math.min(line.length, KEY_LINE_START.length)) === 0) return;
      const seq = lineSeq(line);
      if (seq !== null && seq >= before) return;
      lines.push(line);
      events++;
    };
    while (pos > 0 && events <= want) {
      const len = Math.min(TAIL_BLOCK, pos);
      pos -= len;
      const block = Buffer.alloc(len);
      fs.readSync(fd, block, 0, len, pos);
      const chunk = carry.length ? Buffer.concat([block, carry]) : block;
      let end = chunk.length;
      for (let i = chunk.length - 1; i >= 0; i--) {
        if (chunk[i] !== 0x0a) continue;
        if (i + 1 < end) take(chunk.subarray(i + 1, end));
        end = i;
      }
      carry = chunk.subarray(0, end);
    }
    if (pos === 0 && carry.length) take(carry);
    const out: BoardEvent[] = [];
    for (const line of lines) {
      const d = decodeLine(line, 0, line.length);
      if ('bad' in d) out.length = 0; // everything newer than a line that does not parse was never readable either
      else if (isEventRecord(d.value) && d.value.seq < before) out.push(d.value);
    }
    return out.slice(0, want);
  } finally {
    fs.closeSync(fd);
  }
}
