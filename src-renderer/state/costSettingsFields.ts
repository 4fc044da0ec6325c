import type { Budget } from '../../src-shared/usage/budgets.js';
import type { ModelPrice } from '../../src-shared/usage/prices.js';

/**
 * The cost settings' fields as a person types them (issue 47, item 3 and the price table of item 2): a budget as
 * an amount and a unit, and the Thread's own prices as a line per model. Parsed here so a mistake is named beside
 * its field and nothing is sent; the board's schema (src-shared/board/schemas.ts) still checks every bound.
 */

/** A budget and a price as the board keeps them (src-shared/usage/budgets.ts, prices.ts). */
export type BudgetValue = Budget;
export type PriceValue = ModelPrice;

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/** `5`, `$5`, `4.50` dollars; `250000`, `250,000`, `250k`, `1.5M` tokens. Empty: no budget (null). */
export function parseBudget(text: string, unit: BudgetValue['unit']): Parsed<BudgetValue | null> {
  const t = text.trim().replace(/,/g, '');
  if (t === '') return { ok: true, value: null };
  if (unit === 'usd') {
    const m = /^\$?(\d+(?:\.\d+)?|\.\d+)$/.exec(t);
    const usd = m ? Number(m[1]) : NaN;
    if (!(usd > 0)) return { ok: false, error: `"${text.trim()}" is not an amount of dollars above nothing (e.g. 5 or 4.50)` };
    return { ok: true, value: { unit, limit: usd } };
  }
  const m = /^(\d+(?:\.\d+)?)\s*([kKmM]?)$/.exec(t);
  // k and M: how token counts are written on the cards and in the CLIs' status lines.
  const n = m ? Math.round(Number(m[1]) * (m[2] === '' ? 1 : m[2]!.toLowerCase() === 'k' ? 1_000 : 1_000_000)) : NaN;
  if (!(n > 0)) return { ok: false, error: `"${text.trim()}" is not a number of tokens above nothing (e.g. 250000, 250k or 1.5M)` };
  return { ok: true, value: { unit, limit: n } };
}

/** The field's text for a budget: what parseBudget reads back as the same budget. */
export function formatBudget(b: BudgetValue | null | undefined): string {
  return b ? String(b.limit) : '';
}

/**
 * The Thread's own prices, a line per model: `MODEL INPUT OUTPUT [CACHE-READ [CACHE-WRITE]]`, dollars per million
 * tokens. A cache price left out is the input's (the providers that do not bill a cache apart price it so).
 * Blank lines and `#` comments are skipped; a model named twice is a mistake, named with both lines.
 */
export function parsePrices(text: string): Parsed<Record<string, PriceValue>> {
  const out: Record<string, PriceValue> = {};
  const where: Record<string, number> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/#.*/, '').trim();
    if (line === '') continue;
    const [model, ...nums] = line.split(/\s+/);
    const at = `line ${i + 1}`;
    if (nums.length < 2 || nums.length > 4) return { ok: false, error: `${at}: a model and 2 to 4 prices (input, output, cache read, cache write), e.g. "my-model 3 15"` };
    const values = nums.map(Number);
    const bad = nums.find((n, k) => !/^\d+(\.\d+)?$/.test(n) || !Number.isFinite(values[k]));
    if (bad !== undefined) return { ok: false, error: `${at}: "${bad}" is not a price in dollars per million tokens` };
    if (where[model!] !== undefined) return { ok: false, error: `${at}: ${model} is priced on line ${where[model!]} already` };
    where[model!] = i + 1;
    const [input, output, cacheRead = input, cacheWrite = input] = values as [number, number, number?, number?];
    out[model!] = { input, output, cacheRead, cacheWrite };
  }
  return { ok: true, value: out };
}

/** The prices as the field shows them: a line per model, in the order parsePrices reads them back. */
export function formatPrices(prices: Readonly<Record<string, PriceValue>> | undefined): string {
  return Object.entries(prices ?? {})
    .map(([m, p]) => `${m} ${p.input} ${p.output} ${p.cacheRead} ${p.cacheWrite}`)
    .join('\n');
}

/** The same prices, whichever order they were typed in: whether a save changes them. */
export function samePrices(a: Readonly<Record<string, PriceValue>> | undefined, b: Readonly<Record<string, PriceValue>> | undefined): boolean {
  const norm = (p: Readonly<Record<string, PriceValue>> | undefined) => formatPrices(Object.fromEntries(Object.entries(p ?? {}).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))));
  return norm(a) === norm(b);
}
