import { describe, expect, it } from 'vitest';
import { FlowControl } from '../../../src-main/pty/flowControl.js';
import { OutputBatcherConstants } from '../../../src-main/pty/outputBatcher.js';
import { AckBatcher } from '../../../src-renderer/terminal/ackBatcher.js';
import { FlowLimits } from '../../../src-shared/terminal/flowLimits.js';

const { highWatermarkChars: HIGH, lowWatermarkChars: LOW, charCountAckSize: STEP } = FlowLimits;
/** The largest message the host sends a window, i.e. the most one read can add past the high mark. */
const MAX_MESSAGE = OutputBatcherConstants.maxBatchChars;
/** A 20 MB `cat`, the flood bench/browserBench.ts measures. */
const FLOOD = 20_000_000;
/** The page parses about a third of what the pty can produce per tick (TOOLCHAIN: ~35 vs ~100 MB/s), so
 *  the backlog builds and the watermarks are what paces the flood. */
const PARSE_PER_TICK = Math.floor(MAX_MESSAGE / 3);

interface FloodResult {
  parsed: number;
  stalled: boolean;
  maxUnacked: number;
  pauses: number;
}

/**
 * The host's FlowControl and the page's AckBatcher, wired as the transport wires them: each tick the pty
 * reads a message unless paused, and the page parses a share of its queue, reporting each message to its
 * AckBatcher once the whole of it is parsed (xterm's write callback); the batcher's acks go to FlowControl.
 * Message sizes vary so the batcher holds back partial acks of every size.
 */
function flood(step: number): FloodResult {
  let pauses = 0;
  const fc = new FlowControl({ pause: () => pauses++, resume: () => undefined });
  fc.addConsumer('window');
  const acks = new AckBatcher((n) => fc.ack('window', n), step);
  const queue: number[] = [];
  let headParsed = 0;
  let delivered = 0;
  let parsed = 0;
  let maxUnacked = 0;
  // A fixed linear congruential sequence: the same message sizes on every run.
  let seed = 17;
  const nextSize = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return 1 + (seed % MAX_MESSAGE);
  };
  while (parsed < FLOOD) {
    if (!fc.isPaused && delivered < FLOOD) {
      const n = Math.min(nextSize(), FLOOD - delivered);
      delivered += n;
      queue.push(n);
      fc.onDelivered(n);
    }
    maxUnacked = Math.max(maxUnacked, fc.maxUnacked);
    // Paused with nothing left to parse: no ack will come, so the pty never reads again.
    if (queue.length === 0 && fc.isPaused) return { parsed, stalled: true, maxUnacked, pauses };
    let budget = PARSE_PER_TICK;
    while (budget > 0 && queue.length) {
      const take = Math.min(budget, queue[0]! - headParsed);
      budget -= take;
      headParsed += take;
      parsed += take;
      if (headParsed === queue[0]) {
        acks.parsed(queue.shift()!);
        headParsed = 0;
      }
    }
  }
  return { parsed, stalled: false, maxUnacked, pauses };
}

describe('the shared flow limits (host FlowControl fed by the page AckBatcher)', () => {
  it('acks in steps below the low watermark', () => {
    expect(STEP).toBeLessThan(LOW);
    expect(LOW).toBeLessThan(HIGH);
  });

  it('a flood never stalls and the backlog stays within the high watermark plus one message', () => {
    const r = flood(STEP);
    expect(r.stalled).toBe(false);
    expect(r.parsed).toBe(FLOOD);
    expect(r.maxUnacked).toBeLessThanOrEqual(HIGH + MAX_MESSAGE);
    // The page is slower than the pty, so the watermarks, not luck, paced the flood.
    expect(r.pauses).toBeGreaterThan(10);
  });

  it('the same flood stalls when the page acks in steps above the low watermark (what the rule prevents)', () => {
    // Two windows' worth: a paused pane's whole backlog can sit in the batcher, short of one step, for good.
    const r = flood(2 * HIGH);
    expect(r.stalled).toBe(true);
    expect(r.parsed).toBeLessThan(FLOOD);
  });
});
