import { useState } from 'react';
import { showControls } from '../../src-shared/text/controlChars.js';
import { addSpend, billedTokens, NO_SPEND } from '../../src-shared/usage/costFold.js';
import { threadCostView } from '../../src-shared/usage/costView.js';
import { useApp, useController } from '../state/hooks.js';
import { formatTokensExact, spendText } from '../state/costFigures.js';
import { BudgetAlerts } from './BudgetAlerts.js';
import { CostFigure } from './CostFigure.js';
import { openTaskDetails } from './TaskDetails.js';
import '../styles/cost.css';

/** The summary names this many tasks: a glance (the CSV has every one). */
const TOP_TASKS = 5;

/**
 * The Thread's cost at a glance (issue 47, item 4): one line, today and this week (UTC days, as the board keeps
 * them), which opens out to the tasks that cost most (each opens its details), the agents' overhead and the
 * Thread's total; the budgets near or past their limit, with the person's choice; and the host's CSV of it all to
 * download. Read with costView.threadCostView, as `forkbench cost` is, from the board the window keeps current.
 * Shown once anything was spent, so a new Thread carries no empty line.
 */
export function ThreadCost() {
  const c = useController();
  useApp((s) => s.boardVersion);
  const board = useApp((s) => s.board);
  const key = useApp((s) => s.activeKey);
  const [open, setOpen] = useState(false);
  if (!board || board.costs.thread.turns === 0) return null;
  const now = Date.now();
  const view = threadCostView(board.tasks.values(), board.costs, board.settings.budget, now);
  const overhead = view.agents.reduce((sum, a) => addSpend(sum, a.overhead), NO_SPEND);
  const download = async () => {
    if (!key) return;
    const r = await c.call('cost.csv', { key }, 'export the Thread’s cost as CSV');
    if (!r.ok) return;
    const url = URL.createObjectURL(new Blob([r.value], { type: 'text/csv;charset=utf-8' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `forkbench-cost-${new Date(now).toISOString().slice(0, 10)}.csv`;
    document.body.append(a);
    a.click();
    a.remove();
    // The click has handed the file to the browser's download by now; the URL is not needed after it.
    setTimeout(() => URL.revokeObjectURL(url), 0);
  };
  return (
    <section className="thread-cost" data-testid="thread-cost" aria-label="Cost">
      <header className="thread-cost-head">
        <button type="button" className="link" data-testid="thread-cost-toggle" aria-expanded={open} aria-controls="thread-cost-body" onClick={() => setOpen(!open)}>
          Cost
        </button>
        <span data-testid="thread-cost-today">today {spendText(view.today)}</span>
        <span data-testid="thread-cost-week">this week {spendText(view.week)}</span>
        <span className="spacer" />
        <button type="button" data-testid="thread-cost-csv" onClick={() => void download()} title="Every task's cost, each agent's (its overhead apart), profile and day, as CSV">
          Export CSV
        </button>
      </header>
      <BudgetAlerts />
      {open && (
        <div id="thread-cost-body" className="thread-cost-body">
          <p className="muted">
            <span data-testid="thread-cost-total">
              all told {spendText(view.thread)} ({formatTokensExact(billedTokens(view.thread.tokens))} tokens)
            </span>{' '}
            · <span data-testid="thread-cost-overhead">agents’ overhead {spendText(overhead)}</span> · <span>prices as of {view.pricesOf}</span>
          </p>
          <h3 className="cost-caption">Top tasks by cost</h3>
          <ol className="thread-cost-top" data-testid="thread-cost-top">
            {view.tasks.slice(0, TOP_TASKS).map((t) => (
              <li key={t.key}>
                <button type="button" className="link" data-testid={`thread-cost-task-${t.key}`} onClick={() => openTaskDetails(c, t.key)}>
                  <span className="card-id">{t.key}</span> <bdi>{showControls(t.label, 'none')}</bdi>
                </button>{' '}
                <CostFigure taskId={t.key} testId={`thread-cost-figure-${t.key}`} />
              </li>
            ))}
          </ol>
        </div>
      )}
    </section>
  );
}
