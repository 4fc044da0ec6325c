import { describe, expect, it } from 'vitest';
import { SequenceState } from '../../../src-main/pty/sequenceState.js';

/** Whether the stream is at rest after each of `reads`, fed in order. */
function restsAfter(...reads: string[]): boolean[] {
  const s = new SequenceState();
  return reads.map((r) => {
    s.feed(r);
    return s.atRest;
  });
}

describe('SequenceState: whether a pane’s output stops between escape sequences', () => {
  it('text, and whole sequences of every kind, leave it at rest', () => {
    expect(restsAfter('plain text\r\n', '\x1b[1;31mred\x1b[0m', '\x1b]0;title\x07', '\x1b]8;;http://x\x1b\\link', '\x1bP+q544e\x1b\\', '\x1b(B', '\x1b7\x1b8', '\x9b2J', '\x9d0;t\x9c')).toEqual(
      Array(9).fill(true),
    );
  });

  it('a read that stops inside a sequence is not at rest until the read that ends it', () => {
    expect(restsAfter('a\x1b', '[3', '1m')).toEqual([false, false, true]);
    expect(restsAfter('\x1b]0;half a ti', 'tle', '\x07 after')).toEqual([false, false, true]);
    // ST split across reads: its ESC alone could start anything
    expect(restsAfter('\x1b]8;;url\x1b', '\\')).toEqual([false, true]);
    expect(restsAfter('\x1bP1$r', 'q\x1b\\')).toEqual([false, true]);
    expect(restsAfter('\x1b(', 'B')).toEqual([false, true]);
    expect(restsAfter('\x9b', '6n')).toEqual([false, true]);
  });

  it('CAN and SUB abort a sequence; an ESC inside one starts the next', () => {
    expect(restsAfter('\x1b[12\x18')).toEqual([true]);
    expect(restsAfter('\x1b]0;x\x1a')).toEqual([true]);
    expect(restsAfter('\x1b]0;x\x1b[', '1m')).toEqual([false, true]);
    // BEL ends an OSC, not a CSI (where it is executed and the CSI goes on)
    expect(restsAfter('\x1b[1\x07', 'm')).toEqual([false, true]);
  });
});
