import type { BoardView, ClaimView, TaskView, WorktreeView } from '../../src-shared/protocol/views.js';

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

export function formatResult(method: string, r: unknown): string {
  switch (method) {
    case 'board':
      return formatBoard(r as BoardView);
    case 'show':
      return formatTask(r as TaskView);
    case 'claim': {
      const c = r as ClaimView & { title?: string; worktree?: (WorktreeView & { workdir?: string }) | null };
      const lines = [`Claimed ${c.taskId} "${c.title ?? ''}" with token ${c.token}; lease ${secs(c.remainingMs)}.`, `Pass --token ${c.token} to later writes on ${c.taskId}.`];
      if (c.worktree) lines.push(`Work in its git worktree, on branch ${c.worktree.branch}:`, `  cd '${c.worktree.workdir ?? c.worktree.path}'`);
      return lines.join('\n');
    }
    case 'renew':
    case 'note':
    case 'edit': {
      const c = r as ClaimView;
      return `${c.taskId}: ${method === 'renew' ? 'lease renewed' : method === 'note' ? 'note added' : 'edited'}, ${secs(c.remainingMs)} left.`;
    }
    case 'done':
      return `${(r as ClaimView).taskId} is in review.`;
    case 'fence': {
      const c = r as ClaimView;
      return `${c.taskId} is yours under token ${c.token}; ${secs(c.remainingMs)} left.`;
    }
    case 'release':
      return `Released ${(r as { taskId: string }).taskId}.`;
    case 'add': {
      const t = r as TaskView;
      return `Added ${t.id} "${t.title}".`;
    }
    default:
      return JSON.stringify(r, null, 2);
  }
}
