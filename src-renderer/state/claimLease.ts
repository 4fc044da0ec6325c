import { leaseFor } from '../../src-shared/board/leaseEvidence.js';
import type { AppState } from './appState.js';

/** The lease a claim of `agentId` runs on (its profile's when the Thread sets one, else the Thread's), for a
 *  countdown's full length: the fraction left is of that lease, not of the Thread's. A selector: a number, so
 *  a component redraws only when that agent's lease changes. */
export function claimLeaseMs(s: Pick<AppState, 'leaseMs' | 'board'>, agentId: string): number {
  return s.board && agentId ? leaseFor(s.board.settings, agentId) : s.leaseMs;
}
