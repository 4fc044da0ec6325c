import { showControls } from '../../src-shared/text/controlChars.js';
import { runsElsewhere } from '../state/agentList.js';
import type { AppController } from '../state/controller.js';
import { askConfirm } from './confirm.js';

/** Task ids with their titles, for a person: `T-2 "Add tests"`; a title's controls shown as escapes. */
export function describeHeld(c: Pick<AppController, 'state'>, agentId: string): string[] {
  const board = c.state.board;
  // The host's word on what it holds (sent with the agent list), as the tab shows it.
  return (c.state.agents[agentId]?.claims ?? []).map((id) => {
    const title = board?.tasks.get(id)?.title;
    return title ? `${id} "${showControls(title, 'none')}"` : id;
  });
}

/**
 * × on an agent's tab. An agent that still runs is a session (a Claude Code or Codex conversation) that
 * closing ends for good, and its claims go back to Open: so the person is asked first, told what it holds.
 * An agent that has exited loses nothing more: it is closed at once.
 */
export async function closeAgentAsking(c: AppController, agentId: string): Promise<void> {
  const a = c.state.agents[agentId];
  // Another host's agent has no × here: its process is that host's to end.
  if (runsElsewhere(a)) return;
  if (a && a.status !== 'exited') {
    const held = describeHeld(c, agentId);
    const holds = held.length
      ? `It holds ${held.join(', ')}: closing gives ${held.length === 1 ? 'it' : 'them'} back to Open.`
      : 'It holds no task.';
    const body = `${a.name} is ${a.status}. Closing ends its process and whatever it is doing now; its session cannot be resumed. ${holds}`;
    if (!(await askConfirm(`Close ${a.name}?`, body, `Close ${a.name}`))) return;
  }
  await c.actions.closeAgent(agentId);
}
