/**
 * The agents' conversations, as the panes start and resume them: each agent's record in the Thread's
 * AgentStore, its folder that outlives the host, and its CLI's session spec (src-main/agents/sessionSpecs).
 * A resumed agent is the same agent (id, name, record) on the same conversation, with a new process and a
 * new secret; its claims ended when its old process went and are not revived.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { Refusal } from '../base/procedureServer.js';
import type { AgentRegistry } from '../agents/agentRegistry.js';
import type { ProfileIdShared } from '../../src-shared/agents/profileIds.js';
import type { LaunchPlan } from '../agents/profileKit.js';
import { sessionSpecOf, type SessionContext } from '../agents/sessionSpecs.js';
import { AgentNumbers } from './agentNumbers.js';
import { AgentStore, type StoredAgent } from './agentStore.js';

const STATE_DIR_MODE = 0o700;

/** How a recorded agent ended: as its record says, or, with no word of it (it died while no host watched,
 *  or it was recorded before ends were), found gone. */
export function endedOf(a: StoredAgent): NonNullable<StoredAgent['ended']> {
  return a.ended ?? { how: 'found-gone', held: [], exit: null };
}

/** A process's end as its pty host saw it happen (KeptPanes.endOf): what the record lacks, taken from there. */
export interface SeenEnd {
  exit: { code: number; signal: number | null } | null;
  at: number | null;
  /** A board host was connected as it ended: it ended while its host ran (whose record of it was lost). */
  watched: boolean;
}

/** A record still saying running, of an agent that is gone: ended as its pty host saw it, if it did. */
function endedAs(a: StoredAgent, seen: SeenEnd | null): NonNullable<StoredAgent['ended']> {
  if (!seen) return endedOf(a);
  return { how: seen.watched ? 'exited' : 'found-gone', held: [], exit: seen.exit, ...(seen.at !== null ? { at: Math.round(seen.at) } : {}) };
}

export class AgentSessions {
  constructor(
    private readonly store: AgentStore,
    /** Parent of the agents' folders that outlive the host (in the Thread's data folder). */
    private readonly stateRoot: string,
    /** The numbers agent names used in this Thread, every profile's, shells too: they outlive the host. */
    readonly numbers: AgentNumbers,
    private readonly warn: (message: string) => void = () => undefined,
  ) {}

  static open(dataDir: string, warn?: (message: string) => void): AgentSessions {
    return new AgentSessions(AgentStore.open(join(dataDir, 'agents.json'), warn), join(dataDir, 'agents'), AgentNumbers.open(join(dataDir, 'agent-numbers.json'), warn), warn);
  }

  /** The agents of earlier runs, listed as exited so the window can offer a relaunch or a resume; names count
   *  on after theirs. A record that says running stays so only for an agent that lives on (`alive`: its pty
   *  host kept it); any other ended while no host watched it (it died with a host that went down, or while kept): found-gone. The
   *  records as they are now. */
  restoreInto(registry: AgentRegistry, now: number, alive: (id: string) => boolean = () => false, seenEnd: (id: string) => SeenEnd | null = () => null): StoredAgent[] {
    const restored = this.store.list();
    for (const a of restored) {
      registry.restore(a.id, a.profile, a.name, now);
      if (a.state === 'running' && !alive(a.id)) this.store.update(a.id, { state: 'exited', ended: endedAs(a, seenEnd(a.id)) });
    }
    this.numbers.sawAll(restored);
    return restored.map((a) => this.store.get(a.id) ?? a);
  }

  get(id: string): StoredAgent | undefined {
    return this.store.get(id);
  }

  stateDirOf(id: string): string {
    const dir = join(this.stateRoot, id);
    fs.mkdirSync(dir, { recursive: true, mode: STATE_DIR_MODE });
    return dir;
  }

  private context(a: StoredAgent, env: Record<string, string | undefined>): SessionContext {
    return { agentId: a.id, stateDir: this.stateDirOf(a.id), env, cwd: a.cwd, startedAt: a.startedAt };
  }

