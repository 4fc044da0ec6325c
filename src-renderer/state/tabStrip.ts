/** The agents' tab strip as arithmetic, without the DOM: which tab the next/previous keys go to. */

/** The agent `by` tabs from `active` (Ctrl+PgDn: +1, Ctrl+PgUp: -1), wrapping around at either end as a
 *  browser's tabs do; the first (or last) when none is selected; null without agents. */
export function stepTab(ids: readonly string[], active: string | null, by: 1 | -1): string | null {
  const n = ids.length;
  if (n === 0) return null;
  const at = active === null ? -1 : ids.indexOf(active);
  if (at < 0) return ids[by > 0 ? 0 : n - 1] ?? null;
  return ids[(((at + by) % n) + n) % n] ?? null;
}
