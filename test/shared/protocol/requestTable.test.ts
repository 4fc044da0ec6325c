import { describe, expect, it } from 'vitest';
import { RequestTable } from '../../../src-shared/protocol/requestTable.js';
import { manualTimers } from '../../helpers/manualTimers.js';

/** A table whose sends are recorded, with timers the test fires by hand. */
function table(o: { timeoutMs?: number | null; keepAbandoned?: boolean } = {}) {
  const clock = manualTimers();
  const requests = new RequestTable<string>({
    timers: clock.timers,
    timeoutMs: o.timeoutMs === undefined ? 1000 : o.timeoutMs,
    timedOut: (m, ms) => new Error(`${m} not answered within ${ms} ms`),
    keepAbandoned: o.keepAbandoned,
  });
  const sent: Array<{ id: number; m: string }> = [];
  const ask = <T = unknown>(m: string, then: (v: unknown) => T = (v) => v as T, timeoutMs?: number | null) =>
    requests.request(m, (id) => sent.push({ id, m }), then, timeoutMs);
  return { clock, requests, sent, ask };
}

/** How a promise stands now, without waiting for it to settle. */
async function state<T>(p: Promise<T>): Promise<{ value: T } | { error: Error } | 'pending'> {
  const pending = Symbol('pending');
  const r = await Promise.race([p.then((value) => ({ value }), (error: Error) => ({ error })), Promise.resolve().then(() => pending)]);
  return r === pending ? 'pending' : (r as { value: T } | { error: Error });
}

describe('RequestTable: the one request/answer core of the CLI, the pty host link and the page', () => {
  it('answers out of order reach the requests they answer, by id', async () => {
    const { requests, sent, ask } = table();
    const a = ask('a');
    const b = ask('b');
    const c = ask('c');
    expect(sent.map((s) => s.m)).toEqual(['a', 'b', 'c']);
    expect(new Set(sent.map((s) => s.id)).size).toBe(3);
    const id = (m: string) => sent.find((s) => s.m === m)?.id as number;
    requests.take(id('c'))?.resolve('for c');
    requests.take(id('a'))?.resolve('for a');
    requests.take(id('b'))?.reject(new Error('b refused'));
    expect(await c).toBe('for c');
    expect(await a).toBe('for a');
    await expect(b).rejects.toThrow('b refused');
    expect(requests.size).toBe(0);
    // An id answered twice, or never asked, finds nobody waiting.
    expect(requests.take(id('a'))).toBeUndefined();
    expect(requests.take(999)).toBeUndefined();
  });

  it('gives a request up at its bound on the injected clock, and not before; an answer clears its timer', async () => {
    const { clock, requests, sent, ask } = table({ timeoutMs: 1000 });
    const slow = ask('slow');
    const quick = ask('quick');
    const own = ask('own', undefined, 50);
    expect(clock.delays().sort((x, y) => x - y)).toEqual([50, 1000, 1000]);
    requests.take(sent[1]?.id as number)?.resolve(1);
    expect(await quick).toBe(1);
    // The answered request's timer is gone: only the two still waiting have theirs.
    expect(clock.delays().sort((x, y) => x - y)).toEqual([50, 1000]);
    expect(await state(slow)).toBe('pending');
    clock.fire((ms) => ms === 50);
    await expect(own).rejects.toThrow('own not answered within 50 ms');
    expect(await state(slow)).toBe('pending');
    clock.fire();
    await expect(slow).rejects.toThrow('slow not answered within 1000 ms');
    expect(requests.size).toBe(0);
  });

  it('a request with no bound waits until it is answered or its link goes', async () => {
    const { clock, requests, sent, ask } = table({ timeoutMs: null });
    const p = ask('merge');
    expect(clock.size()).toBe(0);
    requests.take(sent[0]?.id as number)?.resolve('merged');
    expect(await p).toBe('merged');
  });

  it('an answer to a request given up on is told apart from an answer to nothing, once', async () => {
    const { clock, requests, sent, ask } = table({ keepAbandoned: true });
    const p = ask('spawn');
    clock.fire();
    await expect(p).rejects.toThrow('spawn not answered');
    const id = sent[0]?.id as number;
    expect(requests.take(id)).toBeUndefined();
    expect(requests.late(id)).toBe('spawn');
    expect(requests.late(id)).toBeUndefined();
    expect(requests.late(12345)).toBeUndefined();
  });

  it('a connection that closes with requests pending fails every one of them, clears their timers, and takes new ones after', async () => {
    const { clock, requests, sent, ask } = table({ keepAbandoned: true });
    const given = ask('given-up');
    clock.fire();
    await expect(given).rejects.toThrow('not answered');
    const pending = [ask('a'), ask('b'), ask('c')];
    expect(requests.size).toBe(3);
    requests.failAll(new Error('the connection closed'));
    for (const p of pending) await expect(p).rejects.toThrow('the connection closed');
    expect(requests.size).toBe(0);
    expect(clock.size()).toBe(0);
    // Nothing of the old connection is remembered: not even the request given up on.
    expect(requests.late(sent[0]?.id as number)).toBeUndefined();
    // A reconnected link goes on with the same table, under new ids.
    const next = ask('after');
    const last = sent.at(-1);
    expect(last?.m).toBe('after');
    expect(sent.filter((s) => s.id === last?.id)).toHaveLength(1);
    requests.take(last?.id as number)?.resolve('ok');
    expect(await next).toBe('ok');
  });

  it('a send that throws fails its request with what was thrown, and leaves nothing waiting', async () => {
    const clock = manualTimers();
    const requests = new RequestTable<string>({ timers: clock.timers, timeoutMs: 1000 });
    const p = requests.request(
      'x',
      () => {
        throw new Error('socket closed under us');
      },
      (v) => v,
    );
    await expect(p).rejects.toThrow('socket closed under us');
    expect(requests.size).toBe(0);
    expect(clock.size()).toBe(0);
  });

  it("runs the answer's mapping as the answer is settled, before the reader handles anything after it", async () => {
    const { requests, sent, ask } = table();
    const seen: string[] = [];
    const p = ask('spawn', (v) => {
      seen.push(`made pane ${String(v)}`);
      return v;
    });
    requests.take(sent[0]?.id as number)?.resolve(7);
    // The reader's next frame, in the same turn: the pane it names exists already.
    seen.push('output of pane 7');
    expect(seen).toEqual(['made pane 7', 'output of pane 7']);
    expect(await p).toBe(7);
  });

  it('a mapping that throws fails its request instead of the reader', async () => {
    const { requests, sent, ask } = table();
    const p = ask('list', () => {
      throw new Error('not a listing');
    });
    expect(() => requests.take(sent[0]?.id as number)?.resolve({})).not.toThrow();
    await expect(p).rejects.toThrow('not a listing');
  });
});
