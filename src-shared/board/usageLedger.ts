import type { BoardEvent } from './events.js';
import type { UsageAttribution, UsagePosition, UsageSource } from '../usage/usage.js';

/**
 * What the board must remember to attribute an agent's usage after the fact (issue 47): which claims each
 * agent held over time, which of them it last acted on, and which of its CLI's turns are recorded already.
 * A CLI's records are read some seconds after the turn (a reader polls), and after a host restart perhaps
 * minutes after, by which time the claim the turn was spent under may have ended, been reassigned, or be one
 * of several: so the attribution is by the turn's time against this history, not against the claims held at
 * the moment of reading.
 *
 * Folded from the board's events by the reducer, so it is the same on every host and after every restart (a
 * snapshot file carries it). Its map of agents is changed in place, as the board's map of tasks is: the fold runs
 * on every event, and a copy of the whole map per event made every claim, renewal and note cost as many agents as
 * the ledger holds (claims at 1k tasks fell from ~41k/s to ~9.6k/s, at 10k tasks from ~25k/s to ~2.8k/s). Each
 * agent's entry is replaced, never edited, so copying the map (copyLedger, in copyBoard) is all a copy of the
 * board needs. Bounded per agent and in agents, so a long-lived Thread's board carries a few kilobytes per agent.
 */

/** One claim of an agent: from its grant to its end (wall ms, as the events say), `to` null while held. */
export interface ClaimSpan {
  readonly taskId: string;
  readonly token: number;
  readonly from: number;
  readonly to: number | null;
}

/** The agent turned to a task: its grant, or its first write on it after writing on another. */
export interface ActedOn {
  readonly taskId: string;
  readonly token: number;
  readonly at: number;
}

export interface AgentLedger {
  /** Its latest claims, oldest first. */
  readonly spans: readonly ClaimSpan[];
  /** Each time it turned from one task to another, oldest first (a run of writes on one task is one entry). */
  readonly acted: readonly ActedOn[];
  /** Digests (turnDigest) of the turn ids recorded for it, oldest first. */
  readonly seen: readonly string[];
  /**
   * Per record stream of its CLI (by markKey), the highest mark a recorded read reached: every turn placed
   * before it was handed to the board then, so one read again (a restart reads every file from its start) is
   * known counted though its id has left `seen`. Least recently advanced first. Absent on boards from before.
   */
  readonly marks?: Readonly<Record<string, number>>;
}

export interface UsageLedger {
  /** In the order they were last heard of, least recently first: the first is the one forgotten for a new one. */
  readonly agents: Map<string, AgentLedger>;
}

/** A ledger as a snapshot keeps it: the agents in the map's order (an agent id starts with a letter, so JSON
 *  keeps its keys in that order). */
export interface SerializedLedger {
  readonly agents: Readonly<Record<string, AgentLedger>>;
}

export const emptyLedger = (): UsageLedger => ({ agents: new Map() });

/** A ledger the copy of a board owns: the agents' entries are shared (never edited), the map is its own. */
export const copyLedger = (l: UsageLedger): UsageLedger => ({ agents: new Map(l.agents) });

export const serializeLedger = (l: UsageLedger): SerializedLedger => ({ agents: Object.fromEntries(l.agents) });

export const deserializeLedger = (s: SerializedLedger | undefined): UsageLedger => ({ agents: new Map(Object.entries(s?.agents ?? {})) });

export const LedgerBounds = {
  /** Claims kept per agent: an agent holds at most a few at once (the claim limit is 3) and a claim lasts
   *  minutes to hours, so 64 reach back past any restart or reader's delay by far. */
  spans: 64,
  /** Task switches kept per agent: 256 switches between held claims reach back hours even for an agent that
   *  juggles its three claims every minute, and a switch older than every kept claim is never asked. */
  acted: 256,
  /** Recorded turn ids kept per agent: a busy agent makes a turn every ~10 s, so 4,096 are over 10 hours of
   *  turns, while a re-read after a restart starts where the reader's record says it got to (its ids only
   *  guard the lines around that point). A digest is ~11 characters: ~50 KB per agent at most. */
  seen: 4096,
  /** Record streams kept per agent: a Claude or Gemini session is one file, a Codex session one file per
   *  resume; 64 resumes of one agent is far past any. The least recently advanced goes (its turns are then
   *  guarded by `seen` alone, as before marks). */
  marks: 64,
  /** Agents kept: a Thread runs a dozen at once; 256 is weeks of relaunches. The least recently heard of goes. */
  agents: 256,
} as const;

const EMPTY_AGENT: AgentLedger = { spans: [], acted: [], seen: [] };

/**
 * A short digest of a turn id (cyrb53: 53 bits, base 36), so the ledger keeps ~11 characters per turn however
 * long the id (a file path and offset can be hundreds). Among the 4,096 kept per agent the chance of two
 * colliding is about 4096² / 2⁵⁴, under one in a billion; a collision would skip one turn, never count one twice.
 */
