import { ok, type Result } from '../../../src-shared/board/result.js';
import type { RateLimitReading, UsageSource, UsageTurn } from '../../../src-shared/usage/usage.js';
import { planUsage, type UsageReadWindow, type UsageRecorded } from '../usageRecorder.js';
import type { EngineCore } from './engineCore.js';
import type { WriteLimits } from './writeLimits.js';

/** Usage (issue 47): what agents' CLIs spent, attributed to the claims they held as they spent it. */
export class UsageSteps {
  constructor(
    private readonly core: EngineCore,
    private readonly limits: WriteLimits,
  ) {}

  /**
   * What `agentId`'s CLI spent (turns read from its own records, or `forkbench usage`): each turn attributed by
   * its time to the claim the agent held then, grouped into one `usage` event per claim; a turn id recorded
   * before for this agent is skipped (usageRecorder.ts). Changes no claim and renews nothing: spending is not a
   * write on a task, and the liveness check sees a CLI at work already. An agent's own report (`report`) is
   * held to its write quota like any of its writes; the host's readers are not.
   */
  recordUsage(agentId: string, source: UsageSource, turns: readonly UsageTurn[], limits?: readonly RateLimitReading[], window?: UsageReadWindow): Result<UsageRecorded> {
    const { core } = this;
    core.sweep();
    if (source === 'report') {
      const limited = this.limits.admit(agentId, null, 'usage', turns.reduce((n, t) => n + (typeof t?.id === 'string' ? t.id.length : 0), 0), 0);
      if (limited) return limited;
    }
    const held = core.held(agentId).map(({ task, claim }) => ({ taskId: task.id, token: claim.token, from: claim.grantedAtWall, to: null }));
    const plan = planUsage(core.board, held, { agentId, source, turns, limits, receivedAt: core.clock.wall(), window });
    if (!plan.ok) return plan;
    for (const e of plan.value.events) core.emit(e);
    return ok(plan.value.recorded);
  }
}
