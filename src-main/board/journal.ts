import * as fs from 'node:fs';
import { join } from 'node:path';
import type { BoardEvent } from '../../src-shared/board/events.js';
import type { Board } from '../../src-shared/board/reducer.js';
import { encodeLine, JOURNAL_FORMAT, segmentHeader } from './journalRecord.js';
import { fsyncDir, writeFileAtomic } from '../base/atomicWrite.js';
import { COMPACT_BYTES, DEFAULT_COMPACT_EVERY, HISTORY_KEEP_BYTES, MANIFEST, segName, segments, type Loaded, type Manifest } from './journalFiles.js';
import { writeSnapshot } from './snapshotFile.js';
import type { WriteKeyRecord } from './writeKeys.js';

/**
 * The board on disk: numbered segments of JSON lines (one event a line, appended, fsync'd before a write is
 * acknowledged) plus a snapshot written now and then.
 *
 * Why this shape: the events are already the board's unit of change and its readable log, so appending them
 * is the cheapest durable write (one small append + fdatasync, batched across concurrent writers) and a torn
 * write can only cut the last line. Replaying a long history on every start would be slow, so once a segment
 * holds `compactEvery` events or `COMPACT_BYTES` bytes the board is snapshotted (snapshotFile.ts, durable: write
 * a temp file, fsync, rename, fsync the folder: the snapshot is either the old one or the new one, never
 * half) and a new segment begins. Loading needs only the snapshot and the segments after it; the segments
 * it covers stay as the history a person reads back while they total HISTORY_KEEP_BYTES, and older ones
 * are removed, oldest first, so the folder stays bounded and a crash while removing leaves an unbroken run.
 *
 * Each line carries a checksum and each segment begins with a header (journalRecord.ts), so what a crash
 * does (cut the last line short) is told from what damage does (change a complete line, lose or empty a
 * segment): the first is repaired, the second refused, and neither without a copy or a word.
 */

export { BoardCorruptError, BoardUnreadableError, COMPACT_BYTES, DEFAULT_COMPACT_EVERY, HISTORY_KEEP_BYTES, SNAPSHOT_FORMAT, type Loaded } from './journalFiles.js';

