import * as fs from 'node:fs';
import { basename } from 'node:path';
import { turnDigest } from '../../src-shared/board/usageLedger.js';

/** One whole line of a JSON-lines file, with the byte offset it starts at. */
export interface TailLine {
  readonly offset: number;
  readonly text: string;
}

/** What one read of a file found since the last. */
export interface TailRead {
  readonly lines: TailLine[];
  /** The file was replaced (another inode) or cut shorter since the last read: read again from its start. */
  readonly restarted: boolean;
  /** Nothing was added since the last read. */
  readonly quiet: boolean;
}

/** A read takes at most this much of a file at once: a CLI's record of a day is a few MB, and a file far
 *  larger is read in steps of this across polls rather than held in memory whole. */
const READ_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * The new whole lines of a JSON-lines file a CLI appends to, by offset: each read returns the lines completed
 * since the last. A last line without its newline (the CLI killed mid-write, or still writing) is left for a
 * later read, once it is whole; a file replaced or cut short is read from its start again (the recorder counts
 * a turn id once, so what was read before is not counted twice).
 */
export class JsonlTail {
  private offset = 0;
  private ino: number | null = null;
  /** Grows past READ_CHUNK_BYTES only for a line longer than it (a tool's result of a whole file). */
  private chunk = READ_CHUNK_BYTES;
  /** A digest of the file's first line, once read whole. */
  private head: string | null = null;

  constructor(readonly path: string) {}

  /**
   * The file as one record stream (usage.ts UsagePosition): its name and a digest of its first line, or null
   * until that line is whole. A file replaced by one that begins otherwise is another stream (its offsets
   * mean other records); one that begins the same (a copy, grown since) is the same, its offsets the same.
   */
  get stream(): string | null {
    return this.head === null ? null : `${basename(this.path)}#${this.head}`;
  }

  /** Where the next read starts: every whole line before it has been returned. */
  get position(): number {
    return this.offset;
  }

  /** null when the file is not there (yet). */
  read(): TailRead | null {
    let fd: number;
    try {
      fd = fs.openSync(this.path, 'r');
    } catch {
      return null;
    }
    try {
      const st = fs.fstatSync(fd);
      const restarted = this.ino !== null && (st.ino !== this.ino || st.size < this.offset);
      if (restarted || this.ino === null) {
        this.offset = 0;
        this.head = null;
      }
      this.ino = st.ino;
      if (st.size === this.offset) return { lines: [], restarted, quiet: !restarted };
      const want = Math.min(st.size - this.offset, this.chunk);
      const buf = Buffer.alloc(want);
      const got = fs.readSync(fd, buf, 0, want, this.offset);
      const lines: TailLine[] = [];
      let start = 0;
      for (let nl = buf.indexOf(0x0a, 0); nl !== -1 && nl < got; nl = buf.indexOf(0x0a, start)) {
        const text = buf.toString('utf8', start, nl).trim();
        if (this.offset + start === 0) this.head = turnDigest(text);
        if (text) lines.push({ offset: this.offset + start, text });
        start = nl + 1;
      }
      this.offset += start;
      // A full chunk with no line end in it: one line longer than the chunk, read whole next time.
      if (start === 0 && got === this.chunk) this.chunk *= 2;
      return { lines, restarted, quiet: false };
    } finally {
      fs.closeSync(fd);
    }
  }
}
