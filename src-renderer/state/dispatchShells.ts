import { agentDispatchOf, dispatchOn, picksWorkItself, plainShellDispatchWords, type DispatchMode } from '../../src-shared/board/dispatch.js';
import type { AgentInfo } from '../../src-shared/protocol/windowApi.js';
import { agentLabel } from './agentList.js';
import type { AppState } from './appState.js';

/**
 * Dispatch turned on for a plain shell (issue 44: it could be, with no word). A shell or a custom command
 * reads no task it is given: the board's grant is only printed in its terminal. The window says so, in one
 * line that blocks nothing, when a person's change would start dispatching to one.
 */

/** A running agent that reads no task by itself. */
const plainShell = (a: AgentInfo | undefined): a is AgentInfo => a !== undefined && a.status !== 'exited' && !picksWorkItself(a.profile);

/** The line for setting `agentId`'s own dispatch to `mode`: null unless it is a plain shell the board did not
 *  dispatch to and now will. */
export function agentModeShellLine(s: AppState, agentId: string, mode: DispatchMode): string | null {
  const a = s.agents[agentId];
  const settings = s.board?.settings;
  if (!settings || !plainShell(a)) return null;
  const after = mode === 'thread' ? settings.dispatch === true : mode === 'on';
  return after && !dispatchOn(settings, agentId) ? plainShellDispatchWords([agentLabel(a)]) : null;
}

/** The line for the Thread's default set to on (Thread settings' box ticked): the plain shells that follow
 *  the Thread's default, null when there are none. */
export function threadDefaultShellLine(s: AppState): string | null {
  const settings = s.board?.settings;
  if (!settings) return null;
  const names = s.agentIds
    .map((id) => s.agents[id])
    .filter(plainShell)
    .filter((a) => (agentDispatchOf(settings, a.id)?.mode ?? 'thread') === 'thread')
    .map(agentLabel);
  return names.length ? plainShellDispatchWords(names) : null;
}
