import type { AppState } from './appState.js';
import { owedIds } from './standing.js';

/** The agent the "next waiting agent" shortcut goes to: the first one after the current tab that waits for
 *  the person, with a question or with work to review. */
export function nextWaiting(s: Pick<AppState, 'agentIds' | 'agents' | 'activeAgentId' | 'board'>): string | null {
  const waiting = owedIds(s);
  if (!waiting.length) return null;
  const at = s.activeAgentId ? s.agentIds.indexOf(s.activeAgentId) : -1;
  return waiting.find((id) => s.agentIds.indexOf(id) > at) ?? (waiting[0] as string);
}
