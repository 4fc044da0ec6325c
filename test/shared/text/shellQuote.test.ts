import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellQuote } from '../../../src-shared/text/shellQuote.js';

/** What a real POSIX shell makes of `word` as one argument. */
const throughSh = (word: string): string => execFileSync('sh', ['-c', `printf %s ${word}`], { encoding: 'utf8' });

const NASTY = [
  '',
  'plain',
  "it's",
  "''",
  "'",
  'a b\tc\nd',
  '$HOME `id` $(id) ${PATH}',
  '"double" \\back\\slash\\',
  '*?[a-z] ~ # ; & | < > ( ) { }',
  "-n'; rm -rf / #",
  '%s %d %%',
  'ünïcødé → 日本',
  "end with quote'",
];

describe('shellQuote', () => {
  for (const s of NASTY) {
    it(`survives sh -c as one word: ${JSON.stringify(s)}`, () => {
      expect(throughSh(shellQuote(s))).toBe(s);
    });
  }

  it('stays one argument, not several', () => {
    const count = execFileSync('sh', ['-c', `set -- ${shellQuote('a b  c')}; printf %s $#`], { encoding: 'utf8' });
    expect(count).toBe('1');
  });

  it('writes a quote as end quote, escaped quote, quote again', () => {
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
  });
});
