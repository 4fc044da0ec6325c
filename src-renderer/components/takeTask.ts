import { showControls } from '../../src-shared/text/controlChars.js';
import { waitingOn, waitingText } from '../../src-shared/board/dependencies.js';
import { agentLabel } from '../state/agentList.js';
import { standingFor } from '../state/standing.js';
import type { AppController } from '../state/controller.js';
import { askConfirm } from './confirm.js';
import { formatRemaining } from './Countdown.js';

/**
 * The question to ask before giving `taskId` to `agentId`, or null when there is nothing to ask: the task is
 * unclaimed, already that agent's, or held by an agent that has exited (whose work is over anyway). A task a
 * live agent holds is its work in progress: taking it fences that agent's branch at once, with no undo, and
 * in a crowded tab strip a drop lands on the wrong tab easily. So the person is told whose work it
 * interrupts, what that agent is doing and how long its lease still runs.
 */
export function takeQuestion(c: Pick<AppController, 'state' | 'clock' | 'agentName'>, taskId: string, agentId: string): { title: string; body: string; confirmLabel: string } | null {
  const task = c.state.board?.tasks.get(taskId);
  const holderId = task?.claim?.agentId;
  if (!task || !holderId || holderId === agentId) return null;
  const holder = c.state.agents[holderId];
  // Exited (or gone from the list): nothing of its is interrupted; its claim ends either way.
  if (!holder || holder.status === 'exited') return null;
  const from = agentLabel(holder);
  const to = c.agentName(agentId);
  // In the words its tab shows ("idle holding T-2", "working").
  const doing = standingFor(c.state, holder)?.words ?? holder.status;
  const left = formatRemaining(c.clock.remaining(task.claim!.deadline));
  const title = showControls(task.title, 'none');
  return {
    title: `Take ${taskId} from ${from}?`,
    body: `${taskId} "${title}" is held by ${from} (${doing}, ${left} left): take it from ${from} and give it to ${to}? ${from} can no longer commit to its branch.`,
    confirmLabel: `Give it to ${to}`,
  };
}

/**
 * The question to ask before giving a task that waits on others not done yet (issue 34): the board refuses
 * that unless forced, and notes a forced grant, so the person says yes knowing what it goes ahead of. Null
 * when the task waits on nothing that is not done.
 */
export function forceQuestion(c: Pick<AppController, 'state' | 'agentName'>, taskId: string, agentId: string): { title: string; body: string; confirmLabel: string } | null {
  const board = c.state.board;
  const task = board?.tasks.get(taskId);
  if (!board || !task) return null;
  const waits = waitingOn(board.tasks, task);
  if (waits.length === 0) return null;
  const to = c.agentName(agentId);
  return {
    title: `Start ${taskId} before ${waits.join(', ')} ${waits.length === 1 ? 'is' : 'are'} done?`,
    body: `${taskId} "${showControls(task.title, 'none')}" waits on ${waitingText(board.tasks, waits)}. Give it to ${to} anyway? The board notes that it was forced.`,
    confirmLabel: `Give it to ${to} anyway`,
  };
}

/**
 * Give `taskId` to `agentId` as a drop on a tab or "Assign to…" does, asking first when that takes it from a
 * live agent (takeQuestion), and when it waits on tasks not done yet (forceQuestion). Resolves whether it was
 * given (false: cancelled, refused, or nothing to do).
 */
export async function assignAsking(c: AppController, taskId: string, agentId: string): Promise<boolean> {
  if (c.state.board?.tasks.get(taskId)?.claim?.agentId === agentId) return false;
  const q = takeQuestion(c, taskId, agentId);
  if (q && !(await askConfirm(q.title, q.body, q.confirmLabel))) return false;
  const f = forceQuestion(c, taskId, agentId);
  if (f && !(await askConfirm(f.title, f.body, f.confirmLabel))) return false;
  return c.actions.assignTask(taskId, agentId, f !== null);
}
