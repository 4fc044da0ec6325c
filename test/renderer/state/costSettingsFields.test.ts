import { describe, expect, it } from 'vitest';
import { formatBudget, formatPrices, parseBudget, parsePrices, samePrices } from '../../../src-renderer/state/costSettingsFields.js';

/** The budget and price fields of the cost settings: what a person types, read or refused with the reason. */
describe('a budget as typed', () => {
  it('reads dollars with or without the sign, and tokens with k and M', () => {
    expect(parseBudget('5', 'usd')).toEqual({ ok: true, value: { unit: 'usd', limit: 5 } });
    expect(parseBudget(' $4.50 ', 'usd')).toEqual({ ok: true, value: { unit: 'usd', limit: 4.5 } });
    expect(parseBudget('1,000', 'usd')).toEqual({ ok: true, value: { unit: 'usd', limit: 1000 } });
    expect(parseBudget('250,000', 'tokens')).toEqual({ ok: true, value: { unit: 'tokens', limit: 250_000 } });
    expect(parseBudget('250k', 'tokens')).toEqual({ ok: true, value: { unit: 'tokens', limit: 250_000 } });
    expect(parseBudget('1.5M', 'tokens')).toEqual({ ok: true, value: { unit: 'tokens', limit: 1_500_000 } });
  });

  it('reads an empty field as no budget', () => {
    expect(parseBudget('  ', 'usd')).toEqual({ ok: true, value: null });
  });

  it('refuses nothing, negatives and words, saying what it wanted', () => {
    expect(parseBudget('0', 'usd')).toEqual({ ok: false, error: '"0" is not an amount of dollars above nothing (e.g. 5 or 4.50)' });
    expect(parseBudget('-3', 'usd').ok).toBe(false);
    expect(parseBudget('five', 'tokens')).toEqual({ ok: false, error: '"five" is not a number of tokens above nothing (e.g. 250000, 250k or 1.5M)' });
  });

  it('writes back what it reads', () => {
    for (const b of [{ unit: 'usd', limit: 4.5 }, { unit: 'tokens', limit: 250_000 }] as const) expect(parseBudget(formatBudget(b), b.unit)).toEqual({ ok: true, value: b });
    expect(formatBudget(null)).toBe('');
  });
});

describe('the Thread’s own prices as typed', () => {
  it('reads a line per model; a cache price left out is the input’s', () => {
    expect(parsePrices('my-model 3 15\n\n# a comment\nother 1 5 0.1 1.25  # trailing\n')).toEqual({
      ok: true,
      value: { 'my-model': { input: 3, output: 15, cacheRead: 3, cacheWrite: 3 }, other: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 } },
    });
  });

  it('names the line of a mistake', () => {
    expect(parsePrices('a 1 2\nb 1')).toEqual({ ok: false, error: 'line 2: a model and 2 to 4 prices (input, output, cache read, cache write), e.g. "my-model 3 15"' });
    expect(parsePrices('a 1 -2')).toEqual({ ok: false, error: 'line 1: "-2" is not a price in dollars per million tokens' });
    expect(parsePrices('a 1 2\na 3 4')).toEqual({ ok: false, error: 'line 2: a is priced on line 1 already' });
  });

  it('writes back what it reads, and compares whatever the order', () => {
    const p = { b: { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 1 }, a: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } };
    const back = parsePrices(formatPrices(p));
    expect(back).toEqual({ ok: true, value: p });
    expect(samePrices(p, { a: p.a, b: p.b })).toBe(true);
    expect(samePrices(p, { a: p.a })).toBe(false);
    expect(samePrices(undefined, {})).toBe(true);
  });
});
