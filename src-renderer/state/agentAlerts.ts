import { STATE_WORDS, type AgentState } from '../../src-shared/agents/agentState.js';
import type { AgentInfo } from '../../src-shared/protocol/windowApi.js';
import { showControls } from '../../src-shared/text/controlChars.js';
import type { StoreApi } from 'zustand/vanilla';
import type { AppState } from './appState.js';

/** What a person is told about an agent: it started waiting for them, or it finished its turn. */
export type AgentAlertKind = 'waiting' | 'done';

const stateOf = (a: AgentInfo | undefined): AgentState | null => a?.state?.state ?? null;

/** The agents that just started waiting or just finished their turn, going from `before` to `after`. */
export function alertsFor(before: Readonly<Record<string, AgentInfo>>, after: readonly AgentInfo[]): Array<{ agent: AgentInfo; kind: AgentAlertKind }> {
  const out: Array<{ agent: AgentInfo; kind: AgentAlertKind }> = [];
  for (const a of after) {
    const was = stateOf(before[a.id]);
    const now = stateOf(a);
    // An agent the window has not seen before (a reload) is not news: only a change seen here is.
    if (!before[a.id] || was === now) continue;
    if (now === 'needs-input') out.push({ agent: a, kind: 'waiting' });
    // A turn the host only presumed (the CLI starting up) ending in "ready" finished nothing.
    else if (now === 'idle' && was === 'working' && !before[a.id]?.state?.presumed) out.push({ agent: a, kind: 'done' });
  }
  return out;
}

/** The notification's words: the agent, its task, and the question when it is known (shown as text). */
export function alertText(a: AgentInfo, kind: AgentAlertKind, task: { id: string; title: string } | null): { title: string; body: string } {
  const title = kind === 'waiting' ? `${a.name} is ${STATE_WORDS['needs-input']}` : `${a.name} finished its turn`;
  const on = task ? `${task.id} "${showControls(task.title, 'none')}"` : 'no task claimed';
  const question = kind === 'waiting' && a.state?.text ? `\n${showControls(a.state.text, 'tab-newline')}` : '';
  return { title, body: `${on}${question}` };
}

/** The agent the "next waiting agent" shortcut goes to: the first waiting one after the current tab. */
export function nextWaiting(s: Pick<AppState, 'agentIds' | 'agents' | 'activeAgentId'>): string | null {
  const waiting = s.agentIds.filter((id) => stateOf(s.agents[id]) === 'needs-input');
  if (!waiting.length) return null;
  const at = s.activeAgentId ? s.agentIds.indexOf(s.activeAgentId) : -1;
  return waiting.find((id) => s.agentIds.indexOf(id) > at) ?? (waiting[0] as string);
}

export interface AgentAlertDeps {
  /** A desktop notification whose click runs `onClick`; false when there is no permission. */
  notify?: (title: string, body: string, onClick: () => void, tag: string) => boolean;
  /** Whether the person is looking at this page now (focused and visible). */
  looking?: () => boolean;
}

/**
 * Desktop notifications for agents that start waiting or finish their turn, when the Thread opted in (its
 * notifyAgents setting), and never for the tab the person is looking at. Clicking one selects that tab.
 */
export class AgentAlerts {
  constructor(
    private readonly store: StoreApi<AppState>,
    private readonly deps: AgentAlertDeps,
    private readonly select: (agentId: string) => void,
  ) {}

  follow(before: Readonly<Record<string, AgentInfo>>, after: readonly AgentInfo[]): void {
    const s = this.store.getState();
    if (!s.board?.settings.notifyAgents || !this.deps.notify) return;
    for (const { agent, kind } of alertsFor(before, after)) {
      if (agent.id === s.activeAgentId && (this.deps.looking?.() ?? true)) continue;
      const taskId = agent.claims[0];
      const task = taskId ? s.board.tasks.get(taskId) : undefined;
      const { title, body } = alertText(agent, kind, task ? { id: task.id, title: task.title } : null);
      this.deps.notify(title, body, () => this.select(agent.id), `agent:${agent.id}`);
    }
  }
}
