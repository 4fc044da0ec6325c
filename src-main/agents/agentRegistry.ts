import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AgentStatus } from '../../src-shared/protocol/windowApi.js';
import { agentIdOf } from '../../src-shared/agents/agentIds.js';

/** What the host knows about one launched agent. A relaunch is a new agent with a new id and secret. */
export interface AgentRecord {
  readonly id: string;
  readonly name: string;
  readonly profile: string;
  /** 256 bits, random per launch; handed to the agent in its environment and never shown in the UI. Empty
   *  for an agent adopted after a board host restart, which is known by its digest alone: the pty host keeps
   *  no secret, and an empty one never authenticates. */
  readonly secret: string;
  /** SHA-256 of the secret, in hex: what a call's secret is checked against. */
  readonly secretDigest: string;
  status: AgentStatus;
  pid: number | null;
  exit: { code: number; signal: number | null } | null;
  /** performance.now() of the agent's last board call, for the liveness check. */
  lastBoardCallAt: number;
}

const digest = (s: string) => createHash('sha256').update(s).digest();
/** The digest of a secret as records and the pty host keep it. */
export const secretDigestOf = (secret: string): string => digest(secret).toString('hex');


/**
 * Agents by id and by secret. Lookup by secret hashes the presented value and compares digests in constant
 * time, so response timing says nothing about how much of a guess was right.
 */
export class AgentRegistry {
  private readonly byId = new Map<string, AgentRecord>();
  private readonly byDigest = new Map<string, AgentRecord>();
  private counter = 0;

  /** A new agent. Its id (agentIdOf) carries `n`, the number of its name ("shell 3"), so the window can still
   *  name it after it is gone; without one, this registry's own count. `now` is performance.now(): the
   *  clock lastBoardCallAt is kept in. */
  create(profile: string, name: string, now: number, n?: number): AgentRecord {
    this.counter++;
    const id = agentIdOf(profile, n ?? this.counter, randomBytes(6).toString('hex'));
    return this.register(id, name, profile, now);
  }

  private register(id: string, name: string, profile: string, now: number): AgentRecord {
    const secret = randomBytes(32).toString('base64url');
    const rec: AgentRecord = { id, name, profile, secret, secretDigest: secretDigestOf(secret), status: 'starting', pid: null, exit: null, lastBoardCallAt: now };
    this.byId.set(id, rec);
    this.byDigest.set(rec.secretDigest, rec);
    return rec;
  }

  /**
   * The same agent again (its conversation resumed): same id and name, a new secret and a fresh record. The
   * old secret stays dead, so a process of the old run cannot act as the new one.
   */
  revive(id: string, now: number): AgentRecord {
    const old = this.byId.get(id);
    if (!old) throw new Error(`no agent ${id}`);
    this.forgetSecret(id);
    return this.register(id, old.name, old.profile, now);
  }

  /** An agent of an earlier run of the host, listed as exited; its secret is never registered, so nothing
   *  can act as it until it is revived. */
  restore(id: string, profile: string, name: string, now: number): AgentRecord {
    const rec: AgentRecord = { id, name, profile, secret: '', secretDigest: '', status: 'exited', pid: null, exit: null, lastBoardCallAt: now };
    this.byId.set(id, rec);
    return rec;
  }

  /** An agent that outlived a board host (its pty host kept it): back under its own id and its secret's
   *  digest, so its next call is accepted as before. */
  adopt(r: { id: string; name: string; profile: string; secretDigest: string; pid: number }, now: number): AgentRecord {
    const rec: AgentRecord = { id: r.id, name: r.name, profile: r.profile, secret: '', secretDigest: r.secretDigest, status: 'running', pid: r.pid, exit: null, lastBoardCallAt: now };
    this.byId.set(rec.id, rec);
    this.byDigest.set(rec.secretDigest, rec);
    return rec;
  }

  get(id: string): AgentRecord | undefined {
    return this.byId.get(id);
  }

  all(): AgentRecord[] {
    return [...this.byId.values()];
  }

  /** The agent a secret belongs to, if it is alive. A dead agent's secret dies with it. */
  authenticate(secret: unknown): AgentRecord | null {
    if (typeof secret !== 'string' || secret.length === 0 || secret.length > 256) return null;
    const d = digest(secret);
    const rec = this.byDigest.get(d.toString('hex'));
    if (!rec || !timingSafeEqual(Buffer.from(rec.secretDigest, 'hex'), d)) return null;
    return rec.status === 'exited' ? null : rec;
  }

  /** Put `id` where `place` is in the order agents are listed (a relaunch takes its dead agent's tab). */
  moveTo(id: string, place: string): void {
    const rec = this.byId.get(id);
    if (!rec || !this.byId.has(place) || id === place) return;
    const order = [...this.byId.values()].filter((r) => r.id !== id);
    this.byId.clear();
    for (const r of order) {
      if (r.id === place) this.byId.set(id, rec);
      this.byId.set(r.id, r);
    }
  }

  /** Forget the agent altogether (its pane was closed). */
  remove(id: string): void {
    this.forgetSecret(id);
    this.byId.delete(id);
  }

  /** Forget the secret: nothing can act as this agent any more. */
  forgetSecret(id: string): void {
    const rec = this.byId.get(id);
    if (rec) this.byDigest.delete(rec.secretDigest);
  }
}
