import * as fs from 'node:fs';
import { join } from 'node:path';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { deserializeBoard, serializeBoard, type SerializedBoard } from '../../src-shared/board/serialized.js';
import { applyEvent, emptyBoard, type Board } from '../../src-shared/board/reducer.js';
import { isEventKind } from '../../src-shared/board/eventKinds.js';
import { decodeLine, encodeLine, isSegmentHeader, JOURNAL_FORMAT, segmentHeader } from './journalRecord.js';

/**
 * The board on disk: numbered segments of JSON lines (one event a line, appended, fsync'd before a write is
 * acknowledged) plus a snapshot written now and then.
 *
 * Why this shape: the events are already the board's unit of change and its readable log, so appending them
 * is the cheapest durable write (one small append + fdatasync, batched across concurrent writers) and a torn
 * write can only cut the last line. Replaying a long history on every start would be slow, so once a segment
 * holds `compactEvery` events the board is snapshotted (write a temp file, fsync, rename, fsync the folder:
 * the snapshot is either the old one or the new one, never half) and a new segment begins. Old segments stay
 * as the history a person can read back; loading needs only the snapshot and the segments after it.
 *
 * Each line carries a checksum and each segment begins with a header (journalRecord.ts), so what a crash
 * does (cut the last line short) is told from what damage does (change a complete line, lose or empty a
 * segment): the first is repaired, the second refused, and neither without a copy or a word.
 */

export const SNAPSHOT_FORMAT = 1;
/** 20k events ≈ 4 MB of JSON: replays in well under a second, and snapshotting a 10k-task board (~3 MB) this
 *  rarely costs little next to the writes between. */
export const DEFAULT_COMPACT_EVERY = 20_000;

/**
 * The board on disk cannot be loaded as it is, and nothing was changed or replaced: the message says what
 * happened, in which file and where, and what a person can do. (A missing file has nothing to copy.)
 */
export class BoardUnreadableError extends Error {
  constructor(
    readonly file: string,
    why: string,
    kept: string,
    whatToDo: string,
  ) {
    super(`the board file ${file} cannot be read: ${why}. ${kept} ${whatToDo}`);
    this.name = 'BoardUnreadableError';
  }
}

/** Same, for a file that exists: it is also copied aside as `backup`, for whoever repairs it. */
export class BoardCorruptError extends BoardUnreadableError {
  constructor(
    file: string,
    readonly backup: string,
    why: string,
    whatToDo: string,
  ) {
    super(file, why, `It was left in place and copied to ${backup}; nothing was replaced.`, whatToDo);
    this.name = 'BoardCorruptError';
  }
}

interface SnapshotFile {
  format: number;
  /** First segment whose events come after this snapshot. */
  segment: number;
  board: SerializedBoard;
  /** Board-clock time of the last event in the snapshot. */
  mono: number;
}

/**
 * journal.json: written once, when a board first gets format-2 segments (a new board, or an older one on
 * its first start with this version). From `since` on every segment must exist and begin with its header,
 * so a segment that went missing or was emptied is refused instead of read as a new, empty board.
 */
interface Manifest {
  format: typeof JOURNAL_FORMAT;
  since: number;
}
const MANIFEST = 'journal.json';

export interface Loaded {
  board: Board;
  /** Board-clock time of the last event on disk: the host resumes its clock from here. */
  mono: number;
  warnings: string[];
  /** The newest segment (which need not exist yet, for a new board) and its number of events. */
  segment: number;
  segmentEvents: number;
  /** Whether that segment exists and begins with a format-2 header; if not, the journal begins a new one. */
  headed: boolean;
  exists: boolean;
  /** Whether journal.json exists. */
  manifest: boolean;
}

const segName = (n: number) => `segment-${String(n).padStart(6, '0')}.jsonl`;
const segNumber = (name: string) => {
  const m = /^segment-(\d{6,})\.jsonl$/.exec(name);
  return m ? Number(m[1]) : null;
};

