import type { Task } from '../../src-shared/board/model.js';
import { NO_TOKENS, type CostBook, type SpendFigures, type TokenCounts } from '../../src-shared/usage/usage.js';
import { totalTokens } from './costFigures.js';

/**
 * The Thread summary's figures (issue 47, item 4): today, this week and the tasks that cost most, read from the
 * board's cost book (per UTC day, as the fold keys it) and its tasks, and the same as CSV for a download.
 */

export const NO_SPEND: SpendFigures = { tokens: NO_TOKENS, usd: 0, unpriced: 0, turns: 0 };

/** A week: today and the six UTC days before it. */
const WEEK_DAYS = 7;
const DAY_MS = 24 * 60 * 60 * 1000;
/** The summary names this many tasks: a glance, not a report (the CSV has them all). */
export const TOP_TASKS = 5;

/** The fold's key for the UTC day `ms` falls on (usage.ts: YYYY-MM-DD of the event's wall time). */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export function addSpend(a: SpendFigures, b: SpendFigures): SpendFigures {
  const tokens = Object.fromEntries((Object.keys(NO_TOKENS) as Array<keyof TokenCounts>).map((k) => [k, a.tokens[k] + b.tokens[k]])) as unknown as TokenCounts;
  return { tokens, usd: a.usd + b.usd, unpriced: a.unpriced + b.unpriced, turns: a.turns + b.turns };
}

export interface ThreadCostSummary {
  readonly today: SpendFigures;
  readonly week: SpendFigures;
  readonly thread: SpendFigures;
  /** The agents' own overhead (spent holding no claim), over the Thread. */
  readonly overhead: SpendFigures;
  /** Most money first, then most tokens; at most TOP_TASKS, only tasks something was spent on. */
  readonly top: readonly Task[];
}

/** Which of two tasks cost more: money first (the person's currency), tokens where money ties (flat-rate plans). */
export function byCost(a: Task, b: Task): number {
  const ca = a.cost;
  const cb = b.cost;
  return (cb?.usd ?? 0) - (ca?.usd ?? 0) || (cb ? totalTokens(cb.tokens) : 0) - (ca ? totalTokens(ca.tokens) : 0);
}

export function threadCostSummary(book: CostBook | undefined, tasks: Iterable<Task>, now: number): ThreadCostSummary {
  let week = NO_SPEND;
  for (let i = 0; i < WEEK_DAYS; i++) week = addSpend(week, book?.days[utcDay(now - i * DAY_MS)] ?? NO_SPEND);
  let overhead = NO_SPEND;
  for (const a of Object.values(book?.agents ?? {})) overhead = addSpend(overhead, a.overhead);
  const spent = [...tasks].filter((t) => (t.cost?.turns ?? 0) > 0);
  return {
    today: book?.days[utcDay(now)] ?? NO_SPEND,
    week,
    thread: book?.thread ?? NO_SPEND,
    overhead,
    top: spent.sort(byCost).slice(0, TOP_TASKS),
  };
}

const CSV_HEAD = ['task', 'title', 'state', 'agent', 'input', 'cache_read', 'cache_write', 'output', 'reasoning', 'tokens', 'usd', 'unpriced_turns', 'turns'];

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. A field a spreadsheet would
 *  run as a formula (=, +, -, @ first) is prefixed with an apostrophe: titles are other people's text. */
export function csvField(v: string | number): string {
  let s = String(v);
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const row = (task: string, title: string, state: string, agent: string, s: SpendFigures) =>
  [task, title, state, agent, s.tokens.input, s.tokens.cacheRead, s.tokens.cacheWrite, s.tokens.output, s.tokens.reasoning, totalTokens(s.tokens), s.usd.toFixed(6), s.unpriced, s.turns].map(csvField).join(',');

/**
 * The Thread's cost as CSV: a line per task with its totals (agent empty), then one per agent that spent on it,
 * then each agent's overhead (task empty) and the Thread's total. Money with six decimals: a turn's price is
 * fractions of a cent, and the sums must add up in a spreadsheet.
 */
export function costCsv(book: CostBook | undefined, tasks: Iterable<Task>, agentName: (id: string) => string): string {
  const lines = [CSV_HEAD.join(',')];
  for (const t of [...tasks].filter((t) => (t.cost?.turns ?? 0) > 0).sort(byCost)) {
    const cost = t.cost!;
    lines.push(row(t.id, t.title, t.state, '', cost));
    for (const [id, a] of Object.entries(cost.byAgent)) lines.push(row(t.id, t.title, t.state, agentName(id), a));
  }
  for (const [id, a] of Object.entries(book?.agents ?? {})) if (a.overhead.turns > 0) lines.push(row('', 'overhead (no claim held)', '', agentName(id), a.overhead));
  lines.push(row('', 'Thread total', '', '', book?.thread ?? NO_SPEND));
  return `${lines.join('\r\n')}\r\n`;
}
