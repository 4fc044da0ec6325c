import type { CostAnswer } from '../../src-shared/protocol/agentMethods.js';
import type { BudgetView, SpendRow, TaskCostView, ThreadCostView } from '../../src-shared/usage/costView.js';
import type { SpendFigures } from '../../src-shared/usage/usage.js';
import { showControls } from '../../src-shared/text/controlChars.js';

/** `forkbench cost` for a person or agent in a shell (issue 47); `--json` prints the answer as it is. */

const line = (s: string) => showControls(s, 'none');
const n = (x: number) => x.toLocaleString('en');
/** Money to the cent, or to a tenth of a cent under a dollar (a turn costs fractions of one). */
const usd = (x: number) => `$${x.toFixed(x < 1 ? 3 : 2)}`;

/** `$0.283, 54,822 tokens (in 1,517 · out 305 · cache read 50,000 · cache write 3,000 · reasoning 40), 4 turns, 1 unpriced` */
function spendLine(s: SpendFigures): string {
  const t = s.tokens;
  const kinds = `in ${n(t.input)} · out ${n(t.output)} · cache read ${n(t.cacheRead)} · cache write ${n(t.cacheWrite)} · reasoning ${n(t.reasoning)}`;
  const unpriced = s.unpriced ? `, ${n(s.unpriced)} unpriced (tokens only)` : '';
  return `${usd(s.usd)}, ${n(t.input + t.output + t.cacheRead + t.cacheWrite)} tokens (${kinds}), ${n(s.turns)} turn${s.turns === 1 ? '' : 's'}${unpriced}`;
}

const budgetLine = (b: BudgetView | null) =>
  b ? `budget: ${b.budget.unit === 'usd' ? usd(b.budget.limit) : `${n(b.budget.limit)} tokens`}, ${Math.floor(b.used * 100)}% spent` : 'budget: none';

const hm = (ms: number) => {
  const m = Math.round(ms / 60_000);
  return m >= 60 ? `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m` : `${m}m`;
};

function formatTaskCost(v: TaskCostView): string {
  const lines = [`${v.taskId}  ${line(v.title)}  (${v.state})`, `spent: ${spendLine(v)}`, budgetLine(v.budget)];
  lines.push(`claims: ${v.claims}, lapses ${v.lapses}, commits ${v.commits}, worked under claims ${hm(v.wallMs)}`);
  if (v.byAgent.length) lines.push('per agent:', ...v.byAgent.map((a) => `  ${line(a.agentId)}: ${spendLine(a)}${a.lastActed ? ` (${a.lastActed} as the task it last acted on)` : ''}`));
  return lines.join('\n');
}

const rows = (title: string, rs: readonly SpendRow[], label = false) => (rs.length ? [title, ...rs.map((r) => `  ${line(r.key)}${label && r.label ? ` "${line(r.label)}"` : ''}: ${spendLine(r)}`)] : []);

/** Each agent's rate-limit headroom as its CLI last reported it (flat-rate plans): `five hour 58% left (resets
 *  2026-12-08T05:00:00Z)`. When it resets is said as a time, not a wait: the reading is as old as its report. */
function headroomRows(v: ThreadCostView): string[] {
  const withLimits = v.agents.filter((a) => a.limits.length > 0);
  if (!withLimits.length) return [];
  const reading = (r: ThreadCostView['agents'][number]['limits'][number]) =>
    `${line(r.window).replace(/_/g, ' ')} ${Number((100 - r.usedPct).toFixed(1))}% left${r.resetsAt === null ? '' : ` (resets ${new Date(r.resetsAt).toISOString().replace('.000Z', 'Z')})`}`;
  return ['rate-limit headroom, as each CLI last reported it:', ...withLimits.map((a) => `  ${line(a.key)}: ${a.limits.map(reading).join(', ')}`)];
}

function formatThreadCost(v: ThreadCostView): string {
  return [
    `Thread: ${spendLine(v.thread)}`,
    budgetLine(v.budget),
    `today: ${spendLine(v.today)}`,
    `this week: ${spendLine(v.week)}`,
    `(estimates from the price table of ${v.pricesOf} where the CLI gave no money, unless the Thread's settings price the model)`,
    ...rows('tasks, dearest first:', v.tasks, true),
    ...(v.moreTasks ? [`  … and ${v.moreTasks} more (forkbench cost --csv lists every one)`] : []),
    ...rows('agents:', v.agents),
    ...headroomRows(v),
    ...rows('profiles:', v.profiles),
    ...rows('days:', v.days),
  ].join('\n');
}

export function formatCost(r: CostAnswer): string {
  // CSV's own line ends are CRLF; a terminal and a shell's redirect want LF.
  if ('csv' in r) return r.csv.replace(/\r\n/g, '\n').replace(/\n$/, '');
  return 'task' in r ? formatTaskCost(r.task) : formatThreadCost(r.thread);
}
