import type { DispatchMode } from '../../src-shared/board/dispatch.js';
import type { Budget } from '../../src-shared/usage/budgets.js';
import type { StoreApi } from 'zustand/vanilla';
import type { KeyedWindowMethod, WindowError, WindowMethod, WindowParams } from '../../src-shared/protocol/windowApi.js';
import { runsElsewhere } from './agentList.js';
import type { AppState } from './appState.js';
import type { CallHost } from './hostCall.js';
import { newWriteKey } from './writeKey.js';

/** What a person does to the board of the Thread on screen, each bound to the one call verb. */
export class BoardActions {
  constructor(
    private readonly store: StoreApi<AppState>,
    private readonly call: CallHost,
    /** An agent's name as the window shows it, for the banner's words. */
    private readonly nameOf: (agentId: string) => string,
  ) {}

  /** Closing ends the agent's process, which only the host that runs it has: another host's is not closed here. */
  private closable(agentId: string): boolean {
    return !runsElsewhere(this.state.agents[agentId]);
  }

  private get state(): AppState {
    return this.store.getState();
  }

  /** Run an action on the active Thread; true when the host accepted it (a refusal is in the banner). */
  private async act<M extends WindowMethod>(method: M, params: Omit<WindowParams<M>, 'key'>, action: string): Promise<boolean> {
    const key = this.state.activeKey;
    return key !== null && (await this.call(method, { ...params, key } as WindowParams<M>, action)).ok;
  }

  /** A board write: one action, so one idempotency key, which a resend of it carries too. */
  private write<M extends KeyedWindowMethod>(method: M, params: Omit<WindowParams<M>, 'key' | 'writeKey'>, action: string): Promise<boolean> {
    return this.act(method, { ...params, writeKey: newWriteKey() } as Omit<WindowParams<M>, 'key'>, action);
  }

  setGoal = (goal: string) => this.write('board.setGoal', { goal }, 'set the goal');
  setSettings = (patch: WindowParams<'board.setSettings'>['patch']) => this.write('board.setSettings', { patch }, 'change the Thread settings');
  addTask = (title: string, body?: string) => this.write('task.add', body ? { title, body } : { title }, 'add a task');
  editTask = (taskId: string, patch: { title?: string; body?: string }) => this.write('task.edit', { taskId, ...patch }, `edit ${taskId}`);
  /** What a task waits on (issue 34): replaces the list; [] for none. */
  setAfter = (taskId: string, after: string[]) => this.write('task.edit', { taskId, after }, `change what ${taskId} waits on`);
  setTakers = (taskId: string, takers: string[]) => this.write('task.setTakers', { taskId, for: takers }, `change who may take ${taskId}`);
  setAgentDispatch = (agentId: string, mode: DispatchMode, labels: string[]) => this.write('agent.setDispatch', { agentId, mode, labels }, 'change the agent\'s dispatch');
  blockTask = (taskId: string, reason: string) => this.write('task.block', { taskId, reason }, `block ${taskId}`);
  unblockTask = (taskId: string) => this.write('task.unblock', { taskId }, `unblock ${taskId}`);
  releaseTask = (taskId: string) => this.write('task.release', { taskId }, `release ${taskId}`);
  approveTask = async (taskId: string) => (await this.approveWithReason(taskId)) === null;
  /** Approve, answering why not: a refused merge (conflict, wrong token, a dirty or moved base, work this host
   *  cannot show) is shown in the review dialog beside the diff, as well as in the banner. */
  approveWithReason = async (taskId: string, seen?: string): Promise<WindowError | null> => {
    const key = this.state.activeKey;
    if (!key) return { code: 'no-thread', message: 'no Thread is open' };
    // `seen`: the commit the review dialog showed; the host approves that or nothing (issue 45).
    const r = await this.call('task.approve', { key, taskId, ...(seen ? { seen } : {}), writeKey: newWriteKey() }, `approve ${taskId}`);
    return r.ok ? null : r.error;
  };
  rejectTask = (taskId: string, reason: string) => this.write('task.reject', { taskId, reason }, `reject ${taskId}`);
  resetTask = (taskId: string) => this.write('task.reset', { taskId }, `reset ${taskId}`);
  /** The merge queue (issue 34): `before` null moves it to the end. */
  moveQueued = (taskId: string, before: string | null) => this.write('queue.move', { taskId, before }, `move ${taskId} in the merge queue`);
  removeQueued = (taskId: string) => this.write('queue.remove', { taskId }, `take ${taskId} out of the merge queue`);
  /** `force`: the person said yes to starting a task before what it waits on is done (the board notes it). */
  assignTask = (taskId: string, agentId: string, force = false) =>
    this.write('task.assign', force ? { taskId, agentId, force } : { taskId, agentId }, `assign ${taskId} to ${this.nameOf(agentId)}`);
  /** Issue 47: a task's budget, or the Thread's (`taskId` null); null removes it. Raising a spent one lets the
   *  board dispatch the task again. */
  setBudget = (taskId: string | null, budget: Budget | null) => this.write('budget.set', { taskId, budget }, taskId ? `set the budget of ${taskId}` : 'set the Thread\'s budget');
  closeAgent = async (agentId: string) => this.closable(agentId) && this.act('agent.close', { agentId }, `close ${this.nameOf(agentId)}`);
}
