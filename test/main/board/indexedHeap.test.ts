import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IndexedHeap } from '../../../src-main/board/indexedHeap.js';

describe('IndexedHeap', () => {
  it('always yields the smallest priority, through sets, moves and deletes', () => {
    const op = fc.oneof(
      fc.record({ k: fc.constant('set' as const), key: fc.integer({ min: 0, max: 30 }), p: fc.integer({ min: -50, max: 50 }) }),
      fc.record({ k: fc.constant('del' as const), key: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ k: fc.constant('pop' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const heap = new IndexedHeap<number>();
        const ref = new Map<number, number>();
        for (const o of ops) {
          if (o.k === 'set') {
            heap.set(o.key, o.p);
            ref.set(o.key, o.p);
          } else if (o.k === 'del') {
            expect(heap.delete(o.key)).toBe(ref.delete(o.key));
          } else {
            const top = heap.pop();
            const min = Math.min(...ref.values());
            if (ref.size === 0) expect(top).toBeUndefined();
            else {
              expect(top?.priority).toBe(min);
              expect(ref.get(top?.key as number)).toBe(min);
              ref.delete(top?.key as number);
            }
          }
          expect(heap.size).toBe(ref.size);
          if (ref.size) expect(heap.peek()?.priority).toBe(Math.min(...ref.values()));
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('DeadlineQueue', () => {
  it('yields the earliest deadline whether deadlines come in order or not', async () => {
    const { DeadlineQueue } = await import('../../../src-main/board/deadlineQueue.js');
    const op = fc.oneof(
      // mostly "now + lease" with a creeping now, sometimes an out-of-order deadline (lease shortened)
      fc.record({ k: fc.constant('set' as const), key: fc.integer({ min: 0, max: 20 }), d: fc.integer({ min: 0, max: 5 }), jump: fc.boolean() }),
      fc.record({ k: fc.constant('del' as const), key: fc.integer({ min: 0, max: 20 }) }),
      fc.record({ k: fc.constant('pop' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const q = new DeadlineQueue();
        const ref = new Map<string, number>();
        let now = 0;
        for (const o of ops) {
          if (o.k === 'set') {
            now += o.d;
            const deadline = o.jump ? now + 1000 - 900 : now + 1000;
            q.set(String(o.key), deadline);
            ref.set(String(o.key), deadline);
          } else if (o.k === 'del') {
            q.delete(String(o.key));
            ref.delete(String(o.key));
          } else {
            const top = q.peek();
            if (!ref.size) expect(top).toBeUndefined();
            else {
              const min = Math.min(...ref.values());
              expect(top?.priority).toBe(min);
              expect(ref.get(top?.key as string)).toBe(min);
              q.delete(top?.key as string);
              ref.delete(top?.key as string);
            }
          }
          expect(q.size).toBe(ref.size);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
