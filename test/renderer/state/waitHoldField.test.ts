import { describe, expect, it } from 'vitest';
import { Limits } from '../../../src-shared/board/limits.js';
import { SettingsPatchSchema } from '../../../src-shared/board/schemas.js';
import { formatWaitHold, parseWaitHold, spellDuration, WaitHoldBounds } from '../../../src-renderer/state/waitHoldField.js';

describe("the Thread settings' wait hold field", () => {
  it('reads minutes, and gives back the default as the field shows it', () => {
    expect(parseWaitHold('45')).toEqual({ ok: true, ms: 45 * 60_000 });
    expect(parseWaitHold(' 1.5 ')).toEqual({ ok: true, ms: 90_000 });
    expect(formatWaitHold(Limits.defaultWaitHoldMs)).toBe('30');
    expect(formatWaitHold(90_000)).toBe('1.5');
    expect(parseWaitHold(formatWaitHold(Limits.defaultWaitHoldMs))).toEqual({ ok: true, ms: Limits.defaultWaitHoldMs });
  });

  it("holds the board's own bounds, and every value it lets through the board takes", () => {
    expect(WaitHoldBounds).toEqual({ minMinutes: Limits.minLeaseMs / 60_000, maxMinutes: 24 * 60 });
    expect(parseWaitHold(String(Limits.minLeaseMs / 60_000))).toEqual({ ok: true, ms: Limits.minLeaseMs });
    expect(parseWaitHold(String(24 * 60))).toEqual({ ok: true, ms: Limits.maxWaitHoldMs });
    expect(parseWaitHold('0.01')).toEqual({ ok: false, error: 'the wait hold must be at least 2 s' });
    expect(parseWaitHold('1441')).toEqual({ ok: false, error: 'the wait hold must be at most 24 h' });
    for (const text of ['0.034', '1', '30', '1439.99', '1440']) {
      const r = parseWaitHold(text);
      expect(r.ok, text).toBe(true);
      if (r.ok) expect(SettingsPatchSchema.safeParse({ waitHoldMs: r.ms }).success, text).toBe(true);
    }
  });

  it('names what is wrong with text that is no number', () => {
    expect(parseWaitHold('')).toEqual({ ok: false, error: 'the wait hold is empty: give it in minutes' });
    expect(parseWaitHold('half an hour')).toEqual({ ok: false, error: 'the wait hold "half an hour" is not a number of minutes' });
    expect(parseWaitHold('Infinity').ok).toBe(false);
    expect(parseWaitHold('-5')).toEqual({ ok: false, error: 'the wait hold must be at least 2 s' });
  });

  it('spells durations as a person reads them', () => {
    expect([2_000, 90_000, 30 * 60_000, 24 * 60 * 60_000].map(spellDuration)).toEqual(['2 s', '1.5 min', '30 min', '24 h']);
  });
});
