import * as fs from 'node:fs';
import { join } from 'node:path';
import type { BoardEvent } from '../../src-shared/board/events.js';
import { serializeBoard } from '../../src-shared/board/serialized.js';
import type { Board } from '../../src-shared/board/reducer.js';
import { encodeLine, JOURNAL_FORMAT, segmentHeader } from './journalRecord.js';
import { fsyncDir, writeFileAtomic } from '../base/atomicWrite.js';
import { DEFAULT_COMPACT_EVERY, MANIFEST, segName, SNAPSHOT_FORMAT, type Loaded, type Manifest, type SnapshotFile } from './journalFiles.js';

/**
 * The board on disk: numbered segments of JSON lines (one event a line, appended, fsync'd before a write is
 * acknowledged) plus a snapshot written now and then.
 *
 * Why this shape: the events are already the board's unit of change and its readable log, so appending them
 * is the cheapest durable write (one small append + fdatasync, batched across concurrent writers) and a torn
 * write can only cut the last line. Replaying a long history on every start would be slow, so once a segment
 * holds `compactEvery` events the board is snapshotted (base/atomicWrite, durable: write a temp file, fsync,
 * rename, fsync the folder: the snapshot is either the old one or the new one, never half) and a new segment
 * begins. Old segments stay as the history a person can read back; loading needs only the snapshot and the segments after it.
 *
 * Each line carries a checksum and each segment begins with a header (journalRecord.ts), so what a crash
 * does (cut the last line short) is told from what damage does (change a complete line, lose or empty a
 * segment): the first is repaired, the second refused, and neither without a copy or a word.
 */

export { BoardCorruptError, BoardUnreadableError, DEFAULT_COMPACT_EVERY, SNAPSHOT_FORMAT, type Loaded } from './journalFiles.js';
export { loadBoard, readLog, readLogTail } from './journalLoad.js';

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
      writeFileAtomic(join(dir, segName(this.segment)), encodeLine(segmentHeader(this.segment, loaded.board.seq)), { durable: true });
    }
    // After the segment it names, so that whenever journal.json exists, so does that segment.
    if (!loaded.manifest) writeFileAtomic(join(dir, MANIFEST), JSON.stringify({ format: JOURNAL_FORMAT, since: this.segment } satisfies Manifest), { durable: true });
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
    writeFileAtomic(join(this.dir, segName(next)), encodeLine(segmentHeader(next, board.seq)), { durable: true });
    const nextFd = fs.openSync(join(this.dir, segName(next)), 'a', 0o600);
    writeFileAtomic(join(this.dir, 'snapshot.json'), encodeLine(snap).slice(0, -1), { durable: true });
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
