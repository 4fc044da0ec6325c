/**
 * `npm run bench`: every benchmark, one table each, and the figures saved to bench-results/ for comparison
 * between runs. Numbers that matter are measured here, never asserted in a timed test.
 */
import * as fs from 'node:fs';
import { provideChromium } from '../e2e/npmChromium.js';
import { boardBench } from './boardBench.js';
import { printTable, type Row } from './table.js';

// The browser suites' Chromium: the machine's, else the npm package's (named before their modules load).
await provideChromium();
const suites: Array<[string, () => Promise<Row[]>]> = [['board', boardBench]];
for (const extra of ['./ptyBench.js', './agentBench.js', './gitBench.js', './windowBench.js', './restartBench.js', './browserBench.js', './snapshotBench.js', './pgBoardBench.js', './dependencyBench.js', './dispatchBench.js', './sandboxBench.js', './usageBench.js']) {
  const path = new URL(extra.replace(/\.js$/, '.ts'), import.meta.url);
  if (!fs.existsSync(path)) continue;
  const mod = (await import(extra)) as Record<string, unknown>;
  const fn = Object.values(mod).find((v) => typeof v === 'function') as (() => Promise<Row[]>) | undefined;
  if (fn) suites.push([extra.replace(/^\.\/|Bench\.js$/g, ''), fn]);
}
// `npm run bench -- browser pty` runs only the suites named; none named runs them all.
const only = process.argv.slice(2);
const unknown = only.filter((n) => !suites.some(([name]) => name === n));
if (unknown.length > 0) {
  console.error(`bench: no suite named ${unknown.join(', ')}; the suites are ${suites.map(([n]) => n).join(', ')}`);
  process.exit(2);
}
const all: Record<string, Row[]> = {};
for (const [name, fn] of suites) {
  if (only.length > 0 && !only.includes(name)) continue;
  process.stderr.write(`bench: ${name}…\n`);
  all[name] = await fn();
  printTable(name, all[name]);
}
fs.mkdirSync('bench-results', { recursive: true });
const file = `bench-results/bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
fs.writeFileSync(file, JSON.stringify({ node: process.version, at: new Date().toISOString(), results: all }, null, 2));
console.log(`\nsaved ${file}`);
