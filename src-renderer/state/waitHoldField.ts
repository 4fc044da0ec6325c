/**
 * The Thread settings' wait hold field: how long an agent that waits for the person keeps its claims past
 * the lease (then they lapse as waited-too-long). Typed in minutes, the unit a person thinks of a wait in;
 * checked against the board's own bounds before it is sent, so a mistake is named beside the field.
 */
import { Limits } from '../../src-shared/board/limits.js';

const MS_PER_MIN = 60_000;

export const WaitHoldBounds = {
  /** The board's floor (the shortest lease), in the field's unit. */
  minMinutes: Limits.minLeaseMs / MS_PER_MIN,
  maxMinutes: Limits.maxWaitHoldMs / MS_PER_MIN,
} as const;

/** A duration as a person reads it: "2 s", "30 min", "1.5 min", "24 h". */
export function spellDuration(ms: number): string {
  if (ms < MS_PER_MIN) return `${Math.round(ms / 1000)} s`;
  if (ms % (60 * MS_PER_MIN) === 0) return `${ms / (60 * MS_PER_MIN)} h`;
  return `${Math.round((ms / MS_PER_MIN) * 100) / 100} min`;
}

/** The field's text for a hold (minutes, at most two decimals). */
export const formatWaitHold = (ms: number): string => String(Math.round((ms / MS_PER_MIN) * 100) / 100);

/** The field's text as a hold in ms, or what is wrong with it. */
export function parseWaitHold(text: string): { ok: true; ms: number } | { ok: false; error: string } {
  const t = text.trim();
  if (t === '') return { ok: false, error: 'the wait hold is empty: give it in minutes' };
  const minutes = Number(t);
  if (!Number.isFinite(minutes)) return { ok: false, error: `the wait hold "${t}" is not a number of minutes` };
  const ms = Math.round(minutes * MS_PER_MIN);
  if (ms < Limits.minLeaseMs) return { ok: false, error: `the wait hold must be at least ${spellDuration(Limits.minLeaseMs)}` };
  if (ms > Limits.maxWaitHoldMs) return { ok: false, error: `the wait hold must be at most ${spellDuration(Limits.maxWaitHoldMs)}` };
  return { ok: true, ms };
}
