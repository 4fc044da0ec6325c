import type { AgentMethod, QueueView } from '../../src-shared/protocol/agentMethods.js';
import type { AgentOutput } from '../../src-shared/protocol/agentSchemas.js';
import type { AgentStateView, BoardView, ClaimView, TaskView } from '../../src-shared/protocol/views.js';
import { SOURCE_WORDS, STATE_WORDS, type AgentStateInfo } from '../../src-shared/agents/agentLife.js';
import { showControls } from '../../src-shared/text/controlChars.js';
import type { RpcFailure } from './rpcClient.js';
import { refusal, refusalLine } from '../../src-shared/protocol/cliWords.js';
import { formatCost } from './costFormat.js';

/** Human output for the CLI. `--json` bypasses all of this and prints the result object as is (escaped by
 *  jsonShowControls). */

/**
 * Board text as it may be printed into a terminal: a journal written before the board refused control
 * characters can still hold an ESC or a C1 in a title or note, and printed raw it would act on the agent's
 * pane. `line` is for one-line fields (a newline there would forge a line of the listing), `text` for
 * bodies and notes.
 */
const line = (s: string) => showControls(s, 'none');
const text = (s: string) => showControls(s, 'tab-newline');

const secs = (ms: number) => {
  const s = Math.ceil(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s` : `${s}s`;
};

const holder = (c: ClaimView | null) => (c ? `  [${c.agentId}, token ${c.token}, ${c.held ? 'held while the person reviews' : `${secs(c.remainingMs)} left`}]` : '');

/**
 * How much of the goal `forkbench board` prints: the task list is what an agent runs it for, and a goal can be
 * 64 KiB; 600 characters is a long paragraph, about ten lines of a terminal.
 */
const GOAL_SHOWN_CHARS = 600;

function goalLine(goal: string): string {
  if (!goal) return '(none yet)';
  const chars = Array.from(goal); // by code point, so the cut never splits a surrogate pair
  if (chars.length <= GOAL_SHOWN_CHARS) return text(goal);
  return `${text(chars.slice(0, GOAL_SHOWN_CHARS).join(''))}… (${chars.length - GOAL_SHOWN_CHARS} more characters: forkbench board --json has it all)`;
}

export function formatBoard(b: BoardView): string {
  const lines = [`Goal: ${goalLine(b.goal)}`, `Lease: ${secs(b.leaseMs)}`, ''];
  if (!b.tasks.length) lines.push('No tasks yet. Add one: forkbench add "TITLE"');
  for (const t of b.tasks) lines.push(`${t.id.padEnd(6)} ${t.state.padEnd(15)} ${line(t.title)}${holder(t.claim)}${waits(t.waitingOn)}`);
  if (b.agents?.length) lines.push('', 'Agents:', ...b.agents.map(agentLine));
  return lines.join('\n');
}

/** One agent's state as the board lists it: `claude 1 (claude-1-…)  waiting for you (from its hook): Allow Bash?` */
function agentLine(a: AgentStateView): string {
  return `  ${line(a.name)} (${line(a.id)})  ${stateLine(a)}`;
}

const stateLine = (s: AgentStateInfo): string => `${STATE_WORDS[s.state]} (${SOURCE_WORDS[s.source]})${s.text ? `: ${line(s.text)}` : ''}`;

/** "  (waits on T-3, T-5)": the tasks not done yet that keep it from being ready. */
const waits = (ids: readonly string[] | undefined) => (ids?.length ? `  (waits on ${ids.join(', ')})` : '');

export function formatTask(t: TaskView): string {
  const lines = [`${t.id}  ${line(t.title)}`, `state: ${t.state}${holder(t.claim)}`, `attempts: ${t.attempts}`];
  if (t.after?.length) lines.push(`after: ${t.after.join(', ')}${t.waitingOn?.length ? ` (not done yet: ${t.waitingOn.join(', ')})` : ' (all done)'}`);
  if (t.for?.length) lines.push(`for: ${t.for.map(line).join(', ')} (only these are dispatched it)`);
  if (t.verify) lines.push(`verify: ${text(t.verify)}`);
  if (t.worktree) lines.push(`worktree: ${line(t.worktree.path)}`, `branch: ${line(t.worktree.branch)} (from ${line(t.worktree.base)})`);
  if (t.body) lines.push('', text(t.body));
  if (t.notes.length) lines.push('', 'notes:', ...t.notes.map((n) => `- ${line(n.by)}: ${text(n.text)}`));
  return lines.join('\n');
}

const secsLeft = (c: ClaimView) => secs(c.remainingMs);
/** A lease or a gap as the lease evidence's sentences say it: `180 s`. */
const wholeSecs = (ms: number) => `${Math.round(ms / 1000)} s`;

/** One formatter per method, typed by what the method answers. */
const formatters: { [M in AgentMethod]: (r: AgentOutput<M>) => string } = {
  board: formatBoard,
  show: formatTask,
  // `T-7 "title": open` and one line per reason, its code first, so a script can grep for it.
  why: (w) => [`${w.taskId} "${line(w.title)}": ${w.state}`, ...w.reasons.map((r) => `  ${r.code}: ${line(r.text)}`)].join('\n'),
  queue: formatQueue,
  'queue-move': formatQueue,
  claim: (c) => {
    const lines = [`Claimed ${c.taskId} "${line(c.title ?? '')}" with token ${c.token}; lease ${secsLeft(c)}.`, `Pass --token ${c.token} to later writes on ${c.taskId}.`];
    if (c.worktree) lines.push(`Work in its git worktree, on branch ${line(c.worktree.branch)}:`, `  cd '${line(c.worktree.workdir)}'`, ...c.worktree.notes.map((n) => `Note: ${text(n)}`));
    return lines.join('\n');
  },
  renew: (c) => `${c.taskId}: lease renewed, ${secsLeft(c)} left.`,
  note: (c) => `${c.taskId}: note added, ${secsLeft(c)} left.`,
  edit: (c) => `${c.taskId}: edited, ${secsLeft(c)} left.`,
  done: (c) => `${c.taskId} is in review.${c.warning ? `\nWarning: ${c.warning}` : ''}`,
  release: (r) => `Released ${r.taskId}.`,
  add: (t) => `Added ${t.id} "${line(t.title)}".`,
  fence: (c) => `${c.taskId} is yours under token ${c.token}; ${secsLeft(c)} left.`,
  record: (r) => `${r.taskId}: ${r.sha.slice(0, 10)} recorded as its work under token ${r.token}.`,
  status: (s) => `You are shown as ${stateLine(s)}.`,
  // One block per profile: its lease, the histogram as `range: count`, its lapses and reclaims, the suggestion.
  leases: (views) =>
    views.length === 0
      ? 'No lease evidence yet: it gathers as claims end (approved, lapsed).'
      : views
          .map((v) =>
            [
              `${line(v.label)}: lease ${wholeSecs(v.leaseMs)}${v.own ? ' (set for this profile)' : " (the Thread's)"}`,
              `  quiet gaps: ${v.gaps.map((g) => `${g.toMs === null ? `${wholeSecs(g.fromMs)}+` : `<${wholeSecs(g.toMs)}`}: ${g.count}`).join(', ')}`,
              `  lapses ${v.lapses}, live claims reclaimed ${v.reclaimed}`,
              ...(v.suggestion ? [`  ${line(v.suggestion.text)}`] : []),
            ].join('\n'),
          )
          .join('\n'),
  usage: (u) =>
    !u.recorded
      ? `Turn ${line(u.id)} was recorded before: not counted again.`
      : `Recorded ${u.tokens.toLocaleString('en')} tokens (turn ${line(u.id)}) ${u.taskId === null ? 'as your own overhead: you held no claim' : `to ${u.taskId}${u.how === 'last-acted' ? ', the task you last acted on of those you hold' : ''}`}.`,
  limits: (l) =>
    `${l.recorded ? 'Recorded' : 'Already recorded'} your rate-limit headroom: ${l.readings.map((r) => `${line(r.window)} ${Number(r.usedPct.toFixed(1))}% used${r.resetsAt === null ? '' : `, resets ${new Date(r.resetsAt).toISOString()}`}`).join('; ')}.`,
  dispatch: (d) =>
    `Dispatch ${d.mode === 'thread' ? "follows the Thread's default" : d.mode} for you: ${d.on ? 'when you are idle and hold nothing, the board gives you the next ready task you may take' : 'the board gives you nothing; claim tasks yourself'}.` +
    (d.labels.length ? ` Your labels: ${d.labels.map(line).join(', ')}.` : ''),
  cost: formatCost,
};

export function formatResult<M extends AgentMethod>(method: M, r: AgentOutput<M>): string {
  // Each field is escaped above for what it is; this pass catches whatever a later field forgets.
  return text(formatters[method](r));
}

/** The board's reason for refusing a call: the word it gave, else the JSON-RPC error code. */
export const refusalReason = (err: RpcFailure): string => (err.error.data as { reason?: string } | undefined)?.reason ?? String(err.error.code);

/** A refusal in one wording, whoever shows it: the CLI's stderr (after `forkbench: `) and an MCP tool's error. */
export const formatRefusal = (reason: string, message: string): string => refusal(line(reason), text(message));
/** The same refusal as the CLI prints it on stderr (the fence hooks print theirs with the same words). */
export const formatRefusalLine = (reason: string, message: string): string => refusalLine(line(reason), text(message));

/** The merge queue, first to land first: `1. T-3 "title"  (approved by user, waits on T-1)`. */
function formatQueue(q: QueueView): string {
  const check = q.verify ? `Each merge is checked with \`${text(q.verify)}\` before the base moves.` : 'No verify command is set: each merge lands unchecked, as approval did before the queue.';
  if (!q.items.length) return `The merge queue is empty. ${check}`;
  const lines = [`Merge queue (${q.items.length}, first to land first). ${check}`];
  for (const i of q.items) {
    const how = [i.landing ? 'landing now' : null, `approved by ${line(i.by)}`, i.waitsOn.length ? `waits on ${i.waitsOn.join(', ')}` : null].filter(Boolean).join(', ');
    lines.push(`${String(i.position).padStart(3)}. ${i.taskId.padEnd(6)} "${line(i.title)}"  (${how})`);
  }
  return lines.join('\n');
}
