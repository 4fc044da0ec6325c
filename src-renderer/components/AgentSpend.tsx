import { Fragment } from 'react';
import { useApp } from '../state/hooks.js';
import { billedTokens } from '../../src-shared/usage/costFold.js';
import { formatTokensExact, headroomText, isPastReset, spendText } from '../state/costFigures.js';
import '../styles/cost.css';

/**
 * An agent's line of spend in the agent list (issue 47): all its CLI spent, its overhead (spent holding no claim,
 * counted to no task) apart, and the rate-limit headroom its CLI reports for flat-rate plans. Nothing for an agent
 * that has spent nothing. `now` is the wall clock, for when a limit's window resets.
 */
export function AgentSpend({ agentId, now }: { agentId: string; now: number }) {
  const a = useApp((s) => (s.boardVersion, s.board?.costs?.agents[agentId]));
  if (!a || (a.turns === 0 && a.limits.length === 0)) return null;
  const label = `spent ${spendText(a)} (${formatTokensExact(billedTokens(a.tokens))} tokens), of which overhead ${spendText(a.overhead)}`;
  return (
    <span className="agent-spend" data-testid={`agent-spend-${agentId}`}>
      {a.turns > 0 && (
        <>
          <span data-testid={`agent-spend-total-${agentId}`} title={label}>
            spent {spendText(a)}
          </span>{' '}
          <span className="muted" data-testid={`agent-spend-overhead-${agentId}`} title="Spent while it held no claim: counted to no task">
            overhead {spendText(a.overhead)}
          </span>
        </>
      )}
      {a.limits.map((r) => (
        // A space before each: a screen reader reads the list item's text as one name, its words apart.
        <Fragment key={r.window}>
          {' '}
          <span className={`agent-headroom${isPastReset(r, now) ? ' stale' : r.usedPct >= HEADROOM_LOW_PCT ? ' low' : ''}`} data-testid={`agent-headroom-${agentId}-${r.window}`}>
            {headroomText(r, now)}
          </span>
        </Fragment>
      ))}
    </span>
  );
}

/** From this much of a window used, its headroom is drawn as a warning: the CLI's own status line turns there. */
const HEADROOM_LOW_PCT = 80;
