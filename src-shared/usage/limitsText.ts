import type { RateLimitReading } from './usage.js';

/**
 * Rate-limit readings as one line of text (`forkbench limits`, issue 47): `WINDOW=PCT[@RESETS]`, several apart by
 * commas or spaces, e.g. `five_hour=42.5@1765170000 seven_day=10`. PCT is the percent of the window used, RESETS
 * when it resets in Unix seconds (as Claude Code's and Codex's own records say it). Plain text rather than JSON so
 * that a script says it on a command line, and the agents' API (CLI, MCP, socket) keeps one kind of value.
 */

/** A board event holds at most this many readings (storedEvents.ts); Claude Code reports three windows. */
export const MAX_READINGS = 16;

/** One reading: a window's name as the CLI spells it (letters, digits, `_ . -`), a percent, a time in seconds. */
const READING = /^([A-Za-z0-9][A-Za-z0-9_.-]{0,99})=(\d{1,3}(?:\.\d{1,6})?)(?:@(\d{1,12}))?$/;

/** What the agents' schema holds the text to before the host parses it: 16 readings of the longest kind. */
export const LIMITS_TEXT_MAX = MAX_READINGS * 130;
export const LIMITS_TEXT_RULE = 'WINDOW=PERCENT[@RESET_UNIX_SECONDS], several apart by commas or spaces, like five_hour=42.5@1765170000';

/** The readings the text says, or why it says none: a clear error naming the part that is not one. */
export function parseLimitsText(text: string): { ok: true; readings: RateLimitReading[] } | { ok: false; message: string } {
  const parts = text.split(/[\s,]+/).filter((p) => p.length > 0);
  if (parts.length === 0) return { ok: false, message: `no reading given: ${LIMITS_TEXT_RULE}` };
  if (parts.length > MAX_READINGS) return { ok: false, message: `at most ${MAX_READINGS} readings at once, not ${parts.length}` };
  const readings: RateLimitReading[] = [];
  const seen = new Set<string>();
  for (const p of parts) {
    const m = READING.exec(p);
    if (!m) return { ok: false, message: `'${p.slice(0, 60)}' is not a reading: ${LIMITS_TEXT_RULE}` };
    const [, window, pct, resets] = m as unknown as [string, string, string, string | undefined];
    const usedPct = Number(pct);
    if (usedPct > 100) return { ok: false, message: `'${p.slice(0, 60)}': a percent used is 0 to 100` };
    if (seen.has(window)) return { ok: false, message: `the window ${window} is given twice` };
    seen.add(window);
    readings.push({ window, usedPct, resetsAt: resets === undefined ? null : Number(resets) * 1000 });
  }
  return { ok: true, readings };
}

/** The readings as the text parseLimitsText reads back. */
export function limitsText(readings: readonly RateLimitReading[]): string {
  return readings.map((r) => `${r.window}=${Number(r.usedPct.toFixed(6))}${r.resetsAt === null ? '' : `@${Math.round(r.resetsAt / 1000)}`}`).join(',');
}
