import type { HardReleaseReason, HostGoneHow, RecordHost } from '../../../src-shared/board/model.js';
import { leaseRuns } from '../../../src-shared/board/lease.js';
import { stateAfterClaimEnd } from '../../../src-shared/board/claimEnd.js';
import type { EngineCore } from './engineCore.js';

/**
 * What the host's evidence does to leases: an agent seen alive renews its claims (with how quiet it was, the
 * evidence leases are chosen from), one waiting on a person too long lets them go, a gone agent, a stopping or
 * restarted host and a store outage each end or extend claims. Only signals about this host's own agents
 * (`core.mine`) touch claims at a stop or a restart; on a shared board the others are their hosts'.
 */
export class HostSignals {
  constructor(private readonly core: EngineCore) {}

  /**
   * The host's background check found the agent alive and making progress: extend every claim it holds.
   * A claim already past its deadline is not revived (a lapsed lease stays lapsed). `quietMs`: how long
   * the agent had gone without a sign of progress when the check saw it, the evidence leases are chosen
   * from; it rides on the renewal the check writes anyway, so the evidence adds no event.
   */
  renewLive(agentId: string, via: 'liveness' | 'waiting' = 'liveness', quietMs?: number): number {
    this.core.sweep();
    let n = 0;
    for (const { task, claim } of this.core.held(agentId)) if (this.core.extend(task, claim, via, via === 'liveness' ? quietMs : undefined).moved) n++;
    return n;
  }

  /**
   * The agent has waited on a person for longer than the Thread allows: its claims lapse now, with the
   * reason said, so the task goes back to the backlog for someone who can work on it. Not a failed attempt
   * (the task did not defeat the agent; nobody answered it).
   */
  endWaited(agentId: string): string[] {
    const { core } = this;
    core.sweep();
    // Work in review waits on the person too, and is held for them whatever the agent does meanwhile.
    const waited = core.held(agentId).filter((h) => leaseRuns(h.task));
    for (const { task, claim } of waited) core.end(task.id, claim, 'waited-too-long', stateAfterClaimEnd(task, 'waited-too-long', core.board.settings.poisonLimit));
    return waited.map((h) => h.task.id);
  }

  /**
   * A host of a shared board is gone (issue 45): its agents' claims end now (`host-lost` when it was lost, as
   * `host-stopped` when it left: a leaving host released them already, so these are any granted since), and
   * the board says so once, for every other host's windows. `running`: its agents still running as it went.
   */
  hostGone(host: RecordHost, how: HostGoneHow, agents: readonly string[], running: number): number {
    let claims = 0;
    for (const id of agents) claims += this.releaseAllHeldBy(id, how === 'lost' ? 'host-lost' : 'host-stopped').length;
    this.core.emit({ kind: 'host-gone', host: { id: host.id, name: host.name }, how, agents: running, claims });
    return claims;
  }

  /** A hard signal (pane closed, process exited): the agent is certainly gone, so its claims end now. */
  releaseAllHeldBy(agentId: string, reason: HardReleaseReason): string[] {
    this.core.sweep();
    return this.core.endAllOf(agentId, reason);
  }

  /** The host shuts: every claim ends now with the reason (no grace: nobody is there to work on them). */
  shutdown(reason: HardReleaseReason): number {
    let released = 0;
    for (const agentId of this.core.holders()) if (this.core.mine(agentId)) released += this.releaseAllHeldBy(agentId, reason).length;
    return released;
  }

  /**
   * After a restart or a resume from sleep: every live claim whose holder is still there gets at least a
   * full lease from now, so claims do not all lapse at once because the host was away (etcd extends every
   * lease on leader change for the same reason). Claims whose holders are gone are ended with `goneReason`
   * (the same for every holder, or each holder's own).
   */
  grace(isAlive: (agentId: string) => boolean, goneReason: HardReleaseReason | ((agentId: string) => HardReleaseReason) = 'host-restarted'): { extended: number; released: number } {
    let extended = 0;
    let released = 0;
    for (const agentId of this.core.holders()) {
      if (!this.core.mine(agentId)) continue;
      if (!isAlive(agentId)) {
        released += this.releaseAllHeldBy(agentId, typeof goneReason === 'function' ? goneReason(agentId) : goneReason).length;
        continue;
      }
      for (const { task, claim } of this.core.held(agentId)) if (this.core.extend(task, claim, 'grace').moved) extended++;
    }
    return { extended, released };
  }

  /**
   * The board's store could not be reached from `from` for `by` ms (pg/outage.ts): every claim whose lease still
   * ran at `from`, whoever holds it, runs on by `by`, so nobody's claim pays for the outage. Claims already due
   * by `from` are not revived. Returns how many were extended.
   */
  extendForOutage(from: number, by: number): number {
    let extended = 0;
    for (const agentId of this.core.holders()) {
      for (const { task, claim } of this.core.held(agentId)) {
        // A claim held in review does not count down (leaseRuns): there is nothing to move on.
        if (!leaseRuns(task) || claim.deadline <= from) continue;
        this.core.emit({ kind: 'renew', taskId: task.id, agentId, token: claim.token, deadline: claim.deadline + Math.round(by), via: 'outage' });
        extended++;
      }
    }
    return extended;
  }
}
