/**
 * Typed outcomes. The board never throws for a refused request: it answers which rule refused it, so an
 * agent (or a person) can act on the reason.
 */

export const REJECTION_CODES = [
  'no-such-task', // the id names no task
  'not-holder', // someone else holds the task, or nobody does
  'stale-token', // the caller held it once, but that claim is over or a newer one exists
  'lapsed', // the caller's lease ran out; a lapsed lease stays lapsed
  'bad-state', // the task's state does not allow this
  'not-ready', // the task waits on others that are not done yet (claim it by id with force to start anyway)
  'claim-limit', // the agent already holds as many claimed tasks as the Thread lets one agent claim
  'over-budget', // the task's budget, or the Thread's, is spent: no agent claims it until a person raises it (budgetGate.ts)
  'invalid-input', // a field is empty, too long or out of bounds
  'off-record', // a git branch is not where the board recorded it: that commit is not the task's work
  'read-only', // the board could not write to disk, so it takes no more writes until the host restarts
  'rate-limited', // an agent wrote faster than its quota; the message says when to try again
  'board-full', // the board holds as much text as it may (BoardLimits.maxTextChars)
  'key-reused', // an idempotency key came back with a different request than the one it was first used for
  'board-unavailable', // a shared board's database could not be reached: nothing was done; send it again (with its key)
] as const;
export type RejectionCode = (typeof REJECTION_CODES)[number];

export interface Rejection {
  readonly code: RejectionCode;
  readonly message: string;
}

/**
 * The one spelling of "a value or why not", for the board's decisions (`E` a Rejection), a window call's
 * answer (a WindowError), an agent call's (a JSON-RPC error) and the page's calls: `ok`, then `value` or
 * `error`. The JSON-RPC wire keeps its standard `result` key; everything of ours says `value`.
 */
export type Result<T, E = Rejection> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: E };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const failed = <E>(error: E): { ok: false; error: E } => ({ ok: false, error });
export const reject = (code: RejectionCode, message: string): { ok: false; error: Rejection } => ({
  ok: false,
  error: { code, message },
});
