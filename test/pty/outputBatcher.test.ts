import { afterEach, describe, expect, it, vi } from 'vitest';
import { OutputBatcher } from '../../src-main/pty/outputBatcher.js';

afterEach(() => vi.useRealTimers());

describe('OutputBatcher', () => {
  it('merges chunks that arrive within the delay into one flush', () => {
    vi.useFakeTimers();
    const flushed: string[] = [];
    const b = new OutputBatcher((d) => flushed.push(d), { delayMs: 5 });
    b.push('a');
    b.push('b');
    vi.advanceTimersByTime(4);
    expect(flushed).toEqual([]);
    b.push('c');
    vi.advanceTimersByTime(1);
    expect(flushed).toEqual(['abc']);
    b.push('d');
    vi.advanceTimersByTime(5);
    expect(flushed).toEqual(['abc', 'd']);
    b.dispose();
  });

  it('reassembles UTF-8 characters split across byte chunks', () => {
    const text = 'é€😀 ok';
    const bytes = Buffer.from(text, 'utf8');
    // Every split point, including the middle of the 2-, 3- and 4-byte characters.
    for (let cut = 1; cut < bytes.length; cut++) {
      const flushed: string[] = [];
      const b = new OutputBatcher((d) => flushed.push(d));
      b.push(bytes.subarray(0, cut));
      b.push(bytes.subarray(cut));
      b.flush();
      expect(flushed.join(''), `cut at byte ${cut}`).toBe(text);
      b.dispose();
    }
  });

  it('decodes one byte at a time without a replacement character', () => {
    const text = 'Grüße, 世界 🎉';
    const flushed: string[] = [];
    const b = new OutputBatcher((d) => flushed.push(d));
    for (const byte of Buffer.from(text, 'utf8')) b.push(Uint8Array.of(byte));
    b.end();
    expect(flushed.join('')).toBe(text);
    expect(flushed.join('')).not.toContain('\ufffd');
  });

  it('emits an incomplete trailing sequence as U+FFFD only at end()', () => {
    const flushed: string[] = [];
    const b = new OutputBatcher((d) => flushed.push(d));
    b.push(Buffer.from([0x61, 0xe2, 0x82])); // 'a' + 2 of the 3 bytes of '€'
    b.flush();
    expect(flushed).toEqual(['a']);
    b.end();
    expect(flushed.join('')).toBe('a\ufffd');
  });

  it('drops pending output and its timer on dispose', () => {
    vi.useFakeTimers();
    const flushed: string[] = [];
    const b = new OutputBatcher((d) => flushed.push(d));
    b.push('x');
    b.dispose();
    vi.advanceTimersByTime(100);
    expect(flushed).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
