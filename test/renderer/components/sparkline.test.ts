import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { NO_TOKENS, type TaskCost } from '../../../src-shared/usage/usage.js';
import { Sparkline } from '../../../src-renderer/components/Sparkline.js';

/** The details panel's sparkline as React draws it: an image with a name in words, one polyline, no library. */
describe('the sparkline element', () => {
  const cost: TaskCost = { tokens: NO_TOKENS, usd: 0.3, unpriced: 0, turns: 2, byAgent: {}, spend: [[0, 0.1, 10], [60_000, 0.3, 30]] };

  it('is an img whose accessible name says what the line shows, with the same words as its title', () => {
    const html = renderToStaticMarkup(createElement(Sparkline, { cost, testId: 'spark' }));
    expect(html).toContain('role="img"');
    expect(html).toContain('aria-label="Spend over 1 min: from $0.10 to $0.30 in 2 steps"');
    expect(html).toContain('<title>Spend over 1 min: from $0.10 to $0.30 in 2 steps</title>');
    expect(html).toContain('data-series="usd"');
    expect(html.match(/<polyline points="([^"]+)"/)?.[1]).toBe('0,18.3 160,1');
  });

  it('draws nothing for a task with no spend yet', () => {
    expect(renderToStaticMarkup(createElement(Sparkline, { cost: { ...cost, spend: [] }, testId: 'spark' }))).toBe('');
  });
});
