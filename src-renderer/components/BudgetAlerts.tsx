import type { Task } from '../../src-shared/board/model.js';
import { budgetLevel, budgetText, BudgetThresholds, type Budget } from '../../src-shared/usage/budgets.js';
import type { SpendFigures } from '../../src-shared/usage/usage.js';
import { useApp, useController } from '../state/hooks.js';
import { closeAgentAsking } from './agentClose.js';
import { BudgetForm } from './BudgetForm.js';
import '../styles/cost.css';

/** What a raise offers to start from: half as much again as the budget reached, a step a person can take at once. */
const RAISE_BY = 1.5;

/**
 * Budgets near or past their limit (issue 47, item 3), the Thread's and each task's, where the Thread's cost is
 * shown. From 80% a line says how much is spent of what; at 100% the board dispatches the task no more and its
 * agent was told in its pane, and the person decides here: raise the budget, or stop the agent that holds it
 * (asked first, as closing an agent always is).
 */
export function BudgetAlerts() {
  useApp((s) => s.boardVersion);
  const board = useApp((s) => s.board);
  if (!board) return null;
  const alerts: Array<{ task: Task | null; budget: Budget; spent: SpendFigures | null | undefined }> = [];
  if (board.settings.budget && budgetLevel(board.costs.thread, board.settings.budget) !== 'under') alerts.push({ task: null, budget: board.settings.budget, spent: board.costs.thread });
  for (const t of board.tasks.values()) if (t.budget && budgetLevel(t.cost, t.budget) !== 'under') alerts.push({ task: t, budget: t.budget, spent: t.cost });
  if (alerts.length === 0) return null;
  return (
    <ul className="budget-alerts" data-testid="budget-alerts" aria-label="Budgets">
      {alerts.map((a) => (
        <BudgetAlert key={a.task?.id ?? ''} {...a} />
      ))}
    </ul>
  );
}

function BudgetAlert({ task, budget, spent }: { task: Task | null; budget: Budget; spent: SpendFigures | null | undefined }) {
  const c = useController();
  const reached = budgetLevel(spent, budget) === 'stop';
  const what = task ? task.id : 'the Thread';
  const testId = `budget-alert-${task?.id ?? 'thread'}`;
  const holder = task?.claim?.agentId ?? null;
  const raise = String(budget.unit === 'usd' ? Math.ceil(budget.limit * RAISE_BY * 100) / 100 : Math.ceil(budget.limit * RAISE_BY));
  return (
    <li className={reached ? 'budget-reached' : 'budget-near'} data-testid={testId} data-level={reached ? 'stop' : 'notice'}>
      <span data-testid={`${testId}-text`}>
        {reached
          ? `${task ? task.id : 'The Thread'} reached its budget: ${budgetText(spent, budget)}. ${task ? 'It is not dispatched again, and its agent was told.' : 'Its tasks are not dispatched again.'}`
          : `${task ? task.id : 'The Thread'} has spent ${budgetText(spent, budget)}: past ${BudgetThresholds.notice * 100}% of its budget.`}
      </span>
      {reached && (
        <span className="budget-choice">
          <BudgetForm what={what} budget={budget} set={(b) => c.actions.setBudget(task?.id ?? null, b)} testId={`${testId}-raise`} verb="Raise" initial={raise} />
          {holder && (
            <button type="button" className="bad" data-testid={`${testId}-stop`} onClick={() => void closeAgentAsking(c, holder)}>
              Stop {c.agentName(holder)}
            </button>
          )}
        </span>
      )}
    </li>
  );
}
