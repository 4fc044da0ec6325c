import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { firstIssue } from '../../../src-shared/board/schemas.js';

describe('firstIssue', () => {
  it('names the field once, whether or not the message already does', () => {
    const named = z.object({ title: z.string().min(1, 'title is empty') }).safeParse({ title: '' });
    const plain = z.object({ cols: z.number().max(9) }).safeParse({ cols: 10 });
    if (named.success || plain.success) throw new Error('both must fail');
    expect(firstIssue(named.error)).toBe('title is empty');
    expect(firstIssue(plain.error)).toMatch(/^cols: /);
  });

  it('takes a field named by the caller (a record key) as text, not as a pattern', () => {
    // Found by the pty host fuzz: a key like this made `new RegExp` throw, out of the validator.
    const env = z.record(z.string(), z.string()).safeParse({ '^^L;(7yk': 1, '[': 2 });
    if (env.success) throw new Error('must fail');
    expect(firstIssue(env.error)).toMatch(/^\^\^L;\(7yk: /);
  });
});
