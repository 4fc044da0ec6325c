import { budgetUse, type Budget } from './budgets.js';
import { addSpend, dayOf, NO_SPEND } from './costFold.js';
import { PRICE_TABLE_DATE } from './prices.js';
import type { CostBook, RateLimitReading, SpendFigures, TaskCost } from './usage.js';

/**
 * What every surface shows of cost (issue 47): `forkbench cost` and its MCP tool, the window's Thread summary
 * and details panel, the CSV export. Built on demand from what the board holds (Task.cost, Board.costs) and, for
 * one task, its events: nothing here is stored twice.
 */

/** A task as the views read it (the board's Task is one). */
export interface CostedTask {
  readonly id: string;
  readonly title: string;
  readonly state: string;
  /** How many times it was granted: its claims. */
  readonly attempts: number;
  readonly cost?: TaskCost | null;
  readonly budget?: Budget | null;
}

/** One agent's spend on a task, or in the Thread. */
export interface AgentSpend extends SpendFigures {
  readonly agentId: string;
  /** On a task: turns counted to it as the task the agent last acted on (it held several). */
  readonly lastActed?: number;
}

/** A budget and how much of it is spent (1 = all of it). */
export interface BudgetView {
  readonly budget: Budget;
  readonly used: number;
}

/** From a task's events: how long it was worked under claims, how its claims ended, what they committed. */
export interface ClaimFacts {
  /** Wall time (ms) under claims while being worked: from each grant to its done, end or reassignment
   *  (a review's wait is the person's time, not the claim's work); a live claim counts up to now. */
  readonly wallMs: number;
  /** Claims that lapsed (their lease ran out). */
  readonly lapses: number;
  /** Commits the board recorded as the task's work (the host's own base record not counted). */
  readonly commits: number;
}

export interface TaskCostView extends SpendFigures, ClaimFacts {
  readonly taskId: string;
  readonly title: string;
  readonly state: string;
  readonly claims: number;
  readonly byAgent: readonly AgentSpend[];
  /** [wall ms, usd, billed tokens], cumulative: the sparkline. */
  readonly spend: ReadonlyArray<readonly [number, number, number]>;
  readonly budget: BudgetView | null;
}

/** One row of a Thread's breakdown: a task, agent, profile or day, and what it spent. */
export interface SpendRow extends SpendFigures {
  readonly key: string;
  /** A task's title, an agent's profile; '' for a profile or a day. */
  readonly label: string;
}

export interface ThreadCostView {
  readonly thread: SpendFigures;
  readonly budget: BudgetView | null;
  /** The UTC day of `now`, and the seven UTC days ending with it. */
  readonly today: SpendFigures;
  readonly week: SpendFigures;
  /** Tasks that spent anything, dearest first (by money, then tokens), at most CostViewLimits.topTasks. */
  readonly tasks: readonly SpendRow[];
  /** Tasks that spent anything and are not in `tasks`. */
  readonly moreTasks: number;
  /** Per agent (`label`: its profile): its overhead (spent under no claim) apart, and the rate-limit headroom its
   *  CLI last reported (flat-rate plans). */
  readonly agents: ReadonlyArray<SpendRow & { readonly overhead: SpendFigures; readonly limits: readonly RateLimitReading[] }>;
  readonly profiles: readonly SpendRow[];
  /** Oldest first. */
  readonly days: readonly SpendRow[];
  /** The bundled price table's date: estimates are as of it, unless the Thread's own prices say otherwise. */
  readonly pricesOf: string;
}

export const CostViewLimits = {
  /** Tasks the Thread's view lists by name: a summary's "top tasks", and a terminal's screen of them. The CSV
   *  lists every one. */
  topTasks: 50,
  /** "This week": the seven UTC days ending today. */
  weekDays: 7,
} as const;

const DAY_MS = 86_400_000;
const budgetView = (spent: SpendFigures | null | undefined, budget: Budget | null | undefined): BudgetView | null => (budget ? { budget, used: budgetUse(spent, budget) } : null);
const figures = (s: SpendFigures): SpendFigures => ({ tokens: s.tokens, usd: s.usd, unpriced: s.unpriced, turns: s.turns });
const total = (s: SpendFigures): number => s.tokens.input + s.tokens.output + s.tokens.cacheRead + s.tokens.cacheWrite;
/** Dearest first: money, then tokens (a flat-rate plan's currency), then the key for a stable order. */
const dearestFirst = (a: SpendRow, b: SpendRow): number => b.usd - a.usd || total(b) - total(a) || a.key.localeCompare(b.key);

/** An event of a task's history as claimFacts reads it (the board's events are these). */
export interface LoggedEvent {
  readonly kind: string;
  readonly at: number;
}

/** How long a task was worked under claims, and its lapses and commits, from its events oldest first. */
export function claimFacts(events: readonly LoggedEvent[], nowWall: number): ClaimFacts {
  let wallMs = 0;
  let lapses = 0;
  let commits = 0;
  let since: number | null = null;
  const stop = (at: number) => {
    if (since !== null) wallMs += Math.max(0, at - since);
    since = null;
  };
  for (const e of events) {
    const x = e as LoggedEvent & { reason?: string; to?: string; record?: { token: number } };
    switch (x.kind) {
      case 'grant':
        stop(x.at);
        since = x.at;
        break;
      case 'reassign':
        stop(x.at);
        since = x.at;
        break;
      case 'returned':
        // Back to its holder: the work goes on under the same claim.
        if (x.to === 'claimed') since = x.at;
        break;
      case 'submitted':
        stop(x.at);
        break;
      case 'claim-ended':
        stop(x.at);
        if (x.reason === 'lapsed') lapses++;
        break;
      case 'branch-recorded':
        if ((x.record?.token ?? 0) > 0) commits++;
        break;
    }
  }
  stop(nowWall);
  return { wallMs, lapses, commits };
}