export interface JournalOptions {
  compactEvery?: number;
  compactBytes?: number;
  historyKeepBytes?: number;
  /** Told when a snapshot could not be written (the board goes on in its current segment). */
  warn?: (message: string) => void;
}
export { keptFrom, loadBoard, readLog, readLogPage, readLogTail, readTaskLog, readTaskLogPage } from './journalLoad.js';

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
  private segmentBytes = 0;
  /** Bytes of the segments the snapshot does not cover yet, before the one being appended to: a host killed
   *  inside compact() leaves a new segment the snapshot never named, and the next host appends there. They
   *  count toward the next snapshot, or each crash mid-snapshot would let the journal a start replays grow
   *  by a whole compaction's worth. */
  private uncoveredBytes = 0;
  /** The segment's size and event count at which the next snapshot is taken: moved on after a snapshot
   *  fails, so a board that cannot be snapshotted is not tried again after every write. */
  private compactAtBytes: number;
  private compactAtEvents: number;
  private readonly compactEvery: number;
  private readonly compactBytes: number;
  private pending: string[] = [];
  private appended = 0;
  private durable = 0;
  private flushing = false;
  private failed: Error | null = null;
  private waiters: Waiter[] = [];
  private closed = false;

  constructor(
    private readonly dir: string,
    loaded: Pick<Loaded, 'board' | 'segment' | 'segmentEvents' | 'snapshotSegment' | 'headed' | 'exists' | 'manifest'>,
    private readonly snapshotOf: () => { board: Board; mono: number; keys?: readonly WriteKeyRecord[] },
    private readonly opts: JournalOptions = {},
  ) {
    this.compactEvery = opts.compactEvery ?? DEFAULT_COMPACT_EVERY;
    this.compactBytes = opts.compactBytes ?? COMPACT_BYTES;
    this.compactAtEvents = this.compactEvery;
    this.compactAtBytes = this.compactBytes;
    removeStaleTemps(dir);
    this.segment = loaded.segment;
    this.segmentEvents = loaded.segmentEvents;
    if (!loaded.headed) {
      // A new board, or one written before segments had headers: what is appended from now on goes into a
      // segment of this format, so every record after the old ones carries its checksum.
      if (loaded.exists) this.segment++;
      this.segmentEvents = 0;
      writeFileAtomic(join(dir, segName(this.segment)), encodeLine(segmentHeader(this.segment, loaded.board.seq)), { durable: true });
    }
    // After the segment it names, so that whenever journal.json exists, so does that segment.
    if (!loaded.manifest) writeFileAtomic(join(dir, MANIFEST), JSON.stringify({ format: JOURNAL_FORMAT, since: this.segment } satisfies Manifest), { durable: true });
    this.fd = fs.openSync(join(dir, segName(this.segment)), 'a', 0o600);
    this.segmentBytes = fs.fstatSync(this.fd).size;
    for (const n of segments(dir)) if (n >= loaded.snapshotSegment && n < this.segment) this.uncoveredBytes += fs.statSync(join(dir, segName(n))).size;
    fsyncDir(dir); // a new segment's name must survive a power cut, not only its bytes
    // A host killed while it removed old segments left some: finish that now, or a board that is only read
    // after the crash keeps them until it has written a compaction's worth. Only segments before the one the
    // snapshot names are history (a crash inside compact() can leave a newer, empty one the snapshot does not
    // name yet: the board still needs the segment before it).
    this.prune(loaded.snapshotSegment);
  }

  append(e: BoardEvent): void {
    if (this.closed) throw new Error('journal is closed');
    this.pending.push(encodeLine(e));
    this.appended++;
    this.segmentEvents++;
  }

  /** A record that is not an event (a key's outcome: journalRecord.ts), made durable like one. */
  appendRecord(value: object): void {
    if (this.closed) throw new Error('journal is closed');
    this.pending.push(encodeLine(value));
    this.appended++;
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

  /** Records appended since the journal opened; `durableCount` of them are on disk. Read once per event by
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
        const data = Buffer.from(this.pending.join(''), 'utf8');
        const upTo = this.appended;
        this.pending = [];
        await writeAll(this.fd, data);
        this.segmentBytes += data.length;
        await new Promise<void>((res, rej) => fs.fdatasync(this.fd, (err) => (err ? rej(err) : res())));
        this.durable = upTo;
        this.waiters = this.waiters.filter((w) => (w.upTo <= upTo ? (w.resolve(), false) : true));
        // Compact only when nothing is in flight, so the snapshot and the segments never disagree.
        if (this.durable === this.appended && (this.segmentEvents >= this.compactAtEvents || this.uncoveredBytes + this.segmentBytes >= this.compactAtBytes)) this.compact();
      }
    } catch (err) {
      this.failed = err as Error;
      for (const w of this.waiters) w.reject(this.failed);
      this.waiters = [];
    } finally {
      this.flushing = false;
    }
  }

  /**
   * Snapshot the board, start a new segment, and remove the segments beyond the history kept. Synchronous,
   * so no event can slip in between. A snapshot that cannot be written (a full disk) loses nothing: the
   * board goes on in its segment, and is snapshotted again once that has grown by as much once more.
   */
  compact(): void {
    const { board, mono, keys } = this.snapshotOf();
    const next = this.segment + 1;
    const nextPath = join(this.dir, segName(next));
    // The new segment exists, header and all, before the snapshot names it, so a crash in between leaves a
    // loadable board; its header says which event it follows, which is the snapshot's last.
    writeFileAtomic(nextPath, encodeLine(segmentHeader(next, board.seq)), { durable: true });
    const nextFd = fs.openSync(nextPath, 'a', 0o600);
    try {
      writeSnapshot(join(this.dir, 'snapshot.json'), next, mono, board, keys);
    } catch (err) {
      // Until a snapshot names it, the new segment must not exist: events go on in this one, and a segment
      // after it whose header says it follows an earlier event would be read as damage.
      fs.closeSync(nextFd);
      fs.rmSync(nextPath, { force: true });
      fsyncDir(this.dir);
      this.compactAtBytes = this.uncoveredBytes + this.segmentBytes + this.compactBytes;
      this.compactAtEvents = this.segmentEvents + this.compactEvery;
      this.opts.warn?.(`forkbench: the board's snapshot could not be written (${(err as Error).message}); nothing was lost, and the board goes on in ${segName(this.segment)}`);
      return;
    }
    // Renamed into place, the snapshot names the new segment: from here a failure is the journal's (the board
    // turns read-only), never a reason to remove that segment.
    fsyncDir(this.dir);
    fs.closeSync(this.fd);
    this.fd = nextFd;
    this.segment = next;
    this.segmentEvents = 0;
    this.segmentBytes = fs.fstatSync(nextFd).size;
    this.uncoveredBytes = 0;
    this.compactAtBytes = this.compactBytes;
    this.compactAtEvents = this.compactEvery;
    this.prune(next);
  }

  /** Remove the segments the snapshot covers (those before `snapshotSegment`) beyond the newest
   *  HISTORY_KEEP_BYTES of them, oldest first. */
  private prune(snapshotSegment: number): void {
    const keep = this.opts.historyKeepBytes ?? HISTORY_KEEP_BYTES;
    const covered = segments(this.dir).filter((n) => n < snapshotSegment);
    let kept = 0;
    let from = covered.length; // covered[from…] are kept
    while (from > 0) {
      const size = fs.statSync(join(this.dir, segName(covered[from - 1] as number))).size;
      if (kept + size > keep) break;
      kept += size;
      from--;
    }
    if (from === 0) return;
    try {
      for (const n of covered.slice(0, from)) fs.rmSync(join(this.dir, segName(n)), { force: true });
      fsyncDir(this.dir);
    } catch (err) {
      this.opts.warn?.(`forkbench: old journal segments could not be removed (${(err as Error).message}); the next snapshot tries again`);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.sync().catch(() => undefined);
    this.closed = true;
    fs.closeSync(this.fd);
  }
}

/** Temp files of snapshots and segments a killed host was writing: never renamed into place, so nothing
 *  reads them, and each is as large as the board. One host has a board open (host.lock), so none is in use. */
function removeStaleTemps(dir: string): void {
  for (const f of fs.readdirSync(dir, { withFileTypes: true }))
    if (f.isFile() && /^(snapshot\.json|journal\.json|segment-\d+\.jsonl)\.\d+(\.\d+)?\.tmp$/.test(f.name)) fs.rmSync(join(dir, f.name), { force: true });
}

async function writeAll(fd: number, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    off += await new Promise<number>((res, rej) => fs.write(fd, buf, off, buf.length - off, null, (err, n) => (err ? rej(err) : res(n))));
  }
}
