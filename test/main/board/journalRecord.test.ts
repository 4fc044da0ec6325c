import fc from 'fast-check';
import * as zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32, crc32Utf8 } from '../../../src-main/board/crc32.js';
import { decodeLine, encodeLine } from '../../../src-main/board/journalRecord.js';

describe('journal records', () => {
  it('CRC-32 matches zlib’s, over bytes, in pieces and over a string’s UTF-8', () => {
    expect(crc32(Buffer.from('123456789')).toString(16)).toBe('cbf43926'); // the check value of CRC-32/ISO-HDLC
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.nat(200), (s, cut) => {
        const b = Buffer.from(s);
        const at = Math.min(cut, b.length);
        expect(crc32(b)).toBe(zlib.crc32(b));
        expect(crc32(b, at, b.length, crc32(b, 0, at))).toBe(zlib.crc32(b));
        expect(crc32Utf8(s)).toBe(zlib.crc32(b));
      }),
    );
  });

  it('a line decodes back to its value, without the checksum; any one byte changed is caught', () => {
    fc.assert(
      fc.property(fc.record({ seq: fc.nat(), kind: fc.constant('note'), text: fc.string({ unit: 'binary', maxLength: 60 }) }), fc.nat(), fc.integer({ min: 1, max: 255 }), (e, pos, xor) => {
        const line = Buffer.from(encodeLine(e));
        expect(line.at(-1)).toBe(0x0a);
        expect(decodeLine(line, 0, line.length - 1)).toEqual({ value: e, checked: true });
        const i = pos % (line.length - 1);
        const damaged = Buffer.from(line);
        damaged[i] = (damaged[i] as number) ^ xor;
        const d = decodeLine(damaged, 0, damaged.length - 1);
        // caught: a bad line, or (the checksum member itself mangled out of shape) a line without one
        expect('bad' in d || !d.checked).toBe(true);
      }),
    );
  });
});
