import type { ClaimEndReason, TaskState } from './model.js';

/**
 * What an involuntary end of a claim means, once, for the engine that decides it and the reducer that
 * replays it: a lease that lapsed or a process that exited while working on the task is a failed attempt
 * (SQS's receive count); a person's release, a closed pane, a host stop or restart is not. Work in review
 * stays in review whatever ends the claim.
 */
export function isFailedAttempt(reason: ClaimEndReason, stateBefore: TaskState): boolean {
  return (reason === 'lapsed' || reason === 'process-exited') && stateBefore === 'claimed';
}

/** Where the end of a claim sends its task: review stays, a failed attempt at the Thread's poison limit
 *  goes to needs-attention, anything else back to the backlog. */
export function stateAfterClaimEnd(t: { state: TaskState; failures: number }, reason: ClaimEndReason, poisonLimit: number): TaskState {
  if (t.state === 'review') return 'review';
  return isFailedAttempt(reason, t.state) && t.failures + 1 >= poisonLimit ? 'needs-attention' : 'open';
}
