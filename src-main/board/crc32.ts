/**
 * CRC-32 (IEEE 802.3, the one zlib, gzip and PNG use), for the journal's per-record checksums. Chosen over
 * a hash prefix because it is built to catch exactly the damage a disk or a copy does to a line: every
 * single-bit error and every burst up to 32 bits, and any other change but 1 in 2^32. It is no defence
 * against someone who edits the file on purpose, and need not be: whoever can write the journal can write
 * a matching checksum. zlib.crc32 computes it natively, but Node has it only since 20.15 while Forkbench
 * supports 20.11: so it is also written out here (a 1 KiB table), and the native one used where it exists.
 */
import * as zlib from 'node:zlib';

/** The reflected IEEE polynomial. */
const POLY = 0xedb88320;

const TABLE = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? POLY ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
})();

/** The CRC-32 of `bytes[from, to)`, continuing from `crc` (the CRC of the bytes before them, 0 at the start). */
export function crc32(bytes: Uint8Array, from = 0, to = bytes.length, crc = 0): number {
  let c = ~crc;
  for (let i = from; i < to; i++) c = (TABLE[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return ~c >>> 0;
}

/** zlib's, where this Node has it: a few times faster per event appended than the loop below. */
const native = (zlib as { crc32?: (data: string | Uint8Array, value?: number) => number }).crc32;

/** crc32, by zlib where this Node has it: a snapshot file of a large board is hundreds of MB. */
export function crc32OfBytes(bytes: Uint8Array, from = 0, to = bytes.length, crc = 0): number {
  return native ? native(bytes.subarray(from, to), crc) : crc32(bytes, from, to, crc);
}

/** The CRC-32 of the string's UTF-8 bytes, as Buffer.from(s) would encode them (a lone surrogate as U+FFFD):
 *  the journal checksums every event it appends. */
export const crc32OfString: (s: string) => number = native ? (s) => native(s) : crc32Utf8;

/** crc32OfString without zlib, and without making the buffer. Exported for its test. */
export function crc32Utf8(s: string): number {
  let c = ~0;
  const put = (b: number) => {
    c = (TABLE[(c ^ b) & 0xff] as number) ^ (c >>> 8);
  };
  for (let i = 0; i < s.length; i++) {
    let u = s.charCodeAt(i);
    if (u < 0x80) {
      c = (TABLE[(c ^ u) & 0xff] as number) ^ (c >>> 8); // the common case, inline
      continue;
    }
    if (u >= 0xd800 && u <= 0xdfff) {
      const lo = s.charCodeAt(i + 1);
      if (u <= 0xdbff && lo >= 0xdc00 && lo <= 0xdfff) {
        u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
        i++;
      } else u = 0xfffd;
    }
    if (u < 0x800) {
      put(0xc0 | (u >> 6));
    } else if (u < 0x10000) {
      put(0xe0 | (u >> 12));
      put(0x80 | ((u >> 6) & 0x3f));
    } else {
      put(0xf0 | (u >> 18));
      put(0x80 | ((u >> 12) & 0x3f));
      put(0x80 | ((u >> 6) & 0x3f));
    }
    put(0x80 | (u & 0x3f));
  }
  return ~c >>> 0;
}
