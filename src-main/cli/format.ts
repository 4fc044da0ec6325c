import type { AgentMethod, AgentResults } from '../../src-shared/protocol/agentMethods.js';
import type { BoardView, ClaimView, TaskView } from '../../src-shared/protocol/views.js';

/** Human output for the CLI. `--json` bypasses all of this and prints the result object as is. */

const secs = (ms: number) => {
  const s = Math.ceil(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s` : `${s}s`;
};

const holder = (c: ClaimView | null) => (c ? `  [${c.agentId}, token ${c.token}, ${secs(c.remainingMs)} left]` : '');

export function formatBoard(b: BoardView): string {
  const lines = [`Goal: ${b.goal || '(none yet)'}`, `Lease: ${secs(b.leaseMs)}`, ''];
  if (!b.tasks.length) lines.push('No tasks yet. Add one: forkbench add "TITLE"');
  for (const t of b.tasks) lines.push(`${t.id.padEnd(6)} ${t.state.padEnd(15)} ${t.title}${holder(t.claim)}`);
  return lines.join('\n');
}

export function formatTask(t: TaskView): string {
  const lines = [`${t.id}  ${t.title}`, `state: ${t.state}${holder(t.claim)}`, `attempts: ${t.attempts}`];
  if (t.verify) lines.push(`verify: ${t.verify}`);
  if (t.worktree) lines.push(`worktree: ${t.worktree.path}`, `branch: ${t.worktree.branch} (from ${t.worktree.base})`);
  if (t.body) lines.push('', t.body);
  if (t.notes.length) lines.push('', 'notes:', ...t.notes.map((n) => `- ${n.by}: ${n.text}`));
  return lines.join('\n');
}

const secsLeft = (c: ClaimView) => secs(c.remainingMs);

/** One formatter per method, typed by what the method answers. */
const formatters: { [M in AgentMethod]: (r: AgentResults[M]) => string } = {
  board: formatBoard,
  show: formatTask,
  claim: (c) => {
    const lines = [`Claimed ${c.taskId} "${c.title ?? ''}" with token ${c.token}; lease ${secsLeft(c)}.`, `Pass --token ${c.token} to later writes on ${c.taskId}.`];
    if (c.worktree) lines.push(`Work in its git worktree, on branch ${c.worktree.branch}:`, `  cd '${c.worktree.workdir}'`, ...c.worktree.notes.map((n) => `Note: ${n}`));
    return lines.join('\n');
  },
  renew: (c) => `${c.taskId}: lease renewed, ${secsLeft(c)} left.`,
  note: (c) => `${c.taskId}: note added, ${secsLeft(c)} left.`,
  edit: (c) => `${c.taskId}: edited, ${secsLeft(c)} left.`,
  done: (c) => `${c.taskId} is in review.`,
  release: (r) => `Released ${r.taskId}.`,
  add: (t) => `Added ${t.id} "${t.title}".`,
  fence: (c) => `${c.taskId} is yours under token ${c.token}; ${secsLeft(c)} left.`,
  record: (r) => `${r.taskId}: ${r.sha.slice(0, 10)} recorded as its work under token ${r.token}.`,
};

export function formatResult<M extends AgentMethod>(method: M, r: AgentResults[M]): string {
  return formatters[method](r);
}
