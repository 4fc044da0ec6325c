import type { BoardEvent } from '../../src-shared/board/events.js';
import { billedTokens } from '../../src-shared/usage/costFold.js';
import { claimFacts } from '../../src-shared/usage/costView.js';
import { useApp, useController } from '../state/hooks.js';
import { durationText, formatTokensExact, formatUsd, isPriced, spendText, TOKEN_KINDS, turnsText } from '../state/costFigures.js';
import { BudgetForm } from './BudgetForm.js';
import { Sparkline } from './Sparkline.js';
import '../styles/cost.css';

/**
 * The details panel's cost section (issue 47, item 4): what the task's agents' CLIs spent under its claims, by
 * token kind, in money and per agent, with a sparkline of the spend over time; its claims, and from its history
 * (costView.claimFacts, as `forkbench cost` reads it) the wall time worked under them, the lapses and the commits
 * recorded; and its own budget. `events` is the history the panel already read (null while it is read); `now` is
 * the wall clock, for a claim still running.
 */
export function TaskCostSection({ taskId, events, now }: { taskId: string; events: readonly BoardEvent[] | null; now: number }) {
  const c = useController();
  const task = useApp((s) => s.board?.tasks.get(taskId));
  const cost = task?.cost ?? null;
  const facts = events ? claimFacts(events, now) : null;
  if (!task) return null;
  return (
    <section className="details-section cost-section" data-testid="details-cost" aria-labelledby="details-cost-heading">
      <h3 id="details-cost-heading">Cost</h3>
      {cost && cost.turns > 0 ? (
        <>
          <p className="cost-total">
            <strong data-testid="details-cost-spent">{spendText(cost)}</strong>{' '}
            <span className="muted" data-testid="details-cost-turns">
              {formatTokensExact(billedTokens(cost.tokens))} tokens in {turnsText(cost.turns)}
            </span>
            {isPriced(cost) ? null : <span className="muted"> · no price known for its models: tokens only</span>}
          </p>
          <Sparkline cost={cost} testId="details-sparkline" />
          <table className="cost-table" data-testid="details-cost-kinds">
            <caption className="visually-hidden">Tokens by kind</caption>
            <tbody>
              {TOKEN_KINDS.map(([k, words]) => (
                <tr key={k}>
                  <th scope="row">{words}</th>
                  <td data-testid={`details-cost-${k}`}>{formatTokensExact(cost.tokens[k])}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <table className="cost-table" data-testid="details-cost-agents">
            <caption className="cost-caption">Per agent</caption>
            <thead>
              <tr>
                <th scope="col">agent</th>
                <th scope="col">spent</th>
                <th scope="col">tokens</th>
                <th scope="col">turns</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(cost.byAgent).map(([id, a]) => (
                <tr key={id} data-testid={`details-cost-agent-${id}`}>
                  <th scope="row">{c.agentName(id)}</th>
                  <td data-testid={`details-cost-agent-spent-${id}`}>{isPriced(a) ? formatUsd(a.usd) : '—'}</td>
                  <td data-testid={`details-cost-agent-tokens-${id}`}>{formatTokensExact(billedTokens(a.tokens))}</td>
                  <td>
                    {formatTokensExact(a.turns)}
                    {a.lastActed > 0 && (
                      <span className="muted" data-testid={`details-cost-agent-last-acted-${id}`}>
                        {' '}
                        ({a.lastActed} as the task it last acted on, holding several)
                      </span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : (
        <p className="muted" data-testid="details-cost-none">
          Nothing spent on {taskId} yet.
        </p>
      )}
      {facts && (
        <p className="cost-claims" data-testid="details-cost-claims">
          <span data-testid="details-cost-held">{durationText(facts.wallMs)} worked under claims</span> · <span data-testid="details-cost-claim-count">{plural(task.attempts, 'claim')}</span> ·{' '}
          <span data-testid="details-cost-lapses">{plural(facts.lapses, 'lapse')}</span> · <span data-testid="details-cost-commits">{plural(facts.commits, 'commit')} recorded</span>
        </p>
      )}
      <BudgetForm what={taskId} budget={task.budget} set={(b) => c.actions.setBudget(taskId, b)} testId="details-budget" />
    </section>
  );
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
