import { useApp } from '../state/hooks.js';
import { cardFigure } from '../state/costFigures.js';
import '../styles/cost.css';

/**
 * What a task has cost so far, as a card and a merge-queue entry show it (issue 47): money when any of it was
 * priced, else tokens, and a mark when some of it was counted as the task its agent last acted on while it held
 * several. Nothing before anything was spent. Its box is as wide as its figure in tabular digits, so a figure
 * that grows never moves what follows by more than a digit (and the card's meta line wraps, never reflows).
 */
export function CostFigure({ taskId, testId }: { taskId: string; testId: string }) {
  const cost = useApp((s) => s.board?.tasks.get(taskId)?.cost);
  const f = cardFigure(cost);
  if (!f) return null;
  return (
    <span className="cost-figure" data-testid={testId} title={f.label} aria-label={f.label} role="img">
      {f.text}
      {f.lastActed > 0 && (
        <span className="cost-last-acted" data-testid={`${testId}-last-acted`} aria-hidden="true">
          *
        </span>
      )}
    </span>
  );
}
