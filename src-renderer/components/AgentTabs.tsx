import { memo, useEffect, useRef, useState, type FormEvent } from 'react';
import { useDroppable } from '@dnd-kit/core';
import type { AgentInfo, ProfileIdShared } from '../../src-shared/protocol/windowApi.js';
import { describeExit, nearestDeadlineOf } from '../state/boardState.js';
import { useApp, useController } from '../state/hooks.js';
import { closeAgentAsking } from './agentClose.js';
import { Countdown } from './Countdown.js';
import { AgentNotifyToggle, AgentStateBadge } from './AgentStateBadge.js';

export const AGENT_DROP_PREFIX = 'agent:';

export function AgentTabs() {
  const ids = useApp((s) => s.agentIds);
  return (
    <div className="tabbar">
      <div className="tabs" role="tablist" aria-label="Agents">
        {ids.map((id) => (
          <AgentTab key={id} id={id} />
        ))}
        {ids.length === 0 && <span className="tabs-empty">No agents yet.</span>}
      </div>
      <AgentNotifyToggle />
      <LaunchMenu />
    </div>
  );
}

function statusText(a: AgentInfo): string {
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
  return (
    <div
      ref={setNodeRef}
      role="tab"
      tabIndex={0}
      aria-selected={active}
      className={`tab status-${a.status}${active ? ' active' : ''}${isOver ? ' drop-over' : ''}`}
      data-testid={`agent-tab-${id}`}
      data-status={a.status}
      data-state={a.state?.state ?? ''}
      data-name={a.name}
      data-pid={a.pid ?? ''}
      data-claims={claims?.length ?? 0}
      onClick={() => c.selectAgent(id)}
      onKeyDown={(e) => {
        if (e.target === e.currentTarget && (e.key === 'Enter' || e.key === ' ')) {
          e.preventDefault();
          c.selectAgent(id);
        }
      }}
      title={`${a.name} (${a.profile}${a.pid ? `, pid ${a.pid}` : ''})`}
    >
      <span className={`status-dot ${a.status}`} aria-hidden="true" />
      <span className="tab-name">{a.name}</span>
      <span className="tab-status">{statusText(a)}</span>
      {a.status !== 'exited' && <AgentStateBadge info={a.state} testId={`agent-state-${id}`} />}
      {deadline !== null && (
        <Countdown deadline={deadline} leaseMs={leaseMs} stalled={a.status === 'stalled'} testId={`agent-countdown-${id}`} variant="ring" />
      )}
      {a.status === 'exited' && (
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
      {a.status === 'exited' && a.resumable && (
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
    </div>
  );
});

const CUSTOM: { id: ProfileIdShared; label: string; available: boolean } = { id: 'custom', label: 'Custom command', available: true };

function LaunchMenu() {
  const c = useController();
  const snapshotProfiles = useApp((s) => s.profiles);
  const profiles = snapshotProfiles.some((p) => p.id === 'custom') ? snapshotProfiles : [...snapshotProfiles, CUSTOM];
  const [open, setOpen] = useState(false);
  const [custom, setCustom] = useState(false);
  const [command, setCommand] = useState('');
  const root = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const close = (e: MouseEvent) => {
      if (root.current && !root.current.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('mousedown', close);
    return () => document.removeEventListener('mousedown', close);
  }, [open]);
  const launch = async (profile: ProfileIdShared, cmd?: string) => {
    setOpen(false);
    setCustom(false);
    await c.launch(profile, cmd);
  };
  const submitCustom = (e: FormEvent) => {
    e.preventDefault();
    const cmd = command.trim();
    if (!cmd) return;
    setCommand('');
    void launch('custom', cmd);
  };
  return (
    <div className="launch" ref={root}>
      <button type="button" className="primary" data-testid="launch-menu" aria-haspopup="menu" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
        + Launch agent
      </button>
      {open && (
        <div className="menu" role="menu" onKeyDown={(e) => e.key === 'Escape' && setOpen(false)}>
          {profiles.map((p) => (
            <button
              key={p.id}
              type="button"
              role="menuitem"
              data-testid={`launch-${p.id}`}
              disabled={!p.available}
              title={p.available ? undefined : `${p.label} is not installed on this machine`}
              onClick={() => (p.id === 'custom' ? setCustom(true) : void launch(p.id))}
            >
              {p.id === 'custom' ? `${p.label.replace(/…$/, '')}…` : p.label}
              {!p.available && <span className="unavailable"> (not found)</span>}
            </button>
          ))}
          {custom && (
            <form className="custom-form" onSubmit={submitCustom}>
              <input
                data-testid="custom-command"
                value={command}
                onChange={(e) => setCommand(e.target.value)}
                placeholder="command line, e.g. npx my-agent --flag"
                aria-label="Custom command line"
                autoFocus
              />
              <button type="submit" className="primary" data-testid="custom-launch" disabled={!command.trim()}>
                Launch
              </button>
            </form>
          )}
        </div>
      )}
    </div>
  );
}
