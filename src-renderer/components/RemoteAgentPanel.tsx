import type { AgentInfo } from '../../src-shared/protocol/windowApi.js';
import { useApp } from '../state/hooks.js';
import { claimLeaseMs } from '../state/claimLease.js';
import { Countdown } from './Countdown.js';
import { UserText } from './UserText.js';

/**
 * What the terminal area shows for another host's agent on a shared board: its pane is in that host's window
 * (this window never asks for its screen, types into it or resizes it), so here it says where it runs and what
 * it holds, each claim with its lease's time left. A task is given to it by dropping the card on its tab.
 */
export function RemoteAgentPanel({ agent }: { agent: AgentInfo }) {
  const board = useApp((s) => s.board);
  // The board is changed in place: its version says a title or a deadline (a renewal) changed.
  useApp((s) => s.boardVersion);
  const leaseMs = useApp((s) => claimLeaseMs(s, agent.id));
  const host = agent.host ?? '';
  return (
    <div className="remote-agent" data-testid={`remote-agent-${agent.id}`}>
      <p data-testid={`remote-agent-where-${agent.id}`}>
        <UserText text={agent.name} oneLine /> runs on <UserText text={host} oneLine />. Its terminal is in that host’s window.
      </p>
      {agent.claims.length === 0 ? (
        <p className="muted">It holds no task. Drag a card onto its tab to give it one.</p>
      ) : (
        <ul className="remote-claims" aria-label={`Tasks ${agent.name} holds`} data-testid={`remote-claims-${agent.id}`}>
          {agent.claims.map((id) => {
            const t = board?.tasks.get(id);
            return (
              <li key={id} data-task={id}>
                <span className="remote-claim-id">{id}</span> <UserText text={t?.title ?? ''} oneLine />
                {t?.claim?.agentId === agent.id && <Countdown deadline={t.claim.deadline} leaseMs={leaseMs} stalled={false} testId={`remote-countdown-${id}`} variant="ring" />}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
