import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FrameTooLarge, LineSplitter } from '../../../src-shared/protocol/jsonrpc.js';

/** `text` cut at the given offsets (sorted, deduplicated, inside the text). */
function cut(text: string, at: number[]): string[] {
  const points = [...new Set(at.map((a) => a % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of points) {
    out.push(text.slice(from, p));
    from = p;
  }
  out.push(text.slice(from));
  return out;
}

describe('LineSplitter', () => {
  it('gives the same lines however the stream is cut into chunks', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 20 }), { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 12 }), (lines, at) => {
        const text = lines.map((l) => l.replace(/\n/g, '') + '\n').join('');
        const s = new LineSplitter();
        const got = cut(text, at).flatMap((chunk) => s.push(chunk));
        expect(got).toEqual(lines.map((l) => l.replace(/\n/g, '')));
      }),
      { seed: 16, numRuns: 500 },
    );
  });

  it('refuses a pending line once it is over the limit, even when it arrived in small chunks', () => {
    const s = new LineSplitter(10);
    expect(s.push('12345')).toEqual([]);
    expect(s.push('67890')).toEqual([]);
    expect(() => s.push('1')).toThrow(FrameTooLarge);
    const t = new LineSplitter(10);
    expect(t.push('1234567890\nab')).toEqual(['1234567890']);
    expect(() => t.push('c\n12345678901\n')).toThrow(FrameTooLarge);
  });
});
