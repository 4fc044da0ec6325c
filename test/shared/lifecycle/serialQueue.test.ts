import { describe, expect, it } from 'vitest';
import { SerialQueue } from '../../../src-shared/lifecycle/serialQueue.js';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('SerialQueue', () => {
  it('runs tasks one at a time in the order queued, even when later ones are quicker', async () => {
    const q = new SerialQueue();
    const log: string[] = [];
    let running = 0;
    const task = (name: string, ms: number) => async () => {
      running++;
      expect(running).toBe(1);
      log.push(`start ${name}`);
      await tick(ms);
      log.push(`end ${name}`);
      running--;
      return name;
    };
    const results = await Promise.all([q.run(task('a', 30)), q.run(task('b', 1)), q.run(task('c', 10))]);
    expect(results).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('a failing task rejects its own promise and the queue goes on', async () => {
    const q = new SerialQueue();
    const ran: string[] = [];
    const bad = q.run(async () => {
      ran.push('bad');
      throw new Error('boom');
    });
    const thrown = q.run(() => {
      ran.push('sync-throw');
      throw new Error('sync boom');
    });
    const good = q.run(() => {
      ran.push('good');
      return 42;
    });
    await expect(bad).rejects.toThrow('boom');
    await expect(thrown).rejects.toThrow('sync boom');
    await expect(good).resolves.toBe(42);
    expect(ran).toEqual(['bad', 'sync-throw', 'good']);
  });

  it('idle resolves once everything queued so far has settled, failures included', async () => {
    const q = new SerialQueue();
    let done = 0;
    void q.run(async () => {
      await tick(10);
      done++;
    });
    q.run(async () => {
      await tick(5);
      done++;
      throw new Error('late failure');
    }).catch(() => undefined);
    await q.idle();
    expect(done).toBe(2);
  });
});
