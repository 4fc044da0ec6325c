import { crc32, crc32OfBytes, crc32OfString } from './crc32.js';
import type { WriteKeyRecord } from './writeKeys.js';

/**
 * One line of the journal: an event, or the header that begins a segment, as JSON with its checksum as
 * its last member: `{"seq":7,…,"crc":"1c291ca3"}`. The CRC-32 is of the line's JSON without that member,
 * so the loader checks the bytes as they are on disk (no re-serializing, whose key order could differ) and
 * hands on the event without it.
 *
 * Why a checksum per line: a crash can only cut the last line short (it then has no newline), but a disk,
 * a sync tool or a careless edit can change any byte, and a changed byte that still parses as JSON (a
 * digit of a token, a letter of a note) would be replayed as if it were true. A line that ends in a
 * newline and fails its checksum is damage, never a torn write.
 *
 * Journals from before format 2 have neither headers nor checksums; their lines still load (see
 * journal.ts): the format changed, old boards did not break.
 */

export const JOURNAL_FORMAT = 2;

/** The first line of every format-2 segment. A segment is never empty, so an empty one is damage; `after`
 *  (the board's sequence before its first event) tells a lost or swapped segment from a whole one. */
export interface SegmentHeader {
  journal: typeof JOURNAL_FORMAT;
  segment: number;
  after: number;
}

const SUFFIX_START = Buffer.from(',"crc":"');
/** `,"crc":"` + 8 hex digits + `"}`. */
const SUFFIX_LEN = SUFFIX_START.length + 8 + 2;
const CLOSE = Buffer.from('}');

const hex8 = (n: number) => n.toString(16).padStart(8, '0');

/** A value (an event, a header) as one journal line, newline included. */
export function encodeLine(value: object): string {
  const json = JSON.stringify(value);
  return `${json.slice(0, -1)},"crc":"${hex8(crc32OfString(json))}"}\n`;
}

export const segmentHeader = (segment: number, after: number): SegmentHeader => ({ journal: JOURNAL_FORMAT, segment, after });

/**
 * An idempotency key's first outcome (writeKeys.ts), written just before the `events` events its write made
 * and in the same append. The loader keeps the key only if all of those events are on disk after it, and
 * drops a tail that has the key without all of them: a crash keeps a keyed write whole or not at all.
 */
export interface KeyLine {
  writeKey: WriteKeyRecord;
  events: number;
}

export function isKeyLine(v: unknown): v is KeyLine {
  const k = v as Partial<KeyLine> | null;
  return typeof k === 'object' && k !== null && typeof k.writeKey === 'object' && k.writeKey !== null && Number.isSafeInteger(k.events) && (k.events as number) >= 0;
}

export function isSegmentHeader(v: unknown): v is SegmentHeader {
  const h = v as Partial<SegmentHeader> | null;
  return typeof h === 'object' && h !== null && 'journal' in h;
}

/** A line read back: its value and whether it carried a checksum (which then matched), or why it is bad. */
export type DecodedLine = { value: unknown; checked: boolean } | { bad: string };

/**
 * The checksum of the record `buf[start, end)`: where its JSON ends (before `,"crc":…`, whose closing brace
 * it then lacks) and whether it had a checksum, or why it is bad. Reads bytes only, so a record larger than
 * a string may be (a streamed snapshot, snapshotFile.ts) is checked too.
 */
export function checkRecord(buf: Buffer, start: number, end: number): { jsonEnd: number; checked: boolean } | { bad: string } {
  if (end - start >= SUFFIX_LEN + 1 && buf[end - 1] === 0x7d && buf[end - 2] === 0x22 && buf.compare(SUFFIX_START, 0, SUFFIX_START.length, end - SUFFIX_LEN, end - 10) === 0) {
    const stored = buf.toString('latin1', end - 10, end - 2);
    if (!/^[0-9a-f]{8}$/.test(stored)) return { bad: `has a malformed checksum "${stored}"` };
    const jsonEnd = end - SUFFIX_LEN;
    const actual = crc32(CLOSE, 0, 1, crc32OfBytes(buf, start, jsonEnd));
    if (actual !== parseInt(stored, 16)) return { bad: `fails its checksum (stored ${stored}, the line's bytes give ${hex8(actual)}): it was changed after it was written` };
    return { jsonEnd, checked: true };
  }
  return { jsonEnd: end, checked: false };
}

/** The suffix that ends a record whose bytes (its closing brace left out) have the CRC `crcOfJson`. */
export function recordSuffix(crcOfJsonWithoutClose: number): string {
  return `,"crc":"${hex8(crc32(CLOSE, 0, 1, crcOfJsonWithoutClose))}"}`;
}

/** The line `buf[start, end)`, its newline left out. */
export function decodeLine(buf: Buffer, start: number, end: number): DecodedLine {
  const c = checkRecord(buf, start, end);
  if ('bad' in c) return c;
  const { jsonEnd, checked } = c;
  const json = checked ? `${buf.toString('utf8', start, jsonEnd)}}` : buf.toString('utf8', start, end);
  try {
    return { value: JSON.parse(json), checked };
  } catch (err) {
    return { bad: `is not JSON (${(err as Error).message})` };
  }
}