/** One task's cost: totals by kind, money, per agent, its sparkline and budget, and its claims' facts. */
export function taskCostView(t: CostedTask, events: readonly LoggedEvent[], nowWall: number): TaskCostView {
  const cost = t.cost ?? null;
  const byAgent = Object.entries(cost?.byAgent ?? {})
    .map(([agentId, s]): AgentSpend => ({ agentId, ...figures(s), lastActed: s.lastActed }))
    .sort((a, b) => b.usd - a.usd || total(b) - total(a) || a.agentId.localeCompare(b.agentId));
  return {
    taskId: t.id,
    title: t.title,
    state: t.state,
    ...figures(cost ?? NO_SPEND),
    claims: t.attempts,
    ...claimFacts(events, nowWall),
    byAgent,
    spend: cost?.spend ?? [],
    budget: budgetView(cost, t.budget),
  };
}

/** The Thread's cost: its total and budget, today and this week, the dearest tasks, and per agent, profile and day. */
export function threadCostView(tasks: Iterable<CostedTask>, book: CostBook, budget: Budget | null | undefined, nowWall: number): ThreadCostView {
  const rows = taskRows(tasks).sort(dearestFirst);
  const today = dayOf(nowWall);
  let week = NO_SPEND;
  for (let i = 0; i < CostViewLimits.weekDays; i++) {
    const d = book.days[dayOf(nowWall - i * DAY_MS)];
    if (d) week = addSpend(week, d);
  }
  return {
    thread: figures(book.thread),
    budget: budgetView(book.thread, budget),
    today: figures(book.days[today] ?? NO_SPEND),
    week: figures(week),
    tasks: rows.slice(0, CostViewLimits.topTasks),
    moreTasks: Math.max(0, rows.length - CostViewLimits.topTasks),
    agents: Object.entries(book.agents)
      .map(([key, a]) => ({ key, label: a.profile, ...figures(a), overhead: figures(a.overhead), limits: a.limits }))
      .sort(dearestFirst),
    profiles: Object.entries(book.profiles)
      .map(([key, s]) => ({ key, label: '', ...figures(s) }))
      .sort(dearestFirst),
    days: Object.entries(book.days)
      .map(([key, s]) => ({ key, label: '', ...figures(s) }))
      .sort((a, b) => a.key.localeCompare(b.key)),
    pricesOf: PRICE_TABLE_DATE,
  };
}

function taskRows(tasks: Iterable<CostedTask>): SpendRow[] {
  const out: SpendRow[] = [];
  for (const t of tasks) if (t.cost) out.push({ key: t.id, label: t.title, ...figures(t.cost) });
  return out;
}

const CSV_COLUMNS = ['scope', 'id', 'label', 'input', 'output', 'cache_read', 'cache_write', 'reasoning', 'usd', 'unpriced_turns', 'turns'] as const;

/**
 * A cell as a spreadsheet reads it: quoted when it holds a comma, quote or line break, and a text a spreadsheet
 * would take for a formula (=, +, -, @, or a tab or CR first) led by an apostrophe, so a task's title cannot
 * run as one in the person's spreadsheet.
 */
export function csvCell(v: string | number): string {
  if (typeof v === 'number') return String(v);
  const safe = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

function csvRow(scope: string, id: string, label: string, s: SpendFigures): string {
  const t = s.tokens;
  return [scope, id, label, t.input, t.output, t.cacheRead, t.cacheWrite, t.reasoning, s.usd, s.unpriced, s.turns].map(csvCell).join(',');
}

/**
 * The Thread's cost as CSV (RFC 4180, CRLF line ends): a header, then one row for the Thread, each task that spent
 * anything (all of them, dearest first), each agent (and its overhead, the spend under no claim), profile and day.
 */
export function threadCostCsv(tasks: Iterable<CostedTask>, book: CostBook): string {
  const lines: string[] = [CSV_COLUMNS.join(','), csvRow('thread', '', '', book.thread)];
  for (const r of taskRows(tasks).sort(dearestFirst)) lines.push(csvRow('task', r.key, r.label, r));
  for (const [id, a] of Object.entries(book.agents).sort(([x], [y]) => x.localeCompare(y))) {
    lines.push(csvRow('agent', id, a.profile, a));
    lines.push(csvRow('agent-overhead', id, a.profile, a.overhead));
  }
  for (const [id, s] of Object.entries(book.profiles).sort(([x], [y]) => x.localeCompare(y))) lines.push(csvRow('profile', id, '', s));
  for (const [id, s] of Object.entries(book.days).sort(([x], [y]) => x.localeCompare(y))) lines.push(csvRow('day', id, '', s));
  return `${lines.join('\r\n')}\r\n`;
}

/** One task's cost as CSV: its totals, then one row per agent that spent on it. */
export function taskCostCsv(v: TaskCostView): string {
  const lines: string[] = [CSV_COLUMNS.join(','), csvRow('task', v.taskId, v.title, v)];
  for (const a of v.byAgent) lines.push(csvRow('task-agent', a.agentId, v.taskId, a));
  return `${lines.join('\r\n')}\r\n`;
}
