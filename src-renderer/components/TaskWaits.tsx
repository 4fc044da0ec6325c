import { DetailsListField } from './DetailsListField.js';
import { afterOf, parseAfterText, waitingOn } from '../../src-shared/board/dependencies.js';
import { whyNotRunning, type WhyReason } from '../../src-shared/board/why.js';
import { useApp, useController } from '../state/hooks.js';
import { UserText } from './UserText.js';
import { whyContext } from './TaskDispatch.js';

/**
 * Dependencies in the window (issue 34): what a task waits on, editable in its details panel, and why no one
 * holds it, in the same words `forkbench why` prints (src-shared/board/why.ts). Each selector answers a
 * string, so a change elsewhere on the board that leaves this task's answer as it was draws nothing.
 */

/** The details panel's field: the ids it waits on, typed as `T-3, T-5` ('' or none for none). */
export function AfterField({ taskId }: { taskId: string }) {
  const c = useController();
  const stored = useApp((s) => {
    const t = s.board?.tasks.get(taskId);
    return t ? afterOf(t).join(', ') : '';
  });
  return (
    <DetailsListField
      stored={stored}
      label={`Tasks ${taskId} waits on`}
      placeholder="none (like T-3, T-5)"
      testId="details-after"
      save={(text) => c.actions.setAfter(taskId, parseAfterText(text))}
    />
  );
}

/** Why no one holds the task (or who does): each reason's sentence, its code as the item's data. */
export function WhyList({ taskId }: { taskId: string }) {
  const c = useController();
  const text = useApp((s) => {
    const t = s.board?.tasks.get(taskId);
    return t && s.board ? JSON.stringify(whyNotRunning(s.board.tasks, t, whyContext(s, c.clock.now()), { settings: s.board.settings, thread: s.board.costs.thread }).reasons) : '[]';
  });
  const reasons = JSON.parse(text) as WhyReason[];
  return (
    <ul className="details-why" data-testid="details-why">
      {reasons.map((r, i) => (
        <li key={i} data-code={r.code} data-testid="details-why-reason">
          <UserText text={r.text} />
        </li>
      ))}
    </ul>
  );
}

/** On a card: the tasks it still waits on, so a task that is not ready reads as such at a glance. */
export function CardWaits({ taskId }: { taskId: string }) {
  const waiting = useApp((s) => {
    const t = s.board?.tasks.get(taskId);
    return t && s.board && t.state !== 'done' ? waitingOn(s.board.tasks, t).join(', ') : '';
  });
  if (!waiting) return null;
  return (
    <p className="card-reason card-waits" data-testid={`card-waits-${taskId}`} title="Not ready: it waits until each of these is done">
      waits on {waiting}
    </p>
  );
}
