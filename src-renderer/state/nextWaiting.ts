import type { AgentState } from '../../src-shared/agents/agentState.js';
import type { AgentInfo } from '../../src-shared/protocol/windowApi.js';
import type { AppState } from './appState.js';

const stateOf = (a: AgentInfo | undefined): AgentState | null => a?.state?.state ?? null;

/** The agent the "next waiting agent" shortcut goes to: the first waiting one after the current tab. */
export function nextWaiting(s: Pick<AppState, 'agentIds' | 'agents' | 'activeAgentId'>): string | null {
  const waiting = s.agentIds.filter((id) => stateOf(s.agents[id]) === 'needs-input');
  if (!waiting.length) return null;
  const at = s.activeAgentId ? s.agentIds.indexOf(s.activeAgentId) : -1;
  return waiting.find((id) => s.agentIds.indexOf(id) > at) ?? (waiting[0] as string);
}
