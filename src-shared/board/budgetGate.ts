import type { Task, ThreadSettings } from './model.js';
import { budgetText } from '../usage/budgets.js';
import type { SpendFigures } from '../usage/usage.js';
import { taskBudgetSpent, threadBudgetSpent } from './dispatch.js';

/** What the gate reads of the board besides the task: the Thread's settings (its budget) and its spend. */
export interface ThreadSpend {
  readonly settings: ThreadSettings;
  readonly thread: SpendFigures;
}

/**
 * Issue 47, item 3: a spent budget stops more than dispatch. No agent takes a task for itself (a claim, by id
 * or the next ready one) while the task's own budget, or the Thread's, is spent and not raised: an agent told
 * in its pane to stop could otherwise claim the task straight back and spend on. The person's assignment is
 * not held to it: at 100 % the person decides, and giving the task to an agent is one way of deciding.
 *
 * The words name the budget (the task's or the Thread's, what it allows and what was spent) and what lifts
 * it, so the agent that is refused, and `forkbench why`, say the same. Null: nothing spent stops it. Without
 * `spend` (a reader that has not the Thread's figures) only the task's own budget is looked at.
 */
export function budgetStop(t: Task, spend?: ThreadSpend): string | null {
  if (t.budget && taskBudgetSpent(t)) return `${t.id} has spent its budget (${budgetText(t.cost, t.budget)}): no agent may claim it until a person raises the budget or assigns it`;
  const budget = spend?.settings.budget;
  if (spend && budget && threadBudgetSpent(spend.settings, spend.thread))
    return `the Thread has spent its budget (${budgetText(spend.thread, budget)}): no agent may claim ${t.id} until a person raises the Thread's budget or assigns it`;
  return null;
}
