import { SOURCE_WORDS, STATE_ICONS, STATE_WORDS, type AgentStateInfo } from '../../src-shared/agents/agentState.js';
import { showControls } from '../../src-shared/text/controlChars.js';
import { nextWaiting } from '../state/nextWaiting.js';
import { useApp, useController } from '../state/hooks.js';

/**
 * An agent's state as an icon and a word (never a colour alone): "✋ waiting for you". A state known only
 * from the screen says so; the prompt's text is in the tooltip, its control characters shown as escapes.
 */
export function AgentStateBadge({ info, testId }: { info: AgentStateInfo | null | undefined; testId: string }) {
  if (!info) return null;
  const word = STATE_WORDS[info.state];
  const screen = info.source === 'screen';
  const tip = `${word} (${SOURCE_WORDS[info.source]})${info.text ? `: ${showControls(info.text, 'tab-newline')}` : ''}`;
  return (
    <span className={`agent-state state-${info.state}`} data-testid={testId} data-state={info.state} data-source={info.source} title={tip}>
      <span className="agent-state-icon" aria-hidden="true">
        {STATE_ICONS[info.state]}
      </span>
      {word}
      {screen ? ' (from the screen)' : ''}
    </span>
  );
}

/** The header's count of agents waiting for the person; a click goes to the next one (Alt+Shift+N too). */
export function WaitingCount() {
  const c = useController();
  const count = useApp((s) => s.agentIds.filter((id) => s.agents[id]?.state?.state === 'needs-input').length);
  if (count === 0) return null;
  return (
    <button
      type="button"
      className="waiting-count"
      data-testid="waiting-count"
      data-count={count}
      title="Go to the next agent waiting for you (Alt+Shift+N)"
      onClick={() => {
        const id = nextWaiting(c.store.getState());
        if (id) c.selectAgent(id);
      }}
    >
      {STATE_ICONS['needs-input']} {count} waiting for you
    </button>
  );
}

/**
 * The Thread's opt-in for desktop notifications about its agents (waiting for you, turn finished): a board
 * setting, so every window of the Thread follows it. Turning it on asks the browser's permission (a click
 * is the user gesture browsers require).
 */
export function AgentNotifyToggle() {
  const c = useController();
  const on = useApp((s) => (s.boardVersion, s.board?.settings.notifyAgents ?? false));
  const has = useApp((s) => s.board !== null);
  if (!has) return null;
  return (
    <label className="agent-notify" title="Desktop notification when an agent starts waiting for you or finishes its turn (not for the tab you are looking at)">
      <input
        type="checkbox"
        data-testid="notify-agents"
        checked={on}
        onChange={(e) => {
          const next = e.target.checked;
          if (next) void c.notices.requestNotifications();
          void c.actions.setSettings({ notifyAgents: next });
        }}
      />
      notify me
    </label>
  );
}
