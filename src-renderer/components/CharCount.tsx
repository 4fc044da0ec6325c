import type { LimitState } from '../state/textLimit.js';

/**
 * A field's character count against its limit ("12 / 500"), red past it. Not a live region: a count read
 * out at every key would drown what is typed; the reason (LimitReason) is announced once it matters.
 */
export function CharCount({ state, testId }: { state: LimitState; testId: string }) {
  const over = state.over !== null;
  return (
    <span className={`char-count${over ? ' over' : ''}`} data-testid={testId} data-over={over} title={`at most ${state.max.toLocaleString('en-US')} characters`}>
      {state.count.toLocaleString('en-US')} / {state.max.toLocaleString('en-US')}
    </span>
  );
}

/** Why the form cannot be sent (a field is over its limit), said where the button is. */
export function LimitReason({ reason, testId }: { reason: string | null; testId: string }) {
  if (!reason) return null;
  return (
    <p className="limit-reason" role="alert" data-testid={testId}>
      {reason}
    </p>
  );
}
