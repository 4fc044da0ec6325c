import type * as net from 'node:net';
import { realTimers, type Timers } from '../base/timers.js';

/**
 * How much of the host the agents' socket lets connections hold (issue 29, finding 3): 2,000 connections
 * each holding an unfinished 1 MiB line took serve from 70 MB to 2.05 GB, and 1,100 idle ones used up a
 * 1024-descriptor limit, so other agents' calls failed and a timer's EMFILE stopped the host.
 */
export const ConnectionLimits = {
  /** Connections held at once, all kinds: a quarter of the common 1024-descriptor soft limit, so panes,
   *  the board's files, git and the window keep the rest even if every one of these is taken. */
  maxConnections: 256,
  /** Connections that have not yet authenticated: a CLI call sends its request at once, so few are ever
   *  waiting; past this, the oldest waiting one is closed to make room (a flood pushes out only itself). */
  maxUnauthenticated: 64,
  /** Authenticated connections of one agent: its MCP server holds one, each CLI call one more while it
   *  runs; 16 is more parallel calls than any agent makes, and bounds what one agent's secret can hold. */
  maxPerAgent: 16,
  /** How long a connection may wait to authenticate: a real client sends its request within milliseconds
   *  of connecting; 5 s leaves room for a host loaded to a standstill, and bounds how long a slot is held. */
  unauthenticatedDeadlineMs: 5_000,
  /** Bytes a connection may send before it authenticates: the largest real request (a 64 Ki-character body
   *  and a 500-character title, every character escaped as two) fits with room; the full frame limit,
   *  1 MiB, applies only after. 64 waiting connections hold at most 12 MiB this way. */
  unauthenticatedBytes: 192 * 1024,
  /** Answers queued for a reader that does not read: past this, the connection's requests are not read
   *  until it drains, so a client that never reads cannot make the host buffer answers without end. */
  maxQueuedAnswerBytes: 1024 * 1024,
} as const;

export type Limits = { -readonly [K in keyof typeof ConnectionLimits]: number };

/** Why a connection is closed by the budget, said to its client before the close. */
export type Closing = (c: net.Socket, why: string) => void;

/**
 * The one owner of the socket's connection counts: which connections are waiting to authenticate (oldest
 * first), whose the authenticated ones are, and each waiting one's deadline. It admits, binds and drops;
 * the socket asks it at accept, at a connection's first authenticated call, and at close.
 */
export class ConnectionBudget {
  /** Waiting connections, in the order they came (a Map keeps insertion order), with their deadlines. */
  private readonly waiting = new Map<net.Socket, unknown>();
  private readonly ownerOf = new Map<net.Socket, string>();
  private readonly perAgent = new Map<string, Set<net.Socket>>();
  /** Connections with requests being answered (how many): never closed to make room under their caller's feet. */
  private readonly busy = new Map<net.Socket, number>();
  private total = 0;

  constructor(
    private readonly close: Closing,
    readonly limits: Limits = { ...ConnectionLimits },
    private readonly timers: Timers = realTimers,
  ) {}

  /** A new connection: false (and nothing held) when the socket is full; else it waits to authenticate. */
  admit(c: net.Socket): boolean {
    if (this.total >= this.limits.maxConnections) return false;
    this.total++;
    const timer = this.timers.setTimeout(() => {
      if (this.waiting.has(c) && !this.busy.has(c)) this.closeNow(c, `no authenticated request within ${this.limits.unauthenticatedDeadlineMs} ms of connecting`);
    }, this.limits.unauthenticatedDeadlineMs);
    this.timers.unref?.(timer);
    this.waiting.set(c, timer);
    if (this.waiting.size > this.limits.maxUnauthenticated) {
      for (const old of this.waiting.keys()) {
        if (old === c || this.busy.has(old)) continue;
        this.closeNow(old, `too many connections waiting to authenticate (${this.limits.maxUnauthenticated}); the oldest goes first`);
        break;
      }
    }
    return true;
  }

  /** Whether the connection has authenticated (as anyone). */
  isAuthenticated(c: net.Socket): boolean {
    return this.ownerOf.has(c);
  }

  /** The connection's first authenticated call, as `agentId`: false when that agent holds its share. */
  bind(c: net.Socket, agentId: string): boolean {
    if (this.ownerOf.has(c)) return this.ownerOf.get(c) === agentId;
    // Gone while its call was being checked: its close has been counted already, so it takes no share.
    if (c.destroyed || !this.waiting.has(c)) return false;
    const mine = this.perAgent.get(agentId) ?? new Set<net.Socket>();
    if (mine.size >= this.limits.maxPerAgent) return false;
    this.stopWaiting(c);
    this.ownerOf.set(c, agentId);
    mine.add(c);
    this.perAgent.set(agentId, mine);
    return true;
  }

  /** A request on `c` is being answered (true) or has been (false); requests may queue on one connection. */
  setBusy(c: net.Socket, busy: boolean): void {
    const n = (this.busy.get(c) ?? 0) + (busy ? 1 : -1);
    if (n > 0) this.busy.set(c, n);
    else this.busy.delete(c);
  }

  /** The connection closed: whatever it held is free again. Safe to call twice. */
  drop(c: net.Socket): void {
    const wasWaiting = this.stopWaiting(c);
    const owner = this.ownerOf.get(c);
    this.busy.delete(c);
    if (owner !== undefined) {
      this.ownerOf.delete(c);
      const mine = this.perAgent.get(owner);
      mine?.delete(c);
      if (mine?.size === 0) this.perAgent.delete(owner);
    }
    if (wasWaiting || owner !== undefined) this.total--;
  }

  /** Counts, for tests and the bench: how many connections are held, and how many wait. */
  get counts(): { total: number; waiting: number } {
    return { total: this.total, waiting: this.waiting.size };
  }

  /** Closed by the budget: its slot is free at once, not when the close event comes round. */
  private closeNow(c: net.Socket, why: string): void {
    this.drop(c);
    this.close(c, why);
  }

  private stopWaiting(c: net.Socket): boolean {
    if (!this.waiting.has(c)) return false;
    this.timers.clearTimeout(this.waiting.get(c));
    this.waiting.delete(c);
    return true;
  }

  /** Every deadline cleared (the socket is closing). */
  dispose(): void {
    for (const t of this.waiting.values()) this.timers.clearTimeout(t);
    this.waiting.clear();
  }
}
