import { SOURCE_WORDS } from '../../src-shared/agents/agentLife.js';
import { showControls } from '../../src-shared/text/controlChars.js';
import { nextWaiting } from '../state/nextWaiting.js';
import { useApp, useController } from '../state/hooks.js';
import { owedIds, standingFor, standingKey } from '../state/standing.js';

/**
 * An agent's standing as an icon and words (never a colour alone): "✋ waiting for you", "◷ idle holding T-2",
 * "⚑ waiting for your review of T-3" (board/stateWords.ts: the same words on the tab, in the agent list, on
 * the card and in the assign menu). The signal that said its state is in the tooltip, with a prompt's text
 * (its control characters shown as escapes); a state known only from the screen says so.
 */
export function AgentStateBadge({ agentId, testId, wordsClass }: { agentId: string; testId: string; wordsClass?: string }) {
  const key = useApp((s) => standingKey(standingFor(s, s.agents[agentId])));
  const info = useApp((s) => s.agents[agentId]?.state ?? null);
  if (!key) return null;
  const [kind, icon, words] = key.split('|') as [string, string, string];
  const screen = info?.source === 'screen';
  const tip = info ? `${words} (${SOURCE_WORDS[info.source]})${info.text ? `: ${showControls(info.text, 'tab-newline')}` : ''}` : words;
  return (
    <span
      className={`agent-state standing-${kind}`}
      data-testid={testId}
      data-state={info?.state ?? ''}
      data-standing={kind}
      data-source={info?.source ?? ''}
      title={tip}
    >
      <span className="agent-state-icon" aria-hidden="true">
        {icon}
      </span>
      <span className={wordsClass ?? 'standing-words'}>
        {words}
        {screen ? ' (from the screen)' : ''}
      </span>
    </span>
  );
}

/** The header's count of agents waiting for the person (a question, or work to review); a click goes to
 *  the next one (Alt+Shift+N too). */
export function WaitingCount() {
  const c = useController();
  const count = useApp((s) => owedIds(s).length);
  if (count === 0) return null;
  return (
    <button
      type="button"
      className="waiting-count"
      data-testid="waiting-count"
      data-count={count}
      title="Go to the next agent waiting for you: a question, or work to review (Alt+Shift+N)"
      onClick={() => {
        const id = nextWaiting(c.store.getState());
        if (id) c.selectAgent(id);
      }}
    >
      <span aria-hidden="true">✋</span> {count} waiting for you
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