function segments(dir: string): number[] {
  return fs
    .readdirSync(dir)
    .map(segNumber)
    .filter((n): n is number => n !== null)
    .sort((a, b) => a - b);
}

/** `file` copied beside itself as `<file>.corrupt-<time>`: what a person can restore from. */
function copyAside(file: string): string {
  const backup = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  fs.copyFileSync(file, backup);
  return backup;
}

function refuse(file: string, why: string, whatToDo: string, copy = true): never {
  if (copy && fs.existsSync(file)) throw new BoardCorruptError(file, copyAside(file), why, whatToDo);
  throw new BoardUnreadableError(file, why, 'Nothing was changed.', whatToDo);
}

/** The way out when nothing on disk can be trusted to go on from. */
const restoreOrMoveAside = (dir: string) => `To go on, restore it from a backup, or move the folder ${dir} aside (it stays readable there) to start a new, empty board.`;

/** The way out for one bad line: everything before it is sound. */
const cutOrRestore = (dir: string, line: number, byte: number) =>
  `To go on, restore the file from a backup; or, to keep the board as it was before line ${line}, cut the file at byte ${byte} (truncate -s ${byte}), keeping the copy; or move the folder ${dir} aside to start a new, empty board.`;

function readManifest(dir: string): Manifest | null {
  const path = join(dir, MANIFEST);
  if (!fs.existsSync(path)) return null;
  try {
    const m = JSON.parse(fs.readFileSync(path, 'utf8')) as Manifest;
    if (m.format !== JOURNAL_FORMAT) throw new Error(`unknown journal format ${String(m.format)}: written by another version of Forkbench?`);
    if (!Number.isSafeInteger(m.since) || m.since < 1) throw new Error(`no valid first segment (since: ${String(m.since)})`);
    return m;
  } catch (err) {
    refuse(path, (err as Error).message, restoreOrMoveAside(dir));
  }
}

/** What every event line has, whatever its kind; the reducer checks the rest as it applies it. */
function isEventRecord(v: unknown): v is BoardEvent {
  const e = v as Partial<BoardEvent> | null;
  return typeof e === 'object' && e !== null && Number.isSafeInteger(e.seq) && typeof e.mono === 'number' && Number.isFinite(e.mono) && isEventKind(e.kind);
}

/**
 * Read the board back: snapshot, then every later event, checked. What a crash can do is repaired: an
 * incomplete last line (no newline: a write cut short) is dropped, after the file is copied aside. Anything
 * else is damage and refused with a BoardCorruptError that changes nothing: a complete line that fails its
 * checksum or is not JSON, an event of a kind this version does not know, a jump or step back in the
 * sequence, a segment missing or emptied that the snapshot or journal.json says exists.
 */
export function loadBoard(dir: string): Loaded {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const warnings: string[] = [];
  const manifest = readManifest(dir);
  let board = emptyBoard();
  let mono = 0;
  let first = 1;
  const snapPath = join(dir, 'snapshot.json');
  const hasSnapshot = fs.existsSync(snapPath);
  if (hasSnapshot) {
    let snap: SnapshotFile;
    try {
      // Checksummed like a journal line (snapshots written before checksums have none, and still load).
      const buf = fs.readFileSync(snapPath);
      const d = decodeLine(buf, 0, buf.length);
      if ('bad' in d) throw new Error(`it ${d.bad}`);
      snap = d.value as SnapshotFile;
      if (snap.format !== SNAPSHOT_FORMAT) throw new Error(`unknown snapshot format ${String(snap.format)}`);
    } catch (err) {
      refuse(snapPath, (err as Error).message, restoreOrMoveAside(dir));
    }
    board = deserializeBoard(snap.board);
    mono = snap.mono;
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
        const backup = copyAside(file);
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
      try {
        applyEvent(board, e);
      } catch (err) {
        refuse(file, `${where} does not apply to the board: ${(err as Error).message}`, cutOrRestore(dir, lineNo, offset));
      }
      mono = e.mono;
      segmentEvents++;
      offset = nl + 1;
    }
  }
  // Files that hold no board at all (an empty segment before headers existed) are not a new board either.
  if (board.seq === 0 && !sawHeader && (hasSnapshot || segs.length)) {
    refuse(join(dir, segName(segs[0] ?? first)), 'it holds no event, not even the one that creates the board: it was emptied or never written', restoreOrMoveAside(dir), false);
  }
  const segment = segs.at(-1) ?? first;
  return { board, mono, warnings, segment, segmentEvents, headed, exists: segs.length > 0, manifest: manifest !== null };
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
    if (!isSegmentHeader(d.value)) events.push(d.value as BoardEvent);
    offset = nl + 1;
  }
  return events;
}

