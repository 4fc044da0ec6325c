import {
  agentDispatchOf,
  DISPATCH_MARK_WORDS,
  dispatchOn,
  labelsOf,
  parseLabelsText,
  parseTakersText,
  picksWorkItself,
  takersOf,
  type DispatchMode,
} from '../../src-shared/board/dispatch.js';
import type { WhyContext } from '../../src-shared/board/why.js';
import type { AppState } from '../state/appState.js';
import type { PaletteCommand } from '../state/commandRegistry.js';
import type { AppController } from '../state/controller.js';
import { agentModeShellLine } from '../state/dispatchShells.js';
import { useApp, useController } from '../state/hooks.js';
import { askText } from './prompt.js';
import { DetailsListField } from './DetailsListField.js';

/**
 * Dispatch in the window (issue 34): who may take a task (its details panel's "Taken by"), an agent's own
 * setting and labels (its commands in the palette, beside its other commands), and what `why` needs to say
 * why the board has not given a ready task to anyone (the agents' states, the board's time).
 */

/** The details panel's field: the profiles and labels that may take the task (`claude, label:frontend`;
 *  '' or any for anyone). */
export function TakersField({ taskId }: { taskId: string }) {
  const c = useController();
  const stored = useApp((s) => {
    const t = s.board?.tasks.get(taskId);
    return t ? takersOf(t).join(', ') : '';
  });
  return (
    <DetailsListField
      stored={stored}
      label={`Agents that may take ${taskId} when the board dispatches`}
      placeholder="any agent (like claude, label:frontend)"
      testId="details-takers"
      save={(text) => c.actions.setTakers(taskId, parseTakersText(text))}
    />
  );
}

const MODE_WORDS: Record<DispatchMode, string> = { on: 'on', off: 'off', thread: "as the Thread's default" };

/** An agent's dispatch commands: on, off, as the Thread's default (the one it has now is disabled), and its labels. */
export function dispatchCommands(c: AppController, agentId: string, name: string): PaletteCommand[] {
  const settings = c.state.board?.settings;
  if (!settings) return [];
  const mode = agentDispatchOf(settings, agentId)?.mode ?? 'thread';
  const labels = [...labelsOf(settings, agentId)];
  const modes: DispatchMode[] = ['on', 'off', 'thread'];
  return [
    ...modes.map((m) => {
      // A plain shell reads no task: the command says so before it is run, and the window once it is.
      const shellLine = agentModeShellLine(c.state, agentId, m);
      return {
        id: `agent-dispatch-${m}-${agentId}`,
        title: `Dispatch to ${name}: ${MODE_WORDS[m]}`,
        group: 'Agents',
        keywords: 'idle next ready task auto assign',
        detail: shellLine ?? (m === 'on' ? 'When it is idle and holds nothing, the board gives it the next ready task it may take' : undefined),
        ...(m === mode ? { disabled: `It is ${MODE_WORDS[m]} already` } : {}),
        run: async () => {
          const ok = await c.actions.setAgentDispatch(agentId, m, labels);
          if (ok && shellLine) c.notices.toast(`Dispatch to ${name} is on`, shellLine, `dispatch-shell:${agentId}`);
        },
      };
    }),
    {
      id: `agent-labels-${agentId}`,
      title: `Labels of ${name}…`,
      group: 'Agents',
      keywords: 'dispatch label frontend',
      detail: labels.length ? labels.join(', ') : 'none',
      run: async () => {
        const text = await askText(`Labels of ${name} (like frontend, gpu; empty for none)`, labels.join(', '));
        if (text !== null) await c.actions.setAgentDispatch(agentId, mode, parseLabelsText(text));
      },
    },
  ];
}

/** What the window's `why` needs to say why the board has not dispatched a task: the agents it lists and the
 *  board's time (the host clock's estimate). */
export function whyContext(s: AppState, now: number): WhyContext | undefined {
  if (!s.board) return undefined;
  return { now, settings: s.board.settings, agents: s.agentIds.map((id) => ({ id, name: s.agents[id]?.name, state: s.agents[id]?.state?.state ?? null })) };
}

/**
 * The mark on an agent's tab and its entry in the agent list while the board dispatches to it (issue 44: no
 * tab showed who dispatches): a glyph for the eye, words for a screen reader and the tooltip; a plain shell's
 * says it does not pick work by itself.
 */
export function DispatchMark({ agentId, testId }: { agentId: string; testId: string }) {
  const on = useApp((s) => (s.boardVersion, s.board ? dispatchOn(s.board.settings, agentId) : false));
  const plain = useApp((s) => !picksWorkItself(s.agents[agentId]?.profile ?? ''));
  if (!on) return null;
  const words = plain ? `${DISPATCH_MARK_WORDS} (a plain shell: it does not pick work by itself)` : DISPATCH_MARK_WORDS;
  return (
    <span className={`dispatch-mark${plain ? ' plain-shell' : ''}`} data-testid={testId} title={`Dispatch: ${words}`}>
      <span aria-hidden="true">⇥</span>
      <span className="visually-hidden">, dispatch: {words}</span>
    </span>
  );
}
