import type { BoardEvent } from '../../src-shared/board/events.js';
import type { LeaseEngine } from '../../src-main/board/leaseEngine.js';
import { NO_TOKENS, type TokenCounts, type UsageAttribution, type UsageTurn } from '../../src-shared/usage/usage.js';

/** One turn of an agent's CLI as a usage reader would hand it to the board. */
export function turn(id: string, tokens: Partial<TokenCounts>, o: { model?: string | null; usd?: number | null; cliAt?: number | null } = {}): UsageTurn {
  return { id, cliAt: o.cliAt ?? null, model: o.model === undefined ? 'claude-sonnet-4-5-20250929' : o.model, tokens: { ...NO_TOKENS, ...tokens }, usd: o.usd ?? null };
}

export interface UsageOf {
  agentId: string;
  profile?: string;
  taskId: string | null;
  turns: UsageTurn[];
  how?: UsageAttribution;
  /** The event's wall time (ms): the day it counts to. */
  at: number;
}

/**
 * A `usage` event as the engine would decide it (helper B's recordUsage), stamped at the engine's position and
 * clock and applied through `follow`, the engine's path for an event decided elsewhere: the same reducer, the
 * same indexes and listeners (the journal records it) as the engine's own emit.
 */
export function usageEvent(engine: LeaseEngine, u: UsageOf): BoardEvent {
  const t = u.taskId === null ? undefined : engine.state.tasks.get(u.taskId);
  const token = t?.claim?.agentId === u.agentId ? t.claim.token : null;
  const e: BoardEvent = {
    kind: 'usage',
    seq: engine.state.seq + 1,
    at: u.at,
    mono: engine.now(),
    agentId: u.agentId,
    profile: u.profile ?? 'claude',
    source: 'report',
    turns: u.turns,
    taskId: u.taskId,
    token,
    how: u.how ?? (u.taskId === null ? 'overhead' : 'held'),
  };
  engine.follow(e);
  return e;
}