  /**
   * The plan with its conversation named: a first start records the id the CLI is given (if it takes one),
   * a resume points the CLI at `resumeId`. The record is written before the process starts, so a crash
   * right after still leaves its conversation findable.
   */
  plan(a: StoredAgent, plan: LaunchPlan, env: Record<string, string | undefined>, resumeId: string | null): LaunchPlan {
    const spec = sessionSpecOf(a.profile as ProfileIdShared);
    // Running again: how it ended before is over.
    const { ended: _over, ...running } = a;
    // A shell or a custom command has no conversation of its own, but is recorded all the same: after a
    // restart that ended it, the window lists it with how it ended and what it held, to relaunch.
    if (!spec) {
      this.store.put({ ...running, sessionId: null, state: 'running' });
      return plan;
    }
    const ctx = this.context(a, env);
    if (resumeId !== null) {
      this.store.put({ ...running, sessionId: resumeId, state: 'running' });
      return spec.resume(plan, resumeId, ctx);
    }
    const started = spec.start(plan, ctx);
    this.store.put({ ...running, sessionId: started.sessionId, state: 'running' });
    return started.plan;
  }

  /** Whether `id`'s conversation can be resumed: its CLI has a session spec and the agent has a record. */
  resumable(id: string): boolean {
    const a = this.store.get(id);
    return a !== undefined && sessionSpecOf(a.profile as ProfileIdShared) !== undefined;
  }

  /**
   * The conversation to resume `id` on: the recorded id, or, for a CLI that names its own sessions, the one
   * its session files show as this agent's. Refused with a reason a person can act on.
   */
  async resumeId(id: string, env: Record<string, string | undefined>): Promise<string> {
    const a = this.store.get(id);
    if (!a) throw new Refusal('no-such-agent', `agent ${id} has no record to resume from`);
    const spec = sessionSpecOf(a.profile as ProfileIdShared);
    if (!spec) throw new Refusal('not-resumable', `${a.name} (${a.profile}) has no conversation of its own to resume: relaunch it instead`);
    if (a.sessionId) return a.sessionId;
    const found = (await spec.find?.(this.context(a, env)).catch(() => null)) ?? null;
    if (!found) throw new Refusal('no-session', `${a.name} recorded no conversation to resume (it exited before its first exchange): relaunch it instead`);
    this.store.update(id, { sessionId: found });
    return found;
  }

  /** The agent's process is gone: the record says so (how, and what it held: the first word that named any
   *  task is kept, since a later word about the same end comes after its claims were released), and a
   *  conversation id the CLI chose is looked up now, while its files are fresh. */
  exited(id: string, env: Record<string, string | undefined>, ending: NonNullable<StoredAgent['ended']> = { how: 'exited', held: [], exit: null }): void {
    const a = this.store.get(id);
    if (!a) return;
    const before = a.state === 'exited' ? a.ended : undefined;
    try {
      this.store.update(id, {
        state: 'exited',
        ended: {
          how: ending.how,
          ...(ending.held.length ? { held: ending.held, titles: ending.titles, board: ending.board } : { held: before?.held ?? [], titles: before?.titles, board: before?.board }),
          exit: ending.exit ?? before?.exit ?? null,
          // The first word's time: the end itself, not the exit status that follows it.
          at: before?.at ?? ending.at ?? Date.now(),
        },
      });
    } catch (err) {
      // A record that cannot be written (a full disk) must not stop what reported the exit: a host's stop
      // goes on killing its other panes. The next start finds the agent gone and lists it as found gone.
      this.warn(`forkbench: could not record that ${a.name} ended (${(err as Error).message}); the next start lists it as found gone`);
      return;
    }
    const spec = sessionSpecOf(a.profile as ProfileIdShared);
    if (a.sessionId || !spec?.find) return;
    void spec
      .find(this.context(a, env))
      .then((found) => {
        if (found && this.store.get(id) && !this.store.get(id)!.sessionId) this.store.update(id, { sessionId: found });
      })
      .catch((err: Error) => this.warn(`forkbench: could not find ${a.name}'s conversation: ${err.message}`));
  }

  /** The person closed the agent's tab: its record and its folder go (the CLI's own files stay the CLI's). */
  forget(id: string): void {
    this.store.remove(id);
    fs.rmSync(join(this.stateRoot, id), { recursive: true, force: true });
  }
}
