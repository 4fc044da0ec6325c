import { memo } from 'react';
import { useDroppable } from '@dnd-kit/core';
import type { AgentInfo } from '../../src-shared/protocol/windowApi.js';
import { runsElsewhere } from '../state/agentList.js';
import { describeExit, nearestDeadlineOf } from '../state/boardState.js';
import { useApp, useController } from '../state/hooks.js';
import { closeAgentAsking } from './agentClose.js';
import { Countdown } from './Countdown.js';
import { AgentNotifyToggle, AgentStateBadge } from './AgentStateBadge.js';
import { LaunchMenu } from './LaunchMenu.js';
import { EndedAgents } from './EndedAgents.js';
import { FindInTerminal } from './TerminalArea.js';
import { useCommands } from './useCommands.js';
import { UserText } from './UserText.js';

export const AGENT_DROP_PREFIX = 'agent:';

export function AgentTabs() {
  const c = useController();
  const ids = useApp((s) => s.agentIds);
  // The palette's "go to agent N": what a click on the Nth tab does.
  useCommands(() =>
    c.state.agentIds.map((id, i) => ({
      id: `agent-tab-${i + 1}`,
      title: `Go to agent ${i + 1}: ${c.agentName(id)}`,
      group: 'Agents',
      keywords: 'tab switch terminal',
      detail: c.state.agents[id] ? statusText(c.state.agents[id]) : undefined,
      run: () => c.selectAgent(id),
    })),
  );
  return (
    <div className="tabbar">
      <div className="tabs" role="tablist" aria-label="Agents">
        {ids.map((id) => (
          <AgentTab key={id} id={id} />
        ))}
      </div>
      <EndedAgents none={ids.length === 0} />
      <FindInTerminal />
      <AgentNotifyToggle />
      <LaunchMenu />
    </div>
  );
}

function statusText(a: AgentInfo): string {
  if (a.host !== undefined) return `on ${a.host}`;
  return a.status === 'exited' ? describeExit(a) : a.status;
}

const AgentTab = memo(function AgentTab({ id }: { id: string }) {
  const c = useController();
  const a = useApp((s) => s.agents[id]);
  const active = useApp((s) => s.activeAgentId === id);
  // Only this agent's claims, as the host sent them with its agent list: never a scan of every task per tab.
  const claims = a?.claims;
  const deadline = useApp((s) => nearestDeadlineOf(s.board, s.agents[id]?.claims));
  const leaseMs = useApp((s) => s.leaseMs);
  // An exited agent cannot take a task: it is no drop target (the host would refuse anyway).
  const { setNodeRef, isOver } = useDroppable({ id: `${AGENT_DROP_PREFIX}${id}`, data: { agentId: id }, disabled: !a || a.status === 'exited' });
  if (!a) return null;
  // Another host's agent: its tab names that host and takes tasks, but its pane (and so closing, relaunching
  // or resuming it) is that host's.
  const remote = runsElsewhere(a);
  return (
    <div
      ref={setNodeRef}
      role="tab"
      tabIndex={0}
      aria-selected={active}
      className={`tab status-${a.status}${remote ? ' remote' : ''}${active ? ' active' : ''}${isOver ? ' drop-over' : ''}`}
      data-testid={`agent-tab-${id}`}
      data-status={a.status}
      data-state={a.state?.state ?? ''}
      data-name={a.name}
      data-pid={a.pid ?? ''}
      data-claims={claims?.length ?? 0}
      data-host={a.host ?? ''}
      onClick={() => c.selectAgent(id)}
      onKeyDown={(e) => {
        if (e.target === e.currentTarget && (e.key === 'Enter' || e.key === ' ')) {
          e.preventDefault();
          c.selectAgent(id);
        }
      }}
      title={remote ? `${a.name} (${a.profile}) runs on ${a.host}: its terminal is in that host's window` : `${a.name} (${a.profile}${a.pid ? `, pid ${a.pid}` : ''})`}
    >
      <span className={`status-dot ${a.status}`} aria-hidden="true" />
      <span className="tab-name">{a.name}</span>
      {remote && (
        <span className="tab-host" data-testid={`agent-host-${id}`}>
          on <UserText text={a.host ?? ''} oneLine />
        </span>
      )}
      {/* "running" beside a state badge ("working", "waiting for you", "idle") says nothing the badge does not, and
          two agents' tabs did not fit beside the bar's buttons at 1280 px: the word shows only when it adds
          something (starting, stalled, exited, or no state known) and when the host is gone ("unknown"). */}
      {!remote && <span className={`tab-status${a.status === 'running' && a.state ? ' quiet' : ''}`}>{statusText(a)}</span>}
      {a.status !== 'exited' && <AgentStateBadge info={a.state} testId={`agent-state-${id}`} />}
      {deadline !== null && (
        <Countdown deadline={deadline} leaseMs={leaseMs} stalled={a.status === 'stalled'} testId={`agent-countdown-${id}`} variant="ring" />
      )}
      {a.status === 'exited' && !remote && (
        <button
          type="button"
          className="tab-button"
          data-testid={`relaunch-${id}`}
          onClick={(e) => {
            e.stopPropagation();
            void c.relaunch(id);
          }}
        >
          Relaunch
        </button>
      )}
      {a.status === 'exited' && a.resumable && !remote && (
        <button
          type="button"
          className="tab-button"
          data-testid={`resume-${id}`}
          title="Start its CLI again on the same conversation (it claims its tasks again through the board)"
          onClick={(e) => {
            e.stopPropagation();
            void c.resume(id);
          }}
        >
          Resume conversation
        </button>
      )}
      {!remote && (
        <button
          type="button"
          className="tab-close"
          data-testid={`close-${id}`}
          aria-label={`Close ${a.name} (asks first while it runs; releases its claims)`}
          title="Close: ends the agent (asks first while it runs) and releases its claims"
          onClick={(e) => {
            e.stopPropagation();
            void closeAgentAsking(c, id);
          }}
        >
          ×
        </button>
      )}
    </div>
  );
});
