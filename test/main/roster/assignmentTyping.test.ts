import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PaneTypist, TypingConstants } from '../../../src-main/roster/assignmentTyping.js';

/** A pane that records what was written to it, on a clock the test moves with the fake timers. */
function fakePane() {
  const writes: string[] = [];
  const shown: string[] = [];
  return {
    writes,
    shown,
    pane: { write: (d: string) => void writes.push(d), asPaste: (t: string) => t, showNotice: async (t: string) => void shown.push(t), lastOutputAt: -Infinity },
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

  it('a person who types between a pasted message and its Enter gets the Enter first: the message stays a line of its own', async () => {
    const { pane, writes } = fakePane();
    const typist = new PaneTypist(pane, 'typed', 300, now);
    let entered = false;
    void typist.say('T-1 was taken from you').then(() => (entered = true));
    advance(TypingConstants.pollMs);
    expect(writes).toEqual(['T-1 was taken from you']);
    // The Enter waits for the echo to settle; the person types now.
    typist.noteInput();
    pane.write('echo hi\r');
    advance(TypingConstants.echoMaxMs);
    expect(writes).toEqual(['T-1 was taken from you', '\r', 'echo hi\r']);
    await Promise.resolve();
    expect(entered).toBe(true);
    typist.dispose();
  });

  it('waits while the person types, and types nothing after dispose', () => {
    const { pane, writes } = fakePane();
    const typist = new PaneTypist(pane, 'typed', 300, now);
    typist.noteInput();
    void typist.say('assigned T-2');
    advance(TypingConstants.pollMs);
    expect(writes).toEqual([]);
    typist.dispose();
    advance(10_000);
    typist.noteInput();
    expect(writes).toEqual([]);
  });

  it('a profile shown its notices gets them in its output at once, whoever types: nothing is ever written to its input', async () => {
    const { pane, writes, shown } = fakePane();
    const typist = new PaneTypist(pane, 'shown', 300, now);
    typist.noteInput();
    await typist.say('T-3 "x; touch /tmp/y" was assigned');
    expect(shown).toEqual(['T-3 "x; touch /tmp/y" was assigned']);
    advance(10_000);
    expect(writes).toEqual([]);
    typist.dispose();
  });
});
