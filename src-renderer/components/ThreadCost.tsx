import { useState } from 'react';
import { showControls } from '../../src-shared/text/controlChars.js';
import { useApp, useController } from '../state/hooks.js';
import { formatTokensExact, spendText, totalTokens } from '../state/costFigures.js';
import { costCsv, threadCostSummary } from '../state/costSummary.js';
import { CostFigure } from './CostFigure.js';
import { openTaskDetails } from './TaskDetails.js';
import '../styles/cost.css';

/**
 * The Thread's cost at a glance (issue 47, item 4): one line, today and this week (UTC days, as the board keeps
 * them), which opens out to the tasks that cost most (each opens its details), the agents' overhead, the Thread's
 * total, and a CSV of it all to download. Shown once anything was spent, so a new Thread carries no empty line.
 */
export function ThreadCost() {
  const c = useController();
  useApp((s) => s.boardVersion);
  const board = useApp((s) => s.board);
  const [open, setOpen] = useState(false);
  if (!board?.costs || board.costs.thread.turns === 0) return null;
  const now = Date.now();
  const sum = threadCostSummary(board.costs, board.tasks.values(), now);
  const download = () => {
    const csv = costCsv(board.costs, board.tasks.values(), (id) => c.agentName(id));
    const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv;charset=utf-8' }));
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
        <span data-testid="thread-cost-today">today {spendText(sum.today)}</span>
        <span data-testid="thread-cost-week">this week {spendText(sum.week)}</span>
        <span className="spacer" />
        <button type="button" data-testid="thread-cost-csv" onClick={download} title="Every task's cost, per agent, and each agent's overhead, as CSV">
          Export CSV
        </button>
      </header>
      {open && (
        <div id="thread-cost-body" className="thread-cost-body">
          <p className="muted">
            <span data-testid="thread-cost-total">
              all told {spendText(sum.thread)} ({formatTokensExact(totalTokens(sum.thread.tokens))} tokens)
            </span>{' '}
            · <span data-testid="thread-cost-overhead">agents’ overhead {spendText(sum.overhead)}</span>
          </p>
          <h3 className="cost-caption">Top tasks by cost</h3>
          <ol className="thread-cost-top" data-testid="thread-cost-top">
            {sum.top.map((t) => (
              <li key={t.id}>
                <button type="button" className="link" data-testid={`thread-cost-task-${t.id}`} onClick={() => openTaskDetails(c, t.id)}>
                  <span className="card-id">{t.id}</span> <bdi>{showControls(t.title, 'none')}</bdi>
                </button>{' '}
                <CostFigure taskId={t.id} testId={`thread-cost-figure-${t.id}`} />
              </li>
            ))}
          </ol>
        </div>
      )}
    </section>
  );
}
