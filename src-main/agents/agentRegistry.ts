import { timingSafeEqual } from 'node:crypto';
import { Agent, presentedDigest } from './agent.js';

/** Dead secrets remembered for the reports of late commits: more than the agents one session closes. */
const DEAD_SECRETS_KEPT = 512;

/**
 * The Roster's index of its agents, by id (in the order their tabs are listed) and by their secret's digest.
 * It writes nothing of an agent's own: each Agent alone moves its life. Lookup by secret hashes the presented
 * value and compares digests in constant time, so response timing says nothing about how much of a guess was
 * right.
 */
export class AgentRegistry {
  private readonly byId = new Map<string, Agent>();
  private readonly byDigest = new Map<string, Agent>();
  /** Digests of secrets that died with their agent (closed, exited, resumed anew), newest last: a git that
   *  finishes a commit after its pane closed reports with one, and what it moved is put back (issue 49). */
  private readonly dead = new Map<string, string>();
  private counter = 0;

  /** A new agent, about to start. `n` numbers its name ("shell 3"); without one, this registry's own count.
   *  `now` is performance.now(): the clock lastBoardCallAt is kept in. */
  create(profile: string, name: string, now: number, n?: number): Agent {
    this.counter++;
    return this.index(Agent.launched(profile, name, n ?? this.counter, now));
  }

  /** The same agent again (its conversation resumed): a new secret, indexed in place of the old one, which
   *  stays dead, so a process of the old run cannot act as the new one. */
  revive(id: string, now: number): Agent {
    const agent = this.byId.get(id);
    if (!agent) throw new Error(`no agent ${id}`);
    this.forgetSecret(id);
    agent.resumed(now);
    this.byDigest.set(agent.secretDigest, agent);
    return agent;
  }

  /** An agent of an earlier run of the host, listed as gone; nothing can act as it until it is revived. */
  restore(id: string, profile: string, name: string, now: number): Agent {
    const agent = Agent.restored(id, profile, name, now);
    this.byId.set(id, agent);
    return agent;
  }

  /** An agent that outlived a board host (its pty host kept it): back under its own id and its secret's
   *  digest, so its next call is accepted as before. */
  adopt(r: { id: string; name: string; profile: string; secretDigest: string; pid: number }, now: number): Agent {
    this.byId.get(r.id)?.dispose();
    return this.index(Agent.adopted(r, now));
  }

  private index(agent: Agent): Agent {
    this.byId.set(agent.id, agent);
    this.byDigest.set(agent.secretDigest, agent);
    return agent;
  }

  get(id: string): Agent | undefined {
    return this.byId.get(id);
  }

  all(): Agent[] {
    return [...this.byId.values()];
  }

  /** The agent a secret belongs to, if it is alive. A dead agent's secret dies with it. */
  authenticate(secret: unknown): Agent | null {
    const d = presentedDigest(secret);
    if (!d) return null;
    const agent = this.byDigest.get(d.toString('hex'));
    if (!agent || !timingSafeEqual(Buffer.from(agent.secretDigest, 'hex'), d)) return null;
    return agent.alive ? agent : null;
  }

  /** Put `id` where `place` is in the order agents are listed (a relaunch takes its dead agent's tab). */
  moveTo(id: string, place: string): void {
    const agent = this.byId.get(id);
    if (!agent || !this.byId.has(place) || id === place) return;
    const order = [...this.byId.values()].filter((a) => a.id !== id);
    this.byId.clear();
    for (const a of order) {
      if (a.id === place) this.byId.set(id, agent);
      this.byId.set(a.id, a);
    }
  }

  /** Forget the agent altogether (its tab was closed). */
  remove(id: string): void {
    this.forgetSecret(id);
    this.byId.get(id)?.dispose();
    this.byId.delete(id);
  }

  /** Forget the secret: nothing can act as this agent any more. */
  forgetSecret(id: string): void {
    const agent = this.byId.get(id);
    if (agent && this.byDigest.get(agent.secretDigest) === agent) {
      this.byDigest.delete(agent.secretDigest);
      this.dead.set(agent.secretDigest, id);
      // A session's closed agents, a few hundred at most; the oldest go first past that.
      if (this.dead.size > DEAD_SECRETS_KEPT) this.dead.delete(this.dead.keys().next().value as string);
    }
  }

  /** The id of the agent a dead secret belonged to (it acts as nobody), or null for any other value. */
  deadSecretOf(secret: unknown): string | null {
    const d = presentedDigest(secret);
    if (!d) return null;
    const hex = d.toString('hex');
    const id = this.dead.get(hex);
    return id !== undefined && timingSafeEqual(Buffer.from(hex, 'hex'), d) ? id : null;
  }
}
