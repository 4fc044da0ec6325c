import { USER } from '../../../src-shared/board/model.js';
import { ok, reject, type Result } from '../../../src-shared/board/result.js';
import { agentDispatchOf, DispatchConstants, DISPATCH_ACTOR, dispatchOn, labelsOf, takersOf, taskBudgetSpent, threadBudgetSpent, type DispatchMode } from '../../../src-shared/board/dispatch.js';
import { budgetText, type Budget } from '../../../src-shared/usage/budgets.js';
import type { ClaimView } from '../../../src-shared/protocol/views.js';
import type { Task } from '../../../src-shared/board/model.js';
import type { DispatchPick } from '../takerIndexes.js';
import type { EngineCore } from './engineCore.js';
import type { WriteLimits } from './writeLimits.js';
import { sameList } from './lists.js';

/** Dispatch and budgets (issues 34 and 47): who may take a task, each agent's dispatch setting, the board
 *  giving an idle agent its next task, and the budgets that stop it. */
export class DispatchSteps {
  constructor(
    private readonly core: EngineCore,
    private readonly limits: WriteLimits,
  ) {}

  /** Who may take `taskId` when the board dispatches: `takers` (profiles, `label:` labels; empty: anyone). */
  setTakers(taskId: string, takers: readonly string[], by: string = USER): Result<Task> {
    const t = this.core.find(taskId);
    if (!t.ok) return t;
    if (sameList(takers, takersOf(t.value))) return t;
    return ok(this.core.step({ kind: 'for-set', taskId, for: [...takers], by }));
  }

  /** `agentId`'s own dispatch setting (`thread`: the Thread's default) and labels. */
  setAgentDispatch(agentId: string, mode: DispatchMode, labels: readonly string[], by: string = USER): Result<null> {
    const { core } = this;
    core.sweep();
    // An agent's own setting is one of its writes: a loop turning it on and off spends its quota, not the journal.
    const limited = by === USER ? null : this.limits.admit(by, null, 'dispatch', labels.join(',').length, 0);
    if (limited) return limited;
    const was = agentDispatchOf(core.board.settings, agentId);
    if (was && was.mode === mode && sameList(was.labels, labels)) return ok(null);
    const entries = Object.keys(core.board.settings.agentDispatch ?? {}).length;
    if (!was && entries >= DispatchConstants.maxAgentSettings && (mode !== 'thread' || labels.length))
      return reject('board-full', `${entries} agents have a dispatch setting of their own; set agents that are gone back to the Thread's default (forkbench dispatch thread) first`);
    core.emit({ kind: 'dispatch-set', agentId, mode, labels: [...labels], by });
    return ok(null);
  }

  /** What dispatch would grant `agentId` now (a read: nothing changes). */
  dispatchPick(agentId: string): DispatchPick {
    return this.core.takers.pick(agentId, labelsOf(this.core.board.settings, agentId), this.core.clock.now(), taskBudgetSpent);
  }

  /**
   * The board gives an idle agent the next ready task it may take: the one owner of dispatch
   * (host/dispatcher.ts) calls this when it saw the agent idle. The decision is one step of the engine, so it
   * is the same compare-and-set as a claim: two agents idle at once get a task each, never one task both. An
   * agent with dispatch off, or that holds any task (one in review included), is given nothing: a dispatched
   * agent holds at most one task.
   */
  dispatch(agentId: string): Result<ClaimView> {
    const { core } = this;
    core.sweep();
    if (!dispatchOn(core.board.settings, agentId)) return reject('bad-state', `dispatch is off for ${agentId}`);
    const held = core.claimsOf(agentId);
    if (held.length) return reject('bad-state', `${agentId} holds ${held.join(', ')}: the board dispatches only to an agent that holds nothing`);
    const { budget } = core.board.settings;
    if (budget && threadBudgetSpent(core.board.settings, core.board.costs.thread))
      return reject('bad-state', `the Thread's budget is spent (${budgetText(core.board.costs.thread, budget)}): the board dispatches nothing until a person raises it`);
    const pick = this.dispatchPick(agentId);
    if (pick.taskId === null)
      return reject('no-such-task', pick.wakeAt === null ? `no ready task ${agentId} may take` : `every ready task ${agentId} may take is backing off from it`);
    return ok(core.heldView(core.grant(pick.taskId, agentId, DISPATCH_ACTOR)));
  }

  /** Issue 47: a person sets (null: removes) the budget of `taskId`, or of the Thread (null). Setting the same
   *  budget again is no change and no event. */
  setBudget(taskId: string | null, budget: Budget | null, by: string = USER): Result<null> {
    const { core } = this;
    core.sweep();
    const t = taskId === null ? null : core.task(taskId);
    if (taskId !== null && !t) return reject('no-such-task', `no task ${taskId}`);
    const was = t ? (t.budget ?? null) : (core.board.settings.budget ?? null);
    if (was?.unit === budget?.unit && was?.limit === budget?.limit) return ok(null);
    core.emit({ kind: 'budget-set', taskId, budget, by });
    return ok(null);
  }
}
