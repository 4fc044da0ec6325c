import * as fs from 'node:fs';
import { join } from 'node:path';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { deserializeBoard, serializeBoard, type SerializedBoard } from '../../src-shared/board/serialized.js';
import { applyEvent, emptyBoard, type Board } from '../../src-shared/board/reducer.js';

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
 */

export const SNAPSHOT_FORMAT = 1;
/** 20k events ≈ 4 MB of JSON: replays in well under a second, and snapshotting a 10k-task board (~3 MB) this
 *  rarely costs little next to the writes between. */
export const DEFAULT_COMPACT_EVERY = 20_000;

export class BoardCorruptError extends Error {
  constructor(
    readonly file: string,
    readonly backup: string,
    why: string,
  ) {
    super(`the board file ${file} cannot be read (${why}). It was left in place and copied to ${backup}; nothing was replaced. Move or repair it, then start again.`);
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

export interface Loaded {
  board: Board;
  /** Board-clock time of the last event on disk: the host resumes its clock from here. */
  mono: number;
  warnings: string[];
  segment: number;
  segmentEvents: number;
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

function backupOf(file: string, why: string): never {
  const backup = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  fs.copyFileSync(file, backup);
  throw new BoardCorruptError(file, backup, why);
}

/** Read the board back: snapshot, then every later event. A torn last line is dropped and cut off. */
export function loadBoard(dir: string): Loaded {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const warnings: string[] = [];
  let board = emptyBoard();
  let mono = 0;
  let first = 1;
  const snapPath = join(dir, 'snapshot.json');
  if (fs.existsSync(snapPath)) {
    let snap: SnapshotFile;
    try {
      snap = JSON.parse(fs.readFileSync(snapPath, 'utf8')) as SnapshotFile;
      if (snap.format !== SNAPSHOT_FORMAT) throw new Error(`unknown snapshot format ${String(snap.format)}`);
    } catch (err) {
      backupOf(snapPath, (err as Error).message);
    }
    board = deserializeBoard(snap.board);
    mono = snap.mono;
    first = snap.segment;
  }
  const segs = segments(dir).filter((n) => n >= first);
  let segmentEvents = 0;
  for (const [i, n] of segs.entries()) {
    const file = join(dir, segName(n));
    const isLast = i === segs.length - 1;
    const buf = fs.readFileSync(file);
    let offset = 0;
    segmentEvents = 0;
    while (offset < buf.length) {
      const nl = buf.indexOf(0x0a, offset);
      const end = nl === -1 ? buf.length : nl;
      const line = buf.subarray(offset, end).toString('utf8');
      const atTail = isLast && (nl === -1 || nl === buf.length - 1);
      let e: BoardEvent | null = null;
      try {
        e = JSON.parse(line) as BoardEvent;
      } catch (err) {
        if (!atTail) backupOf(file, `line at byte ${offset} is not JSON: ${(err as Error).message}`);
      }
      if (e === null || nl === -1) {
        // Only the very end of the newest segment can be torn (a crash mid-append): that write was never
        // acknowledged, so dropping it loses nothing anyone was told was saved.
        warnings.push(`dropped a torn last record (${buf.length - offset} bytes) at the end of ${file}`);
        fs.truncateSync(file, offset);
        break;
      }
      if (e.seq > board.seq) {
        try {
          applyEvent(board, e);
        } catch (err) {
          backupOf(file, (err as Error).message);
        }
        mono = e.mono;
      }
      segmentEvents++;
      offset = end + 1;
    }
  }
  return { board, mono, warnings, segment: segs.at(-1) ?? first, segmentEvents };
}

/** The events of one segment, oldest first, up to a torn tail if it has one. */
function readSegment(dir: string, n: number): BoardEvent[] {
  const events: BoardEvent[] = [];
  for (const line of fs.readFileSync(join(dir, segName(n)), 'utf8').split('\n')) {
    if (!line) continue;
    try {
      events.push(JSON.parse(line) as BoardEvent);
    } catch {
      break; // a torn tail: the segment ends here
    }
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
 *  parse (a torn tail) ends the segment: it and anything after it are left out. */
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
      try {
        out.push(JSON.parse(line.toString('utf8')) as BoardEvent);
      } catch {
        out.length = 0; // everything newer than a line that does not parse was never readable either
      }
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
    loaded: Pick<Loaded, 'segment' | 'segmentEvents'>,
    private readonly snapshotOf: () => { board: Board; mono: number },
    private readonly compactEvery = DEFAULT_COMPACT_EVERY,
  ) {
    this.segment = loaded.segment;
    this.segmentEvents = loaded.segmentEvents;
    this.fd = fs.openSync(join(dir, segName(this.segment)), 'a', 0o600);
    fsyncDir(dir); // a new segment's name must survive a power cut, not only its bytes
  }

  append(e: BoardEvent): void {
    if (this.closed) throw new Error('journal is closed');
    this.pending.push(`${JSON.stringify(e)}\n`);
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
    // The new segment exists before the snapshot names it, so a crash in between leaves a loadable board.
    const nextFd = fs.openSync(join(this.dir, segName(next)), 'a', 0o600);
    writeFileDurably(join(this.dir, 'snapshot.json'), JSON.stringify(snap));
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