/** Every event still on disk, oldest first: the log a person reads back. */
export function* readLog(dir: string): Generator<BoardEvent> {
  for (const n of segments(dir)) yield* readSegment(dir, n);
}

/** Reading a segment backwards: 64 KiB holds ~300 events, what a window's log panel opens with. */
const TAIL_BLOCK = 64 * 1024;

/**
 * The last `n` events on disk, oldest first. Segments are read backwards from their end, a block at a time,
 * so the cost follows `n`, not the length of the history (a segment holds up to 20k events, ~4 MB).
 */
export function readLogTail(dir: string, n: number): BoardEvent[] {
  const newestFirst: BoardEvent[] = [];
  for (const seg of segments(dir).reverse()) {
    if (newestFirst.length >= n) break;
    newestFirst.push(...segmentTail(join(dir, segName(seg)), n - newestFirst.length));
  }
  return newestFirst.reverse();
}

/** Up to `want` events from the end of one segment, newest first. Like readSegment, a line that does not
 *  parse or fails its checksum (a torn tail) ends the segment: it and anything after it are left out. */
function segmentTail(file: string, want: number): BoardEvent[] {
  const fd = fs.openSync(file, 'r');
  try {
    let pos = fs.fstatSync(fd).size;
    let carry = Buffer.alloc(0);
    const lines: Buffer[] = []; // newest first
    while (pos > 0 && lines.length <= want) {
      const len = Math.min(TAIL_BLOCK, pos);
      pos -= len;
      const block = Buffer.alloc(len);
      fs.readSync(fd, block, 0, len, pos);
      const chunk = carry.length ? Buffer.concat([block, carry]) : block;
      let end = chunk.length;
      for (let i = chunk.length - 1; i >= 0; i--) {
        if (chunk[i] !== 0x0a) continue;
        if (i + 1 < end) lines.push(chunk.subarray(i + 1, end));
        end = i;
      }
      carry = chunk.subarray(0, end);
    }
    if (pos === 0 && carry.length) lines.push(carry);
    const out: BoardEvent[] = [];
    for (const line of lines) {
      const d = decodeLine(line, 0, line.length);
      if ('bad' in d) out.length = 0; // everything newer than a line that does not parse was never readable either
      else if (!isSegmentHeader(d.value)) out.push(d.value as BoardEvent);
    }
    return out.slice(0, want);
  } finally {
    fs.closeSync(fd);
  }
}

interface Waiter {
  upTo: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Appends events and makes them durable with group commit: every event appended while one fdatasync is in
 * flight rides on the next, so N concurrent agents cost one disk flush, not N. `sync()` resolves once
 * everything appended before it is on disk; only then may a write be acknowledged.
 */
export class Journal {
  private fd: number;
  private segment: number;
  private segmentEvents: number;
  private pending: string[] = [];
  private appended = 0;
  private durable = 0;
  private flushing = false;
  private failed: Error | null = null;
  private waiters: Waiter[] = [];
  private closed = false;

