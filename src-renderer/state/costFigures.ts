import { billedTokens } from '../../src-shared/usage/costFold.js';
import type { RateLimitReading, SpendFigures, TaskCost, TokenCounts } from '../../src-shared/usage/usage.js';

/**
 * Issue 47 in the window: how a spend (src-shared/usage/usage.ts, folded by the board) is written where a person
 * reads it. One place for the words and the rounding, so a card, the details panel, the agent list, the Thread
 * summary and the merge queue say the same figure the same way. The locale is fixed (en-US): a figure a test
 * reads, and a person compares with `forkbench cost`, must not change with the browser's language.
 */

const usd2 = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
const usd4 = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 4 });
const whole = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const short = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

/** Money: cents from a dollar up; below one, four decimals at most, since one turn of a small model costs a
 *  fraction of a cent and "$0.00" would say it cost nothing. */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0.00';
  return Math.abs(usd) >= 1 ? usd2.format(usd) : usd4.format(usd);
}

/** Tokens, exactly, with thousands separators: what the details panel and the CSV's reader compare. */
export const formatTokensExact = (n: number): string => whole.format(n);

/** Tokens in a few characters (a card, an agent's line): 950, 12.3k, 4.5M. Exact below a thousand. */
export function formatTokensShort(n: number): string {
  // The steps people read token counts in (the CLIs' own status lines use k and M).
  if (n < 1_000) return whole.format(n);
  if (n < 1_000_000) return `${short.format(n / 1_000)}k`;
  return `${short.format(n / 1_000_000)}M`;
}

/** Whether the spend has a money figure: at least one turn was priced (by its CLI or the price table). */
export const isPriced = (s: SpendFigures): boolean => s.turns > s.unpriced;

/** A spend in one short phrase: money when priced, else tokens; turns the price table did not know said apart. */
export function spendText(s: SpendFigures): string {
  if (!isPriced(s)) return `${formatTokensShort(billedTokens(s.tokens))} tokens`;
  return s.unpriced > 0 ? `${formatUsd(s.usd)} + ${s.unpriced} unpriced ${s.unpriced === 1 ? 'turn' : 'turns'}` : formatUsd(s.usd);
}

/** What a card shows: a compact figure, its longer reading (tooltip and screen readers), and whether some of it
 *  was attributed to the task as the one its agent last acted on (it held several: marked so everywhere). */
export interface CardFigure {
  readonly text: string;
  readonly label: string;
  readonly lastActed: number;
}

/** The card's figure, or null before anything was spent on the task. */
export function cardFigure(cost: TaskCost | null | undefined): CardFigure | null {
  if (!cost || cost.turns === 0) return null;
  const text = isPriced(cost) ? formatUsd(cost.usd) : formatTokensShort(billedTokens(cost.tokens));
  const lastActed = Object.values(cost.byAgent).reduce((n, a) => n + a.lastActed, 0);
  const parts = [`spent ${spendText(cost)}`, `${formatTokensExact(billedTokens(cost.tokens))} tokens in ${turnsText(cost.turns)}`];
  if (lastActed > 0) parts.push(`${turnsText(lastActed)} counted here as the task its agent last acted on, while it held several`);
  return { text: isPriced(cost) ? text : `${text} tok`, label: parts.join('; '), lastActed };
}

export const turnsText = (n: number): string => `${whole.format(n)} ${n === 1 ? 'turn' : 'turns'}`;

/** The token kinds in the order the details panel lists them, with a person's words for each. */
export const TOKEN_KINDS: ReadonlyArray<readonly [keyof TokenCounts, string]> = [
  ['input', 'input'],
  ['cacheRead', 'cache read'],
  ['cacheWrite', 'cache write'],
  ['output', 'output'],
  ['reasoning', 'reasoning (in output where the CLI counts it so)'],
];

/** A rate-limit reading as the agent list says it: how much of the window is left, and when it resets. */
export function headroomText(r: RateLimitReading, now: number): string {
  const left = Math.max(0, 100 - r.usedPct);
  const window = r.window.replace(/_/g, ' ');
  // The CLI reports its headroom as it works: an idle agent's last reading outlives its window, which has
  // started afresh since, so what it said used is no longer so.
  if (isPastReset(r, now)) return `${window}: reset ${durationText(now - (r.resetsAt as number))} ago, not read since`;
  const resets = r.resetsAt === null ? '' : `, resets in ${durationText(Math.max(0, r.resetsAt - now))}`;
  return `${window}: ${short.format(left)}% left${resets}`;
}

/** Whether the reading's window has reset since it was read (its figure is then out of date). */
export const isPastReset = (r: RateLimitReading, now: number): boolean => r.resetsAt !== null && r.resetsAt <= now;

/** A wall-clock span in the largest two units that matter: 45 s, 3 min 20 s, 2 h 5 min, 1 d 3 h. */
export function durationText(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** The sparkline's series: the cumulative spend in money when any of it was priced, else in tokens. */
export type SparkSeries = 'usd' | 'tokens';

/** The sparkline's drawing: an SVG polyline's points in a `width` × `height` box, and what it says in words. */
export interface Sparkline {
  readonly points: string;
  readonly label: string;
  readonly series: SparkSeries;
}

/**
 * The spend over time as a line rising left to right (the fold keeps it cumulative, [host ms, usd, tokens]).
 * One point is drawn as a flat line from the left edge, so a first turn still shows; none draws nothing.
 */
export function sparkline(cost: TaskCost, width: number, height: number): Sparkline | null {
  const pts = cost.spend;
  if (pts.length === 0) return null;
  const series: SparkSeries = isPriced(cost) ? 'usd' : 'tokens';
  const value = (p: readonly [number, number, number]) => (series === 'usd' ? p[1] : p[2]);
  const t0 = pts[0]![0];
  const t1 = pts[pts.length - 1]![0];
  const top = Math.max(...pts.map(value));
  const x = (t: number) => (t1 === t0 ? width : ((t - t0) / (t1 - t0)) * width);
  // The line keeps a pixel off the box's top and bottom, so its stroke is not cut in half there.
  const y = (v: number) => (top === 0 ? height - 1 : height - 1 - (v / top) * (height - 2));
  const xy = pts.map((p) => `${round(x(p[0]))},${round(y(value(p)))}`);
  if (pts.length === 1) xy.unshift(`0,${round(y(value(pts[0]!)))}`);
  const last = pts[pts.length - 1]!;
  const total = series === 'usd' ? formatUsd(last[1]) : `${formatTokensExact(last[2])} tokens`;
  const label = `Spend over ${durationText(t1 - t0)}: from ${series === 'usd' ? formatUsd(pts[0]![1]) : `${formatTokensExact(pts[0]![2])} tokens`} to ${total} in ${pts.length} ${pts.length === 1 ? 'step' : 'steps'}`;
  return { points: xy.join(' '), label, series };
}

const round = (n: number) => Math.round(n * 10) / 10;
