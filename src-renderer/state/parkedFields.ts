import { ParkedWorkDefaults } from '../../src-shared/git/parkedWork.js';

/** A minute, the unit the grace is typed in: parked folders are kept for minutes, not milliseconds. */
const MINUTE_MS = 60_000;

/** The parked folders' grace as its field shows it: minutes, with a fraction where it is not whole. */
export function formatGrace(ms: number | undefined): string {
  return String(Math.round(((ms ?? ParkedWorkDefaults.graceMs) / MINUTE_MS) * 100) / 100);
}

/** The grace typed (minutes) as the board takes it (ms); the host's schema names one out of bounds. */
export function parseGrace(text: string): number | null {
  const m = Number(text.trim());
  return text.trim() === '' || !Number.isFinite(m) ? null : Math.round(m * MINUTE_MS);
}

/** The disk budget typed (MB): empty is none. */
export function parseBudget(text: string): number | null {
  const t = text.trim();
  return t === '' ? null : Number(t);
}

export function formatBudget(mb: number | null | undefined): string {
  return mb === null || mb === undefined ? '' : String(mb);
}