  constructor(
    private readonly dir: string,
    loaded: Pick<Loaded, 'board' | 'segment' | 'segmentEvents' | 'headed' | 'exists' | 'manifest'>,
    private readonly snapshotOf: () => { board: Board; mono: number },
    private readonly compactEvery = DEFAULT_COMPACT_EVERY,
  ) {
    this.segment = loaded.segment;
    this.segmentEvents = loaded.segmentEvents;
    if (!loaded.headed) {
      // A new board, or one written before segments had headers: what is appended from now on goes into a
      // segment of this format, so every record after the old ones carries its checksum.
      if (loaded.exists) this.segment++;
      this.segmentEvents = 0;
      writeFileDurably(join(dir, segName(this.segment)), encodeLine(segmentHeader(this.segment, loaded.board.seq)));
    }
    // After the segment it names, so that whenever journal.json exists, so does that segment.
    if (!loaded.manifest) writeFileDurably(join(dir, MANIFEST), JSON.stringify({ format: JOURNAL_FORMAT, since: this.segment } satisfies Manifest));
    this.fd = fs.openSync(join(dir, segName(this.segment)), 'a', 0o600);
    fsyncDir(dir); // a new segment's name must survive a power cut, not only its bytes
  }

  append(e: BoardEvent): void {
    if (this.closed) throw new Error('journal is closed');
    this.pending.push(encodeLine(e));
    this.appended++;
    this.segmentEvents++;
  }

  /** Resolves when every event appended so far is on disk. */
  sync(): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.durable >= this.appended) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ upTo: this.appended, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  /** Events appended since the journal opened; `durableCount` of them are on disk. Read once per event by
   *  the board's publish step, so they are plain getters rather than a stats object per call. */
  get appendedCount(): number {
    return this.appended;
  }

  get durableCount(): number {
    return this.durable;
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.durable < this.appended) {
        const data = this.pending.join('');
        const upTo = this.appended;
        this.pending = [];
        await writeAll(this.fd, Buffer.from(data, 'utf8'));
        await new Promise<void>((res, rej) => fs.fdatasync(this.fd, (err) => (err ? rej(err) : res())));
        this.durable = upTo;
        this.waiters = this.waiters.filter((w) => (w.upTo <= upTo ? (w.resolve(), false) : true));
        // Compact only when nothing is in flight, so the snapshot and the segments never disagree.
        if (this.durable === this.appended && this.segmentEvents >= this.compactEvery) this.compact();
      }
    } catch (err) {
      this.failed = err as Error;
      for (const w of this.waiters) w.reject(this.failed);
      this.waiters = [];
    } finally {
      this.flushing = false;
    }
  }

  /** Snapshot the board and start a new segment. Synchronous, so no event can slip in between. */
  compact(): void {
    const { board, mono } = this.snapshotOf();
    const next = this.segment + 1;
    const snap: SnapshotFile = {
      format: SNAPSHOT_FORMAT,
      segment: next,
      mono,
      board: serializeBoard(board),
    };
    // The new segment exists, header and all, before the snapshot names it, so a crash in between leaves a
    // loadable board; its header says which event it follows, which is the snapshot's last.
    writeFileDurably(join(this.dir, segName(next)), encodeLine(segmentHeader(next, board.seq)));
    const nextFd = fs.openSync(join(this.dir, segName(next)), 'a', 0o600);
    writeFileDurably(join(this.dir, 'snapshot.json'), encodeLine(snap).slice(0, -1));
    fs.closeSync(this.fd);
    this.fd = nextFd;
    this.segment = next;
    this.segmentEvents = 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.sync().catch(() => undefined);
    this.closed = true;
    fs.closeSync(this.fd);
  }
}

async function writeAll(fd: number, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    off += await new Promise<number>((res, rej) => fs.write(fd, buf, off, buf.length - off, null, (err, n) => (err ? rej(err) : res(n))));
  }
}

/** Replace a file atomically and durably: temp file, fsync, rename, fsync the folder. */
export function writeFileDurably(path: string, data: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, path);
  fsyncDir(join(path, '..'));
}

function fsyncDir(dir: string): void {
  const dfd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(dfd);
  } finally {
    fs.closeSync(dfd);
  }
}
