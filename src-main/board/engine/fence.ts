import type { AgentWriteOp } from '../../../src-shared/board/events.js';
import { claimLapsed } from '../../../src-shared/board/lease.js';
import { ok, type Result } from '../../../src-shared/board/result.js';
import type { EngineCore, Held } from './engineCore.js';
import type { WriteLimits } from './writeLimits.js';

/**
 * The fence. A write lands only if the task's current claim is this agent's, carries this token (when the
 * agent names one; without it, identity alone), and has not reached its deadline. Answers the claim and its
 * task, as they are after the sweep the check starts with.
 */
export class Fence {
  constructor(
    private readonly core: EngineCore,
    private readonly limits: WriteLimits,
  ) {}

  check(agentId: string, taskId: string, token: number | undefined, op: AgentWriteOp): Result<Held> {
    this.core.sweep();
    const tok = token ?? null;
    const t = this.core.task(taskId);
    if (!t) return this.limits.refuse(agentId, taskId, tok, op, 'no-such-task', `no task ${taskId}`);
    const c = t.claim;
    if (c && c.agentId === agentId) {
      if (token !== undefined && token !== c.token)
        return this.limits.refuse(agentId, taskId, tok, op, 'stale-token', `token ${token} is from an earlier claim of ${taskId}; your current token is ${c.token}`);
      if (claimLapsed({ state: t.state, claim: c }, this.core.clock.now())) return this.limits.refuse(agentId, taskId, tok, op, 'lapsed', `your lease on ${taskId} has lapsed`);
      return ok({ task: t, claim: c });
    }
    const last = t.lastClaim;
    if (last && last.agentId === agentId && (token === undefined || token === last.token)) {
      if (last.reason === 'lapsed') return this.limits.refuse(agentId, taskId, tok, op, 'lapsed', `your lease on ${taskId} lapsed; claim it again if it is still open`);
      return this.limits.refuse(agentId, taskId, tok, op, 'stale-token', `your claim on ${taskId} ended (${last.reason})`);
    }
    if (token !== undefined && token < this.core.board.nextToken && (!c || token !== c.token) && last?.agentId === agentId)
      return this.limits.refuse(agentId, taskId, tok, op, 'stale-token', `token ${token} is from an earlier claim of ${taskId}`);
    const who = c ? `${c.agentId} holds ${taskId}` : `nobody holds ${taskId}`;
    return this.limits.refuse(agentId, taskId, tok, op, 'not-holder', `${who}; you do not`);
  }
}
