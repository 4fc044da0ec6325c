import { OWED_BY_PERSON, standingOfAgent, type Standing } from '../../src-shared/board/stateWords.js';
import type { AgentInfo } from '../../src-shared/protocol/windowApi.js';
import type { AppState } from './appState.js';

/** An agent's standing (board/stateWords.ts) from the host's agent list and the window's board. */
export function standingFor(s: Pick<AppState, 'board'>, a: AgentInfo | undefined): Standing | null {
  return a ? standingOfAgent(a, (id) => s.board?.tasks.get(id)?.state) : null;
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
