import { describe, expect, it } from 'vitest';
import { NO_TOKENS, type TaskCost } from '../../../src-shared/usage/usage.js';
import { cardFigure, durationText, formatTokensShort, formatUsd, headroomText, sparkline, spendText } from '../../../src-renderer/state/costFigures.js';

/**
 * Issue 47 in the window: how a spend is written on a card, in the details panel and in the agent list. The
 * figures are the board's (usage.ts); these are the words and the rounding every surface shares.
 */
const tokens = (input: number, output: number, cacheRead = 0, cacheWrite = 0, reasoning = 0) => ({ input, output, cacheRead, cacheWrite, reasoning });

function cost(o: Partial<TaskCost>): TaskCost {
  return { tokens: NO_TOKENS, usd: 0, unpriced: 0, turns: 0, byAgent: {}, spend: [], ...o };
}

describe('money and tokens in words', () => {
  it('writes cents from a dollar up, and up to four decimals below one (a turn costs fractions of a cent)', () => {
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(0.0042)).toBe('$0.0042');
    expect(formatUsd(0.12)).toBe('$0.12');
    expect(formatUsd(0.123456)).toBe('$0.1235');
    expect(formatUsd(1234.567)).toBe('$1,234.57');
  });

  it('shortens token counts the way the CLIs do, exact below a thousand', () => {
    expect(formatTokensShort(950)).toBe('950');
    expect(formatTokensShort(12_345)).toBe('12.3k');
    expect(formatTokensShort(4_500_000)).toBe('4.5M');
  });

  it('says money when any turn was priced, tokens when none was, and the unpriced turns apart', () => {
    expect(spendText({ tokens: tokens(1000, 500), usd: 0, unpriced: 2, turns: 2 })).toBe('1.5k tokens');
    expect(spendText({ tokens: tokens(1000, 500), usd: 0.25, unpriced: 0, turns: 2 })).toBe('$0.25');
    expect(spendText({ tokens: tokens(1000, 500), usd: 0.25, unpriced: 1, turns: 3 })).toBe('$0.25 + 1 unpriced turn');
  });

  it('spells a duration in its two largest units', () => {
    expect(durationText(45_000)).toBe('45 s');
    expect(durationText(200_000)).toBe('3 min 20 s');
    expect(durationText(7_500_000)).toBe('2 h 5 min');
    expect(durationText(97_200_000)).toBe('1 d 3 h');
  });

  it('says how much of a rate-limit window is left and when it resets', () => {
    expect(headroomText({ window: 'five_hour', usedPct: 37.5, resetsAt: 1_000 + 90 * 60_000 }, 1_000)).toBe('five hour: 62.5% left, resets in 1 h 30 min');
    expect(headroomText({ window: 'seven_day', usedPct: 100, resetsAt: null }, 0)).toBe('seven day: 0% left');
  });
});

describe("a card's figure", () => {
  it('is nothing before anything was spent', () => {
    expect(cardFigure(null)).toBeNull();
    expect(cardFigure(undefined)).toBeNull();
    expect(cardFigure(cost({}))).toBeNull();
  });

  it('is money when priced, tokens otherwise, with the whole reading in its label', () => {
    const priced = cardFigure(cost({ tokens: tokens(1200, 340), usd: 0.0315, turns: 2, byAgent: { a1: { tokens: tokens(1200, 340), usd: 0.0315, unpriced: 0, turns: 2, lastActed: 0 } } }));
    expect(priced).toEqual({ text: '$0.0315', label: 'spent $0.0315; 1,540 tokens in 2 turns', lastActed: 0 });
    const unpriced = cardFigure(cost({ tokens: tokens(1200, 340), unpriced: 1, turns: 1 }));
    expect(unpriced?.text).toBe('1.5k tok');
  });

  it('marks turns counted as the task its agent last acted on, and says how many', () => {
    const f = cardFigure(
      cost({
        tokens: tokens(10, 5),
        usd: 0.5,
        turns: 3,
        byAgent: { a1: { tokens: tokens(6, 3), usd: 0.3, unpriced: 0, turns: 2, lastActed: 2 }, a2: { tokens: tokens(4, 2), usd: 0.2, unpriced: 0, turns: 1, lastActed: 0 } },
      }),
    );
    expect(f?.lastActed).toBe(2);
    expect(f?.label).toBe('spent $0.50; 15 tokens in 3 turns; 2 turns counted here as the task its agent last acted on, while it held several');
  });
});

describe('the sparkline', () => {
  it('rises left to right over the spend, in money when priced, and says it in words', () => {
    const s = sparkline(cost({ usd: 0.3, turns: 3, spend: [[0, 0.1, 100], [30_000, 0.2, 200], [60_000, 0.3, 300]] }), 100, 20);
    expect(s).toEqual({ points: '0,13 50,7 100,1', label: 'Spend over 1 min: from $0.10 to $0.30 in 3 steps', series: 'usd' });
  });

  it('draws one point as a flat line, and tokens when nothing was priced', () => {
    const s = sparkline(cost({ unpriced: 1, turns: 1, spend: [[5, 0, 1540]] }), 100, 20);
    expect(s).toEqual({ points: '0,1 100,1', label: 'Spend over 0 s: from 1,540 tokens to 1,540 tokens in 1 step', series: 'tokens' });
  });

  it('draws nothing without a point', () => {
    expect(sparkline(cost({}), 100, 20)).toBeNull();
  });
});
