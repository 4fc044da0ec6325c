import { afterEach, describe, expect, it, vi } from 'vitest';
import { OutputBatcher } from '../../../src-main/pty/outputBatcher.js';
import type { Timers } from '../../../src-main/base/timers.js';

afterEach(() => vi.useRealTimers());

/** Injected timers and clock that move only when the test advances them, timers firing at their due time. */
function manualClock() {
  let now = 0;
  let next = 1;
  const due = new Map<number, { at: number; fn: () => void }>();
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      const h = next++;
      due.set(h, { at: now + ms, fn });
      return h;
    },
    clearTimeout: (h) => void due.delete(h as number),
  };
  const advance = (ms: number) => {
    const until = now + ms;
    for (;;) {
      const first = [...due].filter(([, d]) => d.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (!first) break;
      due.delete(first[0]);
      now = first[1].at;
      first[1].fn();
    }
    now = until;
  };
  return { timers, now: () => now, advance, pending: () => due.size };
}

describe('OutputBatcher', () => {
  it('flushes the first chunk at once and batches what follows within the interval', () => {
    const t = manualClock();
    const flushed: string[] = [];
    const b = new OutputBatcher((d) => flushed.push(`${d}@${t.now()}`), { delayMs: 5, timers: t.timers, now: t.now });
    b.push('a'); // nothing sent before: at once
    expect(flushed).toEqual(['a@0']);
    t.advance(1);
    b.push('b');
    t.advance(2);
    b.push('c');
    expect(flushed).toEqual(['a@0']);
    t.advance(1);
    expect(flushed).toEqual(['a@0']);
    t.advance(1); // 5 ms after the last flush
    expect(flushed).toEqual(['a@0', 'bc@5']);
    t.advance(1);
    b.push('d'); // 1 ms after a flush: batched until 5 ms after it
    t.advance(3);
    expect(flushed).toEqual(['a@0', 'bc@5']);
    t.advance(1);
    expect(flushed).toEqual(['a@0', 'bc@5', 'd@10']);
    t.advance(5);
    b.push('e'); // exactly the interval since the last flush: at once
    expect(flushed).toEqual(['a@0', 'bc@5', 'd@10', 'e@15']);
    expect(t.pending()).toBe(0);
    b.dispose();
  });

  it('a flood is still at most one flush per interval, and nothing waits longer than the interval', () => {
    const t = manualClock();
    const at: number[] = [];
    const b = new OutputBatcher(() => at.push(t.now()), { delayMs: 5, timers: t.timers, now: t.now });
    for (let i = 0; i < 100; i++) {
      b.push('x');
      t.advance(1);
    }
    t.advance(5);
    expect(at[0]).toBe(0);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBe(5);
    expect(at.length).toBe(21); // chunks at 0..99 ms: flushes at 0, 5, ..., 100, i.e. 21 messages, not 100
    expect(b.pendingChars).toBe(0);
  });

  it('a batch that reaches maxBatchChars goes out at once, even within the interval', () => {
    const t = manualClock();
    const sizes: number[] = [];
    const b = new OutputBatcher((d) => sizes.push(d.length), { delayMs: 5, maxBatchChars: 10_000, timers: t.timers, now: t.now });
    for (let i = 0; i < 11; i++) b.push('y'.repeat(4_096)); // eleven pty reads in the same instant
    expect(sizes).toEqual([4_096, 12_288, 12_288, 12_288]);
    expect(b.pendingChars).toBe(4_096);
    t.advance(5);
    expect(sizes).toEqual([4_096, 12_288, 12_288, 12_288, 4_096]);
  });

  it('expedite() emits the open batch and lets the next chunk go at once (flow control resumed)', () => {
    const t = manualClock();
    const flushed: string[] = [];
    const b = new OutputBatcher((d) => flushed.push(`${d}@${t.now()}`), { delayMs: 5, timers: t.timers, now: t.now });
    b.push('a');
    t.advance(1);
    b.push('b');
    b.expedite();
    expect(flushed).toEqual(['a@0', 'b@1']);
    expect(t.pending()).toBe(0);
    t.advance(1);
    b.push('c'); // 1 ms after a flush, yet at once
    expect(flushed).toEqual(['a@0', 'b@1', 'c@2']);
    t.advance(1);
    b.push('d'); // back to batching
    expect(flushed).toEqual(['a@0', 'b@1', 'c@2']);
    t.advance(4);
    expect(flushed).toEqual(['a@0', 'b@1', 'c@2', 'd@7']);
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
    b.push('x'); // the first chunk goes at once
    b.push('y'); // this one waits in the batch
    b.dispose();
    vi.advanceTimersByTime(100);
    expect(flushed).toEqual(['x']);
    expect(vi.getTimerCount()).toBe(0);
  });
});
