import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChunkedWriter, splitInput, tokenizeInput } from '../../../src-main/pty/inputChunker.js';

afterEach(() => vi.useRealTimers());

/** Input atoms whose concatenation tokenizes back into exactly these atoms: plain characters (no ESC),
 *  astral characters, and complete escape sequences of every family the chunker knows. */
const plainChar = fc.constantFrom(...'abcdefghij XYZ0123456789\r\n\t[]O;~é€'.split(''));
const astral = fc.constantFrom('😀', '🎉', '𝄞');
const csi = fc
  .tuple(fc.constantFrom('', '?', '>'), fc.array(fc.integer({ min: 0, max: 9999 }), { maxLength: 4 }), fc.constantFrom('A', 'B', 'm', '~', 'H', 'u'))
  .map(([prefix, params, final]) => `\x1b[${prefix}${params.join(';')}${final}`);
const ss3 = fc.constantFrom('\x1bOA', '\x1bOB', '\x1bOP');
const osc = fc
  .tuple(fc.string({ unit: fc.constantFrom(...'abc012;/:'.split('')), maxLength: 120 }), fc.constantFrom('\x07', '\x1b\\'))
  .map(([body, st]) => `\x1b]52;c;${body}${st}`);
const alt = fc.constantFrom('\x1bx', '\x1b.', '\x1b ', '\x1b\r', '\x1b\x1b[A', '\x1b\x1bOA', '\x1b7', '\x1b😀');
const bracketed = fc.constantFrom('\x1b[200~', '\x1b[201~');
const atom = fc.oneof(
  { weight: 10, arbitrary: plainChar },
  { weight: 1, arbitrary: astral },
  { weight: 2, arbitrary: csi },
  { weight: 1, arbitrary: ss3 },
  { weight: 1, arbitrary: osc },
  { weight: 1, arbitrary: alt },
  { weight: 1, arbitrary: bracketed },
);

describe('tokenizeInput', () => {
  it('keeps each escape sequence and surrogate pair whole', () => {
    expect(tokenizeInput('a\x1b[1;5Ab😀\x1bOP\x1b]0;title\x07\x1bx')).toEqual([
      'a', '\x1b[1;5A', 'b', '😀', '\x1bOP', '\x1b]0;title\x07', '\x1bx',
    ]);
  });

  it('keeps an unterminated sequence together with its ESC', () => {
    expect(tokenizeInput('ab\x1b[12')).toEqual(['a', 'b', '\x1b[12']);
    expect(tokenizeInput('\x1b]0;no terminator')).toEqual(['\x1b]0;no terminator']);
    expect(tokenizeInput('x\x1b')).toEqual(['x', '\x1b']);
    expect(tokenizeInput('\x1b[')).toEqual(['\x1b[']);
  });

  it('ends a CSI at a control character, which starts the next token', () => {
    expect(tokenizeInput('\x1b[1\x1b[2A')).toEqual(['\x1b[1', '\x1b[2A']);
  });

  it('round-trips generated input atom for atom', () => {
    fc.assert(fc.property(fc.array(atom, { maxLength: 80 }), (atoms) => {
      expect(tokenizeInput(atoms.join(''))).toEqual(atoms.flatMap((a) => (a.startsWith('\x1b') ? [a] : [...a].flatMap((c) => (c.length === 2 ? [c] : c.split(''))))));
    }));
  });
});

describe('splitInput', () => {
  it('leaves short input alone and splits long input into chunks of at most 50', () => {
    expect(splitInput('')).toEqual([]);
    expect(splitInput('hello')).toEqual(['hello']);
    const long = 'x'.repeat(120);
    expect(splitInput(long)).toEqual(['x'.repeat(50), 'x'.repeat(50), 'x'.repeat(20)]);
  });

  it('moves a sequence that would straddle the limit into the next chunk', () => {
    const chunks = splitInput('a'.repeat(48) + '\x1b[1;5A' + 'b');
    expect(chunks).toEqual(['a'.repeat(48), '\x1b[1;5Ab']);
  });

  it('gives a sequence longer than the limit a chunk of its own rather than splitting it', () => {
    const oscSeq = `\x1b]52;c;${'Q'.repeat(200)}\x07`;
    expect(splitInput(`ab${oscSeq}cd`)).toEqual(['ab', oscSeq, 'cd']);
  });

  it('property: chunks rejoin to the input, stay within 50 unless one atom, and only cut between atoms', () => {
    fc.assert(
      fc.property(fc.array(atom, { maxLength: 200 }), fc.integer({ min: 8, max: 60 }), (atoms, max) => {
        const input = atoms.join('');
        const chunks = splitInput(input, max);
        expect(chunks.join('')).toBe(input);
        const boundaries = new Set<number>([0]);
        let at = 0;
        for (const a of atoms) {
          // Plain atoms are single characters; an astral character is one atom of two code units.
          at += a.length;
          boundaries.add(at);
        }
        let pos = 0;
        for (const chunk of chunks) {
          expect(chunk.length).toBeGreaterThan(0);
          if (chunk.length > max) expect(atoms).toContain(chunk); // only a single oversized atom may exceed
          pos += chunk.length;
          expect(boundaries.has(pos), `cut at ${pos} is inside an atom`).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('ChunkedWriter', () => {
  it('writes the first chunk at once and spaces the rest', () => {
    vi.useFakeTimers();
    const written: string[] = [];
    const w = new ChunkedWriter((c) => written.push(c), { intervalMs: 5 });
    w.write('y'.repeat(120));
    expect(written).toEqual(['y'.repeat(50)]);
    vi.advanceTimersByTime(5);
    expect(written.length).toBe(2);
    w.write('tail');
    vi.advanceTimersByTime(5);
    vi.advanceTimersByTime(5);
    expect(written).toEqual(['y'.repeat(50), 'y'.repeat(50), 'y'.repeat(20), 'tail']);
    expect(w.pendingChunks).toBe(0);
    w.dispose();
  });

  it('a keystroke after the queue drained goes out immediately', () => {
    vi.useFakeTimers();
    const written: string[] = [];
    const w = new ChunkedWriter((c) => written.push(c));
    w.write('a');
    w.write('b');
    expect(written).toEqual(['a', 'b']);
  });

  it('dispose drops the queue and clears its timer', () => {
    vi.useFakeTimers();
    const written: string[] = [];
    const w = new ChunkedWriter((c) => written.push(c));
    w.write('z'.repeat(500));
    w.dispose();
    vi.advanceTimersByTime(1000);
    expect(written.length).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});
