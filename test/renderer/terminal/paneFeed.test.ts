import { describe, expect, it } from 'vitest';
import { AckBatcher } from '../../../src-renderer/terminal/ackBatcher.js';
import { FlowLimits } from '../../../src-shared/terminal/flowLimits.js';
import { PaneFeed, type TerminalSink } from '../../../src-renderer/terminal/paneFeed.js';

describe('AckBatcher', () => {
  it('acks in batches of the ack step, never char by char', () => {
    const step = FlowLimits.charCountAckSize;
    const fifth = step / 5;
    const sent: number[] = [];
    const b = new AckBatcher((n) => sent.push(n));
    for (let i = 0; i < 9; i++) b.parsed(fifth);
    expect(sent).toEqual([step]);
    expect(b.unsent).toBe(4 * fifth);
    b.parsed(1.5 * fifth);
    expect(sent).toEqual([step, 5.5 * fifth]);
    b.parsed(0);
    b.parsed(-3);
    b.parsed(10);
    b.flush();
    expect(sent).toEqual([step, 5.5 * fifth, 10]);
    b.flush();
    expect(sent).toHaveLength(3);
  });

  it('forgets what is pending after a reconnect', () => {
    const sent: number[] = [];
    const b = new AckBatcher((n) => sent.push(n), 100);
    b.parsed(80);
    b.reset();
    b.parsed(80);
    expect(sent).toEqual([]);
  });
});

/** A terminal whose parser runs only when told to, like xterm's asynchronous write queue. */
class FakeTerm implements TerminalSink {
  shown = '';
  queue: Array<{ data: string; parsed: () => void }> = [];
  resets = 0;
  write(data: string, parsed: () => void): void {
    this.queue.push({ data, parsed });
  }
  reset(): void {
    this.resets++;
    this.shown = '';
  }
  parseAll(): void {
    for (const w of this.queue.splice(0)) {
      this.shown += w.data;
      w.parsed();
    }
  }
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('PaneFeed: output to a terminal, with restore and acks', () => {
  it('acks from the parse callback, not on receipt', () => {
    const term = new FakeTerm();
    const acks: number[] = [];
    const feed = new PaneFeed(term, (n) => acks.push(n), 10);
    feed.data('0123456789ab');
    expect(acks).toEqual([]); // received, not parsed
    term.parseAll();
    expect(acks).toEqual([12]);
    expect(term.shown).toBe('0123456789ab');
  });

  it('writes the restored screen first, drops what raced the screen request (acking it), then goes live', async () => {
    const term = new FakeTerm();
    const acks: number[] = [];
    const feed = new PaneFeed(term, (n) => acks.push(n), 1);
    feed.data('old ');
    term.parseAll();
    acks.length = 0;
    const screen = deferred<string>();
    const restoring = feed.restore(() => screen.promise);
    expect(feed.isRestoring).toBe(true);
    feed.data('in-flight'); // already part of the screen the host is serializing
    expect(acks).toEqual([9]); // counted by the host as delivered: acked although not written
    screen.resolve('SCREEN: in-flight');
    await restoring;
    expect(feed.isRestoring).toBe(false);
    feed.data(' live');
    term.parseAll();
    expect(term.resets).toBe(1);
    expect(term.shown).toBe('SCREEN: in-flight live');
    // The screen itself is never acked: the host did not count it.
    expect(acks).toEqual([9, 5]);
  });

  it('a newer restore supersedes one still in flight', async () => {
    const term = new FakeTerm();
    const feed = new PaneFeed(term, () => undefined);
    const first = deferred<string>();
    const second = deferred<string>();
    const p1 = feed.restore(() => first.promise);
    const p2 = feed.restore(() => second.promise);
    second.resolve('new');
    await p2;
    expect(feed.isRestoring).toBe(false);
    first.resolve('stale');
    await p1;
    term.parseAll();
    expect(term.shown).toBe('new');
  });

  it('a failed screen fetch leaves live output flowing', async () => {
    const term = new FakeTerm();
    const feed = new PaneFeed(term, () => undefined);
    await expect(feed.restore(() => Promise.reject(new Error('no agent')))).rejects.toThrow('no agent');
    feed.data('x');
    term.parseAll();
    expect(term.shown).toBe('x');
  });

  it('after dispose nothing is written or acked', () => {
    const term = new FakeTerm();
    const acks: number[] = [];
    const feed = new PaneFeed(term, (n) => acks.push(n), 1);
    feed.data('a');
    feed.dispose();
    term.parseAll();
    feed.data('b');
    expect(acks).toEqual([]);
    expect(term.queue).toEqual([]);
  });
});