export function turnDigest(id: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

/** The ledger's key of one stream of one source's records: a digest, so a long file name costs ~11 characters. */
export function markKey(source: UsageSource, stream: string): string {
  return turnDigest(`${source}\n${stream}`);
}

/** The mark recorded for `source`'s stream `stream`: every turn placed before it is counted; undefined when none. */
export function markOf(agent: AgentLedger | undefined, source: UsageSource, stream: string): number | undefined {
  return agent?.marks?.[markKey(source, stream)];
}

/** `marks` with each of `next` raised to, never lowered: a mark only grows (an older read's is already passed). */
function raised(marks: Readonly<Record<string, number>> | undefined, source: UsageSource, next: readonly UsagePosition[]): Readonly<Record<string, number>> | undefined {
  let out: Record<string, number> | undefined;
  for (const m of next) {
    const k = markKey(source, m.stream);
    const was = (out ?? marks)?.[k];
    if (was !== undefined && was >= m.at) continue;
    out ??= { ...marks };
    // Deleted and set again: the object's key order is then least recently advanced first.
    delete out[k];
    out[k] = m.at;
  }
  if (!out) return marks;
  const keys = Object.keys(out);
  for (const k of keys.slice(0, Math.max(0, keys.length - LedgerBounds.marks))) delete out[k];
  return out;
}

const keepLast = <T>(xs: readonly T[], n: number): readonly T[] => (xs.length > n ? xs.slice(xs.length - n) : xs);

/** The ledger with `agentId`'s entry replaced by f of it: it moves to the map's end (heard of last), and a new
 *  agent past the bound has the least recently heard of forgotten (the map's first). Changes `l` and returns it.
 *  By the events' order, not their wall times, so every host forgets the same agent. */
function withAgent(l: UsageLedger, agentId: string, f: (a: AgentLedger) => AgentLedger): UsageLedger {
  const was = l.agents.get(agentId);
  l.agents.delete(agentId);
  l.agents.set(agentId, f(was ?? EMPTY_AGENT));
  if (!was && l.agents.size > LedgerBounds.agents) l.agents.delete(l.agents.keys().next().value as string);
  return l;
}

const opened = (a: AgentLedger, taskId: string, token: number, at: number): AgentLedger => ({
  ...a,
  spans: keepLast([...a.spans, { taskId, token, from: at, to: null }], LedgerBounds.spans),
  acted: keepLast([...a.acted, { taskId, token, at }], LedgerBounds.acted),
});

const closed = (a: AgentLedger, token: number, at: number): AgentLedger => {
  const i = a.spans.findIndex((s) => s.token === token && s.to === null);
  if (i < 0) return a;
  const spans = [...a.spans];
  spans[i] = { ...(spans[i] as ClaimSpan), to: at };
  return { ...a, spans };
};

/** Whether a write on `taskId` under `token` is a turn to another task than the one it last acted on. */
function turnsTo(l: UsageLedger, agentId: string, token: number): boolean {
  const last = l.agents.get(agentId)?.acted.at(-1);
  return last?.token !== token;
}

/**
 * The ledger after event `e`: `l` itself, changed in place where `e` is about an agent's claims or turns (the
 * reducer's own board's ledger). A renewal (the hot path) only looks at the agent's last switch.
 */
export function foldUsageLedger(l: UsageLedger, e: BoardEvent): UsageLedger {
  switch (e.kind) {
    case 'grant':
      return withAgent(l, e.agentId, (a) => opened(a, e.taskId, e.token, e.at));
    case 'reassign': {
      const from = withAgent(l, e.from.agentId, (a) => closed(a, e.from.token, e.at));
      return withAgent(from, e.to.agentId, (a) => opened(a, e.taskId, e.to.token, e.at));
    }
    case 'claim-ended':
      return withAgent(l, e.agentId, (a) => closed(a, e.token, e.at));
    // An agent's own write on a task (a note, an edit, a commit's fence, done) renews it via `write`: acting on it.
    case 'renew':
      if (e.via !== 'write' || !turnsTo(l, e.agentId, e.token)) return l;
      return withAgent(l, e.agentId, (a) => ({ ...a, acted: keepLast([...a.acted, { taskId: e.taskId, token: e.token, at: e.at }], LedgerBounds.acted) }));
    case 'submitted':
      if (!turnsTo(l, e.agentId, e.token)) return l;
      return withAgent(l, e.agentId, (a) => ({ ...a, acted: keepLast([...a.acted, { taskId: e.taskId, token: e.token, at: e.at }], LedgerBounds.acted) }));
    case 'usage':
      return withAgent(l, e.agentId, (a) => {
        const next = { ...a, seen: keepLast([...a.seen, ...e.turns.map((t) => turnDigest(t.id))], LedgerBounds.seen) };
        const marks = e.marks?.length ? raised(a.marks, e.source, e.marks) : a.marks;
        return marks ? { ...next, marks } : next;
      });
    default:
      return l;
  }
}

/** Where a turn spent at `at` (wall ms) goes: a claim, or the agent's own overhead. */
export interface Attributed {
  readonly taskId: string | null;
  readonly token: number | null;
  readonly how: UsageAttribution;
}

export const OVERHEAD: Attributed = { taskId: null, token: null, how: 'overhead' };

/**
 * The claim `agent` held at `at`: the one it held, or among several the one it last acted on at or before
 * `at` (the latest granted, when it acted on none of them since), or none. `held`: claims it holds now that
 * the ledger has no span for (granted on a board from before the ledger), counted as held from their grant.
 */
export function claimAt(agent: AgentLedger | undefined, at: number, held: readonly ClaimSpan[] = []): Attributed {
  const spans = agent?.spans ?? [];
  const known = new Set(spans.map((s) => s.token));
  const live = [...spans, ...held.filter((h) => !known.has(h.token))].filter((s) => s.from <= at && (s.to === null || at < s.to));
  if (live.length === 0) return OVERHEAD;
  if (live.length === 1) return { taskId: (live[0] as ClaimSpan).taskId, token: (live[0] as ClaimSpan).token, how: 'held' };
  const acted = agent?.acted ?? [];
  for (let i = acted.length - 1; i >= 0; i--) {
    const x = acted[i] as ActedOn;
    if (x.at > at) continue;
    const s = live.find((l) => l.token === x.token);
    if (s) return { taskId: s.taskId, token: s.token, how: 'last-acted' };
  }
  const latest = live.reduce((a, b) => (b.from > a.from ? b : a));
  return { taskId: latest.taskId, token: latest.token, how: 'last-acted' };
}
