import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PaneTypist, TypingConstants } from '../../../src-main/roster/assignmentTyping.js';

/** A pane that records what was written to it, on a clock the test moves with the fake timers. */
function fakePane() {
  const writes: string[] = [];
  return {
    writes,
    pane: { write: (d: string) => void writes.push(d), asPaste: (t: string) => t, lastOutputAt: -Infinity },
  };
}

describe('PaneTypist', () => {
  let clock = 0;
  const now = () => clock;
  const advance = (ms: number) => {
    clock += ms;
    vi.advanceTimersByTime(ms);
  };
  beforeEach(() => {
    vi.useFakeTimers();
    clock = 10_000;
  });
  afterEach(() => vi.useRealTimers());

  it('a person who types between a pasted message and its Enter gets the Enter first: the message stays a line of its own', () => {
    const { pane, writes } = fakePane();
    const typist = new PaneTypist(pane, true, 300, now);
    typist.say('T-1 was taken from you');
    advance(TypingConstants.pollMs);
    expect(writes).toEqual(['# T-1 was taken from you']);
    // The Enter waits for the echo to settle; the person types now.
    typist.noteInput();
    pane.write('echo hi\r');
    advance(TypingConstants.echoMaxMs);
    expect(writes).toEqual(['# T-1 was taken from you', '\r', 'echo hi\r']);
    typist.dispose();
  });

  it('waits while the person types, and types nothing after dispose', () => {
    const { pane, writes } = fakePane();
    const typist = new PaneTypist(pane, false, 300, now);
    typist.noteInput();
    typist.say('assigned T-2');
    advance(TypingConstants.pollMs);
    expect(writes).toEqual([]);
    typist.dispose();
    advance(10_000);
    typist.noteInput();
    expect(writes).toEqual([]);
  });
});
