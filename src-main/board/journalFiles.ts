import * as fs from 'node:fs';
import type { QuarantinedEvent } from './quarantine.js';
import { join } from 'node:path';
import type { BoardEvent } from '../../src-shared/board/events.js';
import type { SerializedBoard } from '../../src-shared/board/serialized.js';
import type { Board } from '../../src-shared/board/reducer.js';
import { isEventKind } from '../../src-shared/board/eventKinds.js';
import { JOURNAL_FORMAT } from './journalRecord.js';
import type { WriteKeyRecord } from './writeKeys.js';

/**
 * The board folder's layout (segments, snapshot, journal.json), the errors that refuse it, and the durable
 * file writes both the loader and the journal use. The why of the layout is in journal.ts.
 */

export const SNAPSHOT_FORMAT = 1;
/** 20k events ≈ 4 MB of JSON: replays in well under a second, and snapshotting a 10k-task board (~3 MB) this
 *  rarely costs little next to the writes between. */
export const DEFAULT_COMPACT_EVERY = 20_000;
/** A segment this large is snapshotted and a new one begun, however few its events: 32 MiB replays in a
 *  fraction of a second, and it bounds the journal's growth between snapshots when events are large (a
 *  flood of 64 KiB tasks wrote 933 MB into one segment). */
export const COMPACT_BYTES = 32 * 1024 * 1024;
/** Segments a snapshot covers are kept, newest first, while they total at most this: the recent history a
 *  task's history and the log panel read back, a few compactions' worth. Older ones are removed, so a
 *  board's folder holds at most about its snapshot, this, and the segment being written. */
export const HISTORY_KEEP_BYTES = 64 * 1024 * 1024;

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

export interface SnapshotFile {
  format: number;
  /** First segment whose events come after this snapshot. */
  segment: number;
  board: SerializedBoard;
  /** Board-clock time of the last event in the snapshot. */
  mono: number;
  /** The idempotency keys kept when it was written (writeKeys.ts); absent in snapshots from before them. */
  keys?: readonly WriteKeyRecord[];
}

/**
 * journal.json: written once, when a board first gets format-2 segments (a new board, or an older one on
 * its first start with this version). From `since` on every segment must exist and begin with its header,
 * so a segment that went missing or was emptied is refused instead of read as a new, empty board.
 */
export interface Manifest {
  format: typeof JOURNAL_FORMAT;
  since: number;
}
export const MANIFEST = 'journal.json';

export interface Loaded {
  board: Board;
  /** Board-clock time of the last event on disk: the host resumes its clock from here. */
  mono: number;
  /** The idempotency keys' records, oldest first: the snapshot's, then every whole keyed write after it. */
  keys: WriteKeyRecord[];
  warnings: string[];
  /** The newest segment (which need not exist yet, for a new board) and its number of events. */
  segment: number;
  segmentEvents: number;
  /** The segment the snapshot says the board goes on in (0 without a snapshot): those before it are history. */
  snapshotSegment: number;
  /** Whether that segment exists and begins with a format-2 header; if not, the journal begins a new one. */
  headed: boolean;
  exists: boolean;
  /** Whether journal.json exists. */
  manifest: boolean;
  /** Events on disk that were not applied (storedEvents.ts: the wrong shape, or they break the board's
   *  rules), oldest first: the board moved past each unchanged. */
  setAside: Array<Omit<QuarantinedEvent, 'at'>>;
}

export const segName = (n: number) => `segment-${String(n).padStart(6, '0')}.jsonl`;
export const segNumber = (name: string) => {
  const m = /^segment-(\d{6,})\.jsonl$/.exec(name);
  return m ? Number(m[1]) : null;
};

export function segments(dir: string): number[] {
  return fs
    .readdirSync(dir)
    .map(segNumber)
    .filter((n): n is number => n !== null)
    .sort((a, b) => a - b);
}

/** `file` copied beside itself as `<file>.corrupt-<time>`: what a person can restore from. */
export function copyAside(file: string): string {
  const backup = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  fs.copyFileSync(file, backup);
  return backup;
}

export function refuse(file: string, why: string, whatToDo: string, copy = true): never {
  if (copy && fs.existsSync(file)) throw new BoardCorruptError(file, copyAside(file), why, whatToDo);
  throw new BoardUnreadableError(file, why, 'Nothing was changed.', whatToDo);
}

/** The way out when nothing on disk can be trusted to go on from. */
export const restoreOrMoveAside = (dir: string) => `To go on, restore it from a backup, or move the folder ${dir} aside (it stays readable there) to start a new, empty board.`;

/** The way out for one bad line: everything before it is sound. */
export const cutOrRestore = (dir: string, line: number, byte: number) =>
  `To go on, restore the file from a backup; or, to keep the board as it was before line ${line}, cut the file at byte ${byte} (truncate -s ${byte}), keeping the copy; or move the folder ${dir} aside to start a new, empty board.`;

export function readManifest(dir: string): Manifest | null {
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
export function isEventRecord(v: unknown): v is BoardEvent {
  const e = v as Partial<BoardEvent> | null;
  return typeof e === 'object' && e !== null && Number.isSafeInteger(e.seq) && typeof e.mono === 'number' && Number.isFinite(e.mono) && isEventKind(e.kind);
}
