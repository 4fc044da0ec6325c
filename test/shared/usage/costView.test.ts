import { describe, expect, it } from 'vitest';
import { claimFacts, csvCell, threadCostView } from '../../../src-shared/usage/costView.js';
import { emptyBook, foldBook, batchSpend } from '../../../src-shared/usage/costFold.js';
import { turn } from '../../helpers/usageEvents.js';

const S = 1000;

describe('the cost views (issue 47)', () => {
  it('a task’s claims worked: grant to done, back from review to the lapse, and a live claim up to now; lapses; commits of claims only', () => {
    const events = [
      { kind: 'branch-recorded', at: 0, record: { token: 0 } }, // the host's base record: no commit of a claim
      { kind: 'grant', at: 0 },
      { kind: 'renew', at: 30 * S },
      { kind: 'submitted', at: 60 * S },
      { kind: 'returned', at: 100 * S, to: 'claimed' },
      { kind: 'claim-ended', at: 160 * S, reason: 'lapsed' },
      { kind: 'grant', at: 200 * S },
      { kind: 'branch-recorded', at: 210 * S, record: { token: 5 } },
      { kind: 'reassign', at: 230 * S },
      { kind: 'branch-recorded', at: 240 * S, record: { token: 6 } },
    ];
    expect(claimFacts(events, 260 * S)).toEqual({ wallMs: (60 + 60 + 30 + 30) * S, lapses: 1, commits: 2 });
    // A review's wait is not the claim's work: submitted and not yet back counts nothing after.
    expect(claimFacts([{ kind: 'grant', at: 0 }, { kind: 'submitted', at: 10 * S }], 500 * S).wallMs).toBe(10 * S);
  });

  it('a CSV cell a spreadsheet would run as a formula is made text, and quotes, commas and line breaks are quoted', () => {
    expect(csvCell('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvCell('+1')).toBe("'+1");
    expect(csvCell('-cmd')).toBe("'-cmd");
    expect(csvCell('@SUM')).toBe("'@SUM");
    expect(csvCell('a, b')).toBe('"a, b"');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell(0.25)).toBe('0.25');
  });

  it('the Thread’s today and this week are UTC days: the seven ending today, nothing older', () => {
    const book = emptyBook();
    const now = Date.UTC(2026, 2, 10, 9);
    const day = 86_400_000;
    for (const [ago, usd] of [[0, 1], [1, 2], [6, 4], [7, 8]] as const)
      foldBook(book, { agentId: 'a', profile: 'claude', turns: [], taskId: null, how: 'overhead', at: now - ago * day }, batchSpend([turn(`t${ago}`, { input: 1 }, { usd })], undefined));
    const v = threadCostView([], book, null, now);
    expect(v.today.usd).toBe(1);
    expect(v.week.usd).toBe(7);
    expect(v.thread.usd).toBe(15);
    expect(v.days.map((d) => d.key)).toEqual(['2026-03-03', '2026-03-04', '2026-03-09', '2026-03-10']);
  });
});
