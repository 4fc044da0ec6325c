import { estimateMicros, MICROS_PER_USD, priceOf, type ModelPrice } from './prices.js';
import { NO_TOKENS, type CostBook, type RateLimitReading, type SpendFigures, type TaskCost, type TokenCounts, type UsageAttribution, type UsageTurn } from './usage.js';

/**
 * The board's fold of what agents spent (issue 47): each `usage` event adds its turns to the task it was
 * attributed to (Task.cost) and to the Thread's book (Board.costs: per agent, profile and day). The board's one
 * reducer calls these, so the engine, a journal's replay and every window's copy agree to the micro-dollar.
 *
 * Each call is O(1) in the board's size: a task's figures are replaced (never edited: a copied board shares
 * tasks), the book's maps are edited in place (copyBook gives a copied board its own maps).
 */

/** One usage event as the fold reads it (the board's `usage` event is one). */
export interface UsageBatch {
  readonly agentId: string;
  readonly profile: string;
  readonly turns: readonly UsageTurn[];
  readonly taskId: string | null;
  readonly how: UsageAttribution;
  readonly limits?: readonly RateLimitReading[];
  /** The event's wall time (ms): the day it counts to and the sparkline's time axis. */
  readonly at: number;
}

export const NO_SPEND: SpendFigures = Object.freeze({ tokens: NO_TOKENS, usd: 0, unpriced: 0, turns: 0 });

export const CostFoldLimits = {
  /** Points of a task's spend over time kept for its sparkline: the details panel draws it about 120 px wide,
   *  and more points than pixels draw nothing more. Past it the older points are thinned (every other one
   *  dropped), never the totals: each point is cumulative. */
  spendPoints: 120,
} as const;

/** Tokens a budget and the sparkline count: every kind the provider bills. Reasoning is billed inside output
 *  (prices.ts says how the counts are read), so it is not added again. */
export function billedTokens(t: TokenCounts): number {
  return t.input + t.output + t.cacheRead + t.cacheWrite;
}

const micros = (usd: number): number => Math.round(usd * MICROS_PER_USD);
const dollars = (m: number): number => m / MICROS_PER_USD;

function addTokens(a: TokenCounts, b: TokenCounts): TokenCounts {
  return { input: a.input + b.input, output: a.output + b.output, cacheRead: a.cacheRead + b.cacheRead, cacheWrite: a.cacheWrite + b.cacheWrite, reasoning: a.reasoning + b.reasoning };
}

/** Two spends summed; money stays a whole number of micro-dollars, so the sum is exact in any order. */
export function addSpend(a: SpendFigures, b: SpendFigures): SpendFigures {
  return { tokens: addTokens(a.tokens, b.tokens), usd: dollars(micros(a.usd) + micros(b.usd)), unpriced: a.unpriced + b.unpriced, turns: a.turns + b.turns };
}

/** A batch's spend: each turn's money is the CLI's own figure, else the price table's estimate for its
 *  model (the Thread's prices over the bundled ones), else the turn is counted unpriced (tokens only). */
export function batchSpend(turns: readonly UsageTurn[], own: Readonly<Record<string, ModelPrice>> | undefined): SpendFigures {
  let tokens = NO_TOKENS;
  let m = 0;
  let unpriced = 0;
  for (const t of turns) {
    tokens = addTokens(tokens, t.tokens);
    if (t.usd !== null) m += micros(t.usd);
    else {
      const price = priceOf(t.model, own);
      if (price) m += estimateMicros(t.tokens, price);
      else unpriced++;
    }
  }
  return { tokens, usd: dollars(m), unpriced, turns: turns.length };
}

/** A task's cost after `batch` (spend `s`) was attributed to it. */
export function foldTaskCost(cost: TaskCost | null | undefined, batch: UsageBatch, s: SpendFigures): TaskCost {
  const was = cost ?? { ...NO_SPEND, byAgent: {}, spend: [] };
  const mine = was.byAgent[batch.agentId] ?? { ...NO_SPEND, lastActed: 0 };
  const total = addSpend(was, s);
  const lastActed = mine.lastActed + (batch.how === 'last-acted' ? batch.turns.length : 0);
  const point = [batch.at, total.usd, billedTokens(total.tokens)] as const;
  let spend = [...was.spend, point];
  if (spend.length > CostFoldLimits.spendPoints) spend = spend.filter((_, i) => i % 2 === 1 || i === spend.length - 1);
  return { ...total, byAgent: { ...was.byAgent, [batch.agentId]: { ...addSpend(mine, s), lastActed } }, spend };
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type AgentBook = CostBook['agents'][string];

export function emptyBook(): CostBook {
  return { thread: NO_SPEND, agents: {}, profiles: {}, days: {} };
}

/** A book of its own for a copied board: its maps are edited in place by foldBook. O(agents + profiles + days). */
export function copyBook(b: CostBook): CostBook {
  return { thread: b.thread, agents: { ...b.agents }, profiles: { ...b.profiles }, days: { ...b.days } };
}

/** The UTC day of wall time `at`: YYYY-MM-DD. */
export const dayOf = (at: number): string => new Date(at).toISOString().slice(0, 10);

/** Adds `batch` (spend `s`) to the Thread's book, in place. */
export function foldBook(book: CostBook, batch: UsageBatch, s: SpendFigures): void {
  const b = book as Mutable<CostBook>;
  const agents = b.agents as Record<string, AgentBook>;
  const was = agents[batch.agentId] ?? { ...NO_SPEND, profile: batch.profile, overhead: NO_SPEND, limits: [] };
  if (s.turns === 0) {
    // A rate-limit reading alone (no turn spent): the agent's headroom, and no day, profile or Thread row of nothing.
    agents[batch.agentId] = { ...was, limits: batch.limits ?? was.limits };
    return;
  }
  b.thread = addSpend(b.thread, s);
  agents[batch.agentId] = {
    ...addSpend(was, s),
    profile: batch.profile,
    overhead: batch.taskId === null ? addSpend(was.overhead, s) : was.overhead,
    // The latest readings replace the ones before: headroom is a state, not a sum.
    limits: batch.limits ?? was.limits,
  };
  const profiles = b.profiles as Record<string, SpendFigures>;
  profiles[batch.profile] = addSpend(profiles[batch.profile] ?? NO_SPEND, s);
  const days = b.days as Record<string, SpendFigures>;
  const day = dayOf(batch.at);
  days[day] = addSpend(days[day] ?? NO_SPEND, s);
}
