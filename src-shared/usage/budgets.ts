import { billedTokens } from './costFold.js';
import type { SpendFigures } from './usage.js';

/**
 * Budgets (issue 47, item 3): a limit on what a task, or the whole Thread, may spend, in money or in tokens
 * (for flat-rate plans, where the currency is tokens). A person sets them (the board's `budget-set` event); the
 * host tells the person once at BudgetThresholds.notice, and at BudgetThresholds.stop the board dispatches the
 * task no more, its agent is told in its pane, and the person decides: raise the budget, or stop the agent.
 */
export const BUDGET_UNITS = ['usd', 'tokens'] as const;
export type BudgetUnit = (typeof BUDGET_UNITS)[number];

export interface Budget {
  readonly unit: BudgetUnit;
  /** US dollars, or billed tokens (costFold.billedTokens). */
  readonly limit: number;
}

export const BudgetThresholds = {
  /** The share of a budget spent at which the person is told, once: the 80 %, early enough to decide
   *  before an agent mid-task runs into the stop. */
  notice: 0.8,
  /** Spent: the task is dispatched no more and its agent is told to stop. */
  stop: 1,
} as const;

export const BudgetLimits = {
  /** A budget in dollars: $1,000,000 is beyond any Thread's spend, and bounds a typo. */
  maxUsd: 1_000_000,
  /** A budget in tokens: 10^12 is the board's bound on a turn's count (storedEvents.ts), far past any Thread. */
  maxTokens: 1e12,
} as const;

/** How much of `budget` `spent` used: 0 for nothing spent, 1 for all of it (more past it). */
export function budgetUse(spent: SpendFigures | null | undefined, budget: Budget): number {
  if (!spent) return 0;
  const used = budget.unit === 'usd' ? spent.usd : billedTokens(spent.tokens);
  return used / budget.limit;
}

export type BudgetLevel = 'under' | 'notice' | 'stop';

export function budgetLevel(spent: SpendFigures | null | undefined, budget: Budget | null | undefined): BudgetLevel {
  if (!budget) return 'under';
  const use = budgetUse(spent, budget);
  return use >= BudgetThresholds.stop ? 'stop' : use >= BudgetThresholds.notice ? 'notice' : 'under';
}

const money = (usd: number): string => `$${usd.toFixed(usd < 10 ? 2 : 0)}`;

/** `$4.12 of $5.00` or `812,000 of 1,000,000 tokens`; a money budget says how many turns had no price. */
export function budgetText(spent: SpendFigures | null | undefined, budget: Budget): string {
  if (budget.unit === 'tokens') return `${billedTokens(spent?.tokens ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 }).toLocaleString('en')} of ${budget.limit.toLocaleString('en')} tokens`;
  const unpriced = spent?.unpriced ? ` (and ${spent.unpriced} turn${spent.unpriced === 1 ? '' : 's'} with no known price)` : '';
  return `${money(spent?.usd ?? 0)} of ${money(budget.limit)}${unpriced}`;
}
