import { describe, expect, it } from 'vitest';
import type { Task } from '../../../src-shared/board/model.js';
import { NEW_TASK } from '../../../src-shared/board/reducer.js';
import { NO_TOKENS, type CostBook, type SpendFigures, type TaskCost } from '../../../src-shared/usage/usage.js';
import { costCsv, csvField, threadCostSummary, utcDay } from '../../../src-renderer/state/costSummary.js';

/** The Thread summary (today, this week, the tasks that cost most) and its CSV, from the board's cost book. */
const spend = (usd: number, input: number, output: number, turns = 1, unpriced = 0): SpendFigures => ({ tokens: { ...NO_TOKENS, input, output }, usd, unpriced, turns });

function task(id: string, title: string, cost: TaskCost | null): Task {
  return { ...NEW_TASK, id, title, state: 'claimed', createdAt: 0, cost };
}
const costOf = (s: SpendFigures, byAgent: TaskCost['byAgent'] = {}): TaskCost => ({ ...s, byAgent, spend: [] });

const NOW = Date.UTC(2026, 11, 7, 21, 0);
const DAY = 86_400_000;

function book(): CostBook {
  return {
    thread: spend(4.5, 9000, 900, 9),
    agents: {
      a1: { ...spend(3, 6000, 600, 6), profile: 'shell', overhead: spend(0.5, 500, 50, 1), limits: [] },
      a2: { ...spend(1.5, 3000, 300, 3), profile: 'shell', overhead: spend(0, 0, 0, 0), limits: [] },
    },
    profiles: { shell: spend(4.5, 9000, 900, 9) },
    days: {
      [utcDay(NOW)]: spend(1, 1000, 100, 2),
      [utcDay(NOW - 6 * DAY)]: spend(2, 2000, 200, 3),
      // Eight days ago: outside the week.
      [utcDay(NOW - 8 * DAY)]: spend(1.5, 6000, 600, 4),
    },
  };
}

describe('the Thread summary', () => {
  it('sums today and the six UTC days before it as the week, and names the costliest tasks first', () => {
    const tasks = [
      task('T-1', 'cheap', costOf(spend(0.1, 100, 10))),
      task('T-2', 'dear', costOf(spend(2, 100, 10))),
      task('T-3', 'nothing yet', null),
      // No money, but tokens: after every priced one.
      task('T-4', 'flat rate', costOf(spend(0, 5000, 10, 1, 1))),
    ];
    const s = threadCostSummary(book(), tasks, NOW);
    expect(s.today).toEqual(spend(1, 1000, 100, 2));
    expect(s.week).toEqual(spend(3, 3000, 300, 5));
    expect(s.overhead).toEqual(spend(0.5, 500, 50, 1));
    expect(s.top.map((t) => t.id)).toEqual(['T-2', 'T-1', 'T-4']);
  });

  it('is all zeros on a board that keeps no cost book yet', () => {
    const s = threadCostSummary(undefined, [], NOW);
    expect(s.today.turns + s.week.turns + s.thread.turns).toBe(0);
    expect(s.top).toEqual([]);
  });
});

describe('the CSV', () => {
  it('quotes what must be quoted and never hands a spreadsheet a formula', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a, "b"')).toBe('"a, ""b"""');
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField(-1)).toBe('-1');
  });

  it('has a line per task, one per agent under it, each agent’s overhead and the Thread’s total', () => {
    const tasks = [task('T-2', 'Port, the parser', costOf(spend(2, 100, 10), { a1: { ...spend(2, 100, 10), lastActed: 0 } }))];
    const csv = costCsv(book(), tasks, (id) => (id === 'a1' ? 'shell 1' : id));
    expect(csv.split('\r\n')).toEqual([
      'task,title,state,agent,input,cache_read,cache_write,output,reasoning,tokens,usd,unpriced_turns,turns',
      'T-2,"Port, the parser",claimed,,100,0,0,10,0,110,2.000000,0,1',
      'T-2,"Port, the parser",claimed,shell 1,100,0,0,10,0,110,2.000000,0,1',
      ',overhead (no claim held),,shell 1,500,0,0,50,0,550,0.500000,0,1',
      ',Thread total,,,9000,0,0,900,0,9900,4.500000,0,9',
      '',
    ]);
  });
});
