import { OWED_BY_PERSON, standingOf, type Standing } from '../../src-shared/board/stateWords.js';
import type { AgentInfo } from '../../src-shared/protocol/windowApi.js';
import type { AppState } from './appState.js';

/** An agent's standing (board/stateWords.ts) from the host's agent list and the window's board: its claims
 *  split into the work it holds and the work waiting for the person's review. */
export function standingFor(s: Pick<AppState, 'board'>, a: AgentInfo | undefined): Standing | null {
  if (!a) return null;
  const holding: string[] = [];
  const inReview: string[] = [];
  for (const id of a.claims) {
    const t = s.board?.tasks.get(id);
    if (t?.state === 'review') inReview.push(id);
    else if (t?.state === 'claimed') holding.push(id);
  }
  return standingOf({ status: a.status, state: a.state?.state ?? null, presumed: a.state?.presumed === true, holding, inReview });
}

/** A standing as one string, for a store selector (equal strings: nothing re-renders). */
export const standingKey = (st: Standing | null): string => (st ? `${st.kind}|${st.icon}|${st.words}` : '');

/** The agents the person owes an answer or a review, in tab order. */
export function owedIds(s: Pick<AppState, 'board' | 'agentIds' | 'agents'>): string[] {
  return s.agentIds.filter((id) => {
    const st = standingFor(s, s.agents[id]);
    return st !== null && OWED_BY_PERSON.has(st.kind);
  });
}
