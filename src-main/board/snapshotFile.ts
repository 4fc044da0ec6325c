import * as fs from 'node:fs';
import { compactTask, type SerializedBoard } from '../../src-shared/board/serialized.js';
import type { Board } from '../../src-shared/board/reducer.js';
import { serializeLedger } from '../../src-shared/board/usageLedger.js';
import { crc32OfBytes } from './crc32.js';
import { checkRecord, recordSuffix } from './journalRecord.js';
import { SNAPSHOT_FORMAT, type SnapshotFile } from './journalFiles.js';
import type { WriteKeyRecord } from './writeKeys.js';

/**
 * snapshot.json, written a piece at a time. It is one JSON object with its checksum last, as it always was
 * (older files load the same way), but each task sits on a line of its own, so neither writing nor reading
 * it ever makes one string of the whole board: a board flooded before there were limits held more text than
 * V8 lets a string hold, and a snapshot made with one JSON.stringify could never be written, nor its
 * segments ever be removed.
 *
 *   {"format":1,"segment":7,"mono":123,"board":{"threadId":…,"seq":99,"tasks":[
 *   {"id":"T-1",…},
 *   {"id":"T-2",…}
 *   ]},"crc":"…"}
 */

/** Bytes gathered before each write: big enough that a 10k-task board takes a few dozen writes. */
const WRITE_CHUNK = 1024 * 1024;

/** Write `path` atomically (temp file, fsync, rename), the board's tasks one line each. A failure removes the
 *  temp file and leaves `path` as it was. The caller fsyncs the folder: once the rename is done the new
 *  snapshot is the board's, and a failure after it is not a snapshot that failed. */
export function writeSnapshot(path: string, segment: number, mono: number, board: Readonly<Board>, keys: readonly WriteKeyRecord[] = []): void {
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    let crc = 0;
    let parts: string[] = [];
    let size = 0;
    const flush = () => {
      const buf = Buffer.from(parts.join(''), 'utf8');
      crc = crc32OfBytes(buf, 0, buf.length, crc);
      for (let off = 0; off < buf.length; ) off += fs.writeSync(fd, buf, off, buf.length - off);
      parts = [];
      size = 0;
    };
    const put = (s: string) => {
      parts.push(s);
      size += s.length;
      if (size >= WRITE_CHUNK) flush();
    };
    // The keys' records (writeKeys.ts, bounded in number and size) go in the head, before the board, whose
    // tasks must come last.
    const head = JSON.stringify({ format: SNAPSHOT_FORMAT, segment, mono, ...(keys.length ? { keys } : {}), board: { ...boardHead(board), tasks: 0 } } satisfies Omit<SnapshotFile, 'board'> & { board: object });
    // `tasks` last, as a stand-in: the text ends `"tasks":0}}`, and the array goes where the 0 was.
    put(`${head.slice(0, -3)}[\n`);
    let first = true;
    for (const t of board.tasks.values()) {
      put(`${first ? '' : ',\n'}${JSON.stringify(compactTask(t))}`);
      first = false;
    }
    put(`${first ? '' : '\n'}]}`);
    flush();
    const suffix = Buffer.from(recordSuffix(crc), 'latin1');
    fs.writeSync(fd, suffix);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(tmp, path);
  } catch (err) {
    try {
      fs.closeSync(fd);
    } catch {
      // closed already
    }
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

function boardHead(b: Readonly<Board>): Omit<SerializedBoard, 'tasks'> {
  return { threadId: b.threadId, goal: b.goal, settings: b.settings, nextToken: b.nextToken, nextTaskNumber: b.nextTaskNumber, seq: b.seq, evidence: b.evidence, usageLedger: serializeLedger(b.usageLedger) };
}

/** A snapshot file read back: checksum first (on the bytes), then its JSON, one task line at a time when it
 *  was written that way. Throws with what is wrong; the loader refuses the file with it. */
export function readSnapshot(buf: Buffer): SnapshotFile {
  const c = checkRecord(buf, 0, buf.length);
  if ('bad' in c) throw new Error(`it ${c.bad}`);
  try {
    return parseSnapshot(buf, c.jsonEnd, c.checked);
  } catch (err) {
    throw err instanceof SyntaxError ? new Error(`it is not JSON (${err.message})`) : err;
  }
}

/** `end`: where its JSON ends (without its closing brace, when `checked`). */
function parseSnapshot(buf: Buffer, end: number, checked: boolean): SnapshotFile {
  const firstNl = buf.indexOf(0x0a);
  if (firstNl === -1 || firstNl >= end) {
    // One line: a snapshot written whole, by a version before this one.
    return JSON.parse(checked ? `${buf.toString('utf8', 0, end)}}` : buf.toString('utf8')) as SnapshotFile;
  }
  const head = JSON.parse(`${buf.toString('utf8', 0, firstNl)}]}}`) as SnapshotFile;
  const tasks = head.board.tasks;
  let at = firstNl + 1;
  for (;;) {
    const nl = buf.indexOf(0x0a, at);
    if (nl === -1 || nl >= end) break;
    const lineEnd = buf[nl - 1] === 0x2c ? nl - 1 : nl; // `,` between tasks
    tasks.push(JSON.parse(buf.toString('utf8', at, lineEnd)));
    at = nl + 1;
  }
  const tail = buf.toString('utf8', at, end);
  if (tail !== ']}') throw new Error(`it does not end as a snapshot does (after its last task: ${JSON.stringify(tail.slice(0, 40))})`);
  return head;
}
