import { Limits } from '../../src-shared/board/limits.js';
import { REJECT_REASON_MISSING } from '../../src-shared/board/schemas.js';

/**
 * The board's text limits (src-shared/board/limits.ts, the schemas' own numbers) as a form shows them while a
 * person types: a count, and over the limit a reason that blocks the submit, instead of the host's refusal
 * after it. Counted as the schemas count: UTF-16 units of the string (`.length`), a title after trimming.
 */
export interface TextLimit {
  /** What the field holds, for the reason: "title", "goal". */
  readonly what: string;
  readonly max: number;
  /** The schema trims it before it counts (a title). */
  readonly trimmed?: boolean;
  /** It may not be blank (a reject's reason): what to say until something is typed. */
  readonly required?: string;
}

export const TEXT_LIMITS = {
  title: { what: 'title', max: Limits.maxTitleChars, trimmed: true },
  body: { what: 'details text', max: Limits.maxBodyChars },
  goal: { what: 'goal', max: Limits.maxGoalChars },
  reason: { what: 'reason', max: Limits.maxNoteChars },
  /** The board refuses a reject with a blank reason (RejectReasonSchema): the dialog says so before. */
  rejectReason: { what: 'reason', max: Limits.maxNoteChars, required: `${REJECT_REASON_MISSING.charAt(0).toUpperCase()}${REJECT_REASON_MISSING.slice(1)}.` },
} as const satisfies Record<string, TextLimit>;

export interface LimitState {
  readonly count: number;
  readonly max: number;
  /** Why it cannot be sent, or null while it is within the limit. */
  readonly over: string | null;
  /** It is blank and may not be (TextLimit.required): why it cannot be sent yet, or null. */
  readonly missing: string | null;
}

const n = (x: number) => x.toLocaleString('en-US');

export function limitState(text: string, limit: TextLimit): LimitState {
  const count = (limit.trimmed ? text.trim() : text).length;
  const over = count > limit.max ? `The ${limit.what} is ${n(count)} characters; at most ${n(limit.max)} fit. Remove ${n(count - limit.max)} to continue.` : null;
  const missing = limit.required !== undefined && text.trim() === '' ? limit.required : null;
  return { count, max: limit.max, over, missing };
}

/** The first reason among several fields, or null when every one fits. */
export function firstOver(...states: LimitState[]): string | null {
  return states.find((s) => s.over !== null)?.over ?? null;
}
