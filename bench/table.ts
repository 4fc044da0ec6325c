/** One benchmark figure. Every bench module returns rows of these; run.ts prints them as one table. */
export interface Row {
  name: string;
  value: number;
  unit: string;
  note?: string;
}

export function printTable(title: string, rows: Row[]): void {
  const fmt = (v: number) => (Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(v >= 10 ? 1 : 3));
  const w0 = Math.max(...rows.map((r) => r.name.length), 10);
  const w1 = Math.max(...rows.map((r) => fmt(r.value).length), 5);
  const w2 = Math.max(...rows.map((r) => r.unit.length), 4);
  console.log(`\n${title}`);
  console.log(`${'measure'.padEnd(w0)}  ${'value'.padStart(w1)}  ${'unit'.padEnd(w2)}  note`);
  console.log(`${'-'.repeat(w0)}  ${'-'.repeat(w1)}  ${'-'.repeat(w2)}  ----`);
  for (const r of rows) console.log(`${r.name.padEnd(w0)}  ${fmt(r.value).padStart(w1)}  ${r.unit.padEnd(w2)}  ${r.note ?? ''}`);
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** The p-th percentile of values in any order (a sorted copy is taken). */
export function percentileOf(values: readonly number[], p: number): number {
  return percentile([...values].sort((a, b) => a - b), p);
}

export const median = (values: readonly number[]): number => percentileOf(values, 50);
