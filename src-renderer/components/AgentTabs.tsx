import { memo, useEffect, useRef } from 'react';
import { useDroppable } from '@dnd-kit/core';
import { containmentLine } from '../../src-shared/agents/containment.js';
import { showControls } from '../../src-shared/text/controlChars.js';
import { runsElsewhere, statusText } from '../state/agentList.js';
import { nearestDeadlineOf } from '../state/boardState.js';
import type { PaletteCommand } from '../state/commandRegistry.js';
import { useApp, useController } from '../state/hooks.js';
import { claimLeaseMs } from '../state/claimLease.js';
import { stepTab } from '../state/tabStrip.js';
import { closeAgentAsking } from './agentClose.js';
import { DispatchMark, dispatchCommands } from './TaskDispatch.js';
import { AgentListMenu, GO_TO_AGENT_KEYS } from './AgentListMenu.js';
import { Countdown } from './Countdown.js';
import { AgentNotifyToggle, AgentStateBadge } from './AgentStateBadge.js';
import { LaunchMenu } from './LaunchMenu.js';
import { EndedAgents } from './EndedAgents.js';
import { FindInTerminal } from './TerminalArea.js';
import { useCommands } from './useCommands.js';
import { UserText } from './UserText.js';

export const AGENT_DROP_PREFIX = 'agent:';

/** Up to this many agents, each chip is as wide as its words; past it they share the row in equal parts
 *  (four chips with their words fit beside the bar's buttons at 1440 px). */
const FEW_AGENTS = 4;

/** Next / previous tab, as in a browser and VS Code; wrapping around. Caught before a focused terminal. */
export const NEXT_TAB_KEYS = 'Ctrl+PgDn';
export const PREVIOUS_TAB_KEYS = 'Ctrl+PgUp';

/** The wrapper of an agent's tab in the strip (the tab and its buttons), found by agent id. */
const itemOf = (strip: HTMLElement | null, id: string) => strip?.querySelector<HTMLElement>(`[data-tab-item="${CSS.escape(id)}"]`) ?? null;

/** Scrolls the strip (only: `nearest` leaves the page alone when the strip is on screen) so the agent's tab,
 *  its buttons included, is wholly shown: selected by a click, a key, the agent list or the palette. */
function revealTab(strip: HTMLElement | null, id: string): void {
  itemOf(strip, id)?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
}

export function AgentTabs() {
  const c = useController();
  const ids = useApp((s) => s.agentIds);
  const activeId = useApp((s) => s.activeAgentId);
  const strip = useRef<HTMLDivElement>(null);
  const openList = useRef<(() => void) | null>(null);

  // Whatever selected it, the selected tab is on screen.
  useEffect(() => {
    if (activeId) revealTab(strip.current, activeId);
  }, [activeId, ids]);

  /** Selects an agent as a click on its tab does (its terminal shows and takes the focus), its tab on screen. */
  const goTo = (id: string) => {
    c.selectAgent(id);
    requestAnimationFrame(() => revealTab(strip.current, id));
  };
  const step = (by: 1 | -1) => {
    const next = stepTab(c.state.agentIds, c.state.activeAgentId, by);
    if (next) goTo(next);
  };

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!e.ctrlKey || e.altKey || e.shiftKey || e.metaKey || (e.key !== 'PageDown' && e.key !== 'PageUp')) return;
      e.preventDefault();
      e.stopPropagation();
      step(e.key === 'PageDown' ? 1 : -1);
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  });

  // The palette's "go to agent N" (what a click on the Nth tab does), the next/previous keys, and for an
  // exited agent its tab's Relaunch and Resume (those buttons are for the mouse: see AgentTab).
  useCommands(() => {
    const many = c.state.agentIds.length > 1 ? {} : { disabled: 'There is no other agent' };
    const out: PaletteCommand[] = [
      { id: 'agent-next', title: 'Next agent tab', group: 'Agents', keys: NEXT_TAB_KEYS, keywords: 'tab switch', ...many, run: () => step(1) },
      { id: 'agent-previous', title: 'Previous agent tab', group: 'Agents', keys: PREVIOUS_TAB_KEYS, keywords: 'tab switch', ...many, run: () => step(-1) },
      {
        id: 'agent-go-to',
        title: 'Go to agent…',
        group: 'Agents',
        keys: GO_TO_AGENT_KEYS,
        keywords: 'list all tabs switch',
        run: () => openList.current?.(),
      },
    ];
    c.state.agentIds.forEach((id, i) => {
      const a = c.state.agents[id];
      out.push({ id: `agent-tab-${i + 1}`, title: `Go to agent ${i + 1}: ${c.agentName(id)}`, group: 'Agents', keywords: 'tab switch terminal', detail: a ? statusText(a) : undefined, run: () => goTo(id) });
      if (a && a.status !== 'exited') out.push(...dispatchCommands(c, id, a.name));
      if (a?.status === 'exited' && !runsElsewhere(a)) {
        out.push({ id: `agent-relaunch-${id}`, title: `Relaunch ${a.name}`, group: 'Agents', keywords: 'restart exited', run: () => void c.relaunch(id) });
        if (a.resumable) out.push({ id: `agent-resume-${id}`, title: `Resume ${a.name}’s conversation`, group: 'Agents', keywords: 'exited session', run: () => void c.resume(id) });
      }
    });
    return out;
  });
  return (
    <div className="tabbar">
      {/* Chips that wrap, not a row that scrolls: twelve agents are all on screen at 1440×900 and at 800×600,
          each one a drop target where it stands (issue 44). A few agents' chips show their whole standing;
          many share the row, each cut to its room (the whole standing in its tooltip and accessible name). */}
      <div className={`tabs${ids.length > FEW_AGENTS ? ' many' : ''}`} role="tablist" aria-label="Agents" ref={strip} data-testid="agent-strip">
        {ids.map((id) => (
          <AgentTab key={id} id={id} />
        ))}
      </div>
      <EndedAgents none={ids.length === 0} />
      {/* The bar's buttons stay together: beside the chips when there is room, else a line of their own. */}
      <div className="tabbar-controls">
        <AgentListMenu onPick={goTo} opener={openList} />
        <FindInTerminal />
        <AgentNotifyToggle />
        <LaunchMenu />
      </div>
    </div>
  );
}

const ARROW_KEYS = new Set(['ArrowLeft', 'ArrowRight', 'Home', 'End']);

/** From a focused tab to the previous / next (wrapping), first or last tab of its strip. */
function focusSibling(tab: HTMLElement, key: string): void {
  const tabs = [...(tab.closest('[role="tablist"]')?.querySelectorAll<HTMLElement>('[role="tab"]') ?? [])];
  const at = tabs.indexOf(tab);
  const n = tabs.length;
  const to = key === 'Home' ? 0 : key === 'End' ? n - 1 : (at + (key === 'ArrowRight' ? 1 : -1) + n) % n;
  tabs[to]?.focus();
}

/**
 * One agent's tab and its buttons, side by side in a wrapper: a button inside an element with role="tab" is
 * an interactive element inside another (axe's nested-interactive: a screen reader reads the tab as one
 * thing and never reaches the button). The tab alone is in the tablist's reading and tab order; its buttons
 * are for the pointer (aria-hidden, out of the tab order), and each has a key: Delete on the focused tab
 * closes it (the WAI-ARIA tabs pattern), Relaunch and Resume are the palette's. The wrapper is the drop
 * target, so a card dropped on the × still lands on the agent.
 */
const AgentTab = memo(function AgentTab({ id }: { id: string }) {
  const c = useController();
  const a = useApp((s) => s.agents[id]);
  const active = useApp((s) => s.activeAgentId === id);
  // One tab stop for the whole strip (the selected tab; the first while none is): arrows move among the tabs.
  const tabStop = useApp((s) => s.activeAgentId === id || (!s.activeAgentId && s.agentIds[0] === id));
  // Only this agent's claims, as the host sent them with its agent list: never a scan of every task per tab.
  const claims = a?.claims;
  const deadline = useApp((s) => nearestDeadlineOf(s.board, s.agents[id]?.claims));
  const leaseMs = useApp((s) => claimLeaseMs(s, id));
  // An exited agent cannot take a task: it is no drop target (the host would refuse anyway).
  const { setNodeRef, isOver } = useDroppable({ id: `${AGENT_DROP_PREFIX}${id}`, data: { agentId: id }, disabled: !a || a.status === 'exited' });
  if (!a) return null;
  // Another host's agent: its tab names that host and takes tasks, but its pane (and so closing, relaunching
  // or resuming it) is that host's.
  const remote = runsElsewhere(a);
  const state = `status-${a.status}${remote ? ' remote' : ''}${active ? ' active' : ''}${isOver ? ' drop-over' : ''}`;
  return (
    <div ref={setNodeRef} className={`tab-item ${state}`} data-tab-item={id}>
      <div
        role="tab"
        tabIndex={tabStop ? 0 : -1}
        aria-selected={active}
        aria-keyshortcuts={remote ? undefined : 'Delete'}
        className={`tab ${state}`}
        data-testid={`agent-tab-${id}`}
        data-status={a.status}
        data-state={a.state?.state ?? ''}
        data-name={a.name}
        data-pid={a.pid ?? ''}
        data-claims={claims?.length ?? 0}
        data-host={a.host ?? ''}
        onClick={() => c.selectAgent(id)}
        onKeyDown={(e) => {
          if (e.target !== e.currentTarget) return;
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            c.selectAgent(id);
          } else if (ARROW_KEYS.has(e.key)) {
            // Manual activation (WAI-ARIA tabs pattern): arrows move the focus, Enter selects. Selecting
            // shows the agent's terminal, which takes the focus: arrows that selected could not go on.
            e.preventDefault();
            focusSibling(e.currentTarget, e.key);
          } else if (e.key === 'Delete' && !remote) {
            e.preventDefault();
            void closeAgentAsking(c, id);
          }
        }}
        title={
          remote
            ? `${a.name} (${a.profile}) runs on ${a.host}: its terminal is in that host's window`
            : `${a.name} (${a.profile}${a.pid ? `, pid ${a.pid}` : ''}).${a.containment ? ` ${showControls(containmentLine(a.containment), 'none')}.` : ''} Delete closes it.`
        }
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
        {a.status !== 'exited' && <AgentStateBadge agentId={id} testId={`agent-state-${id}`} />}
        {a.status !== 'exited' && <DispatchMark agentId={id} testId={`agent-dispatch-${id}`} />}
        {deadline !== null && (
          <Countdown deadline={deadline} leaseMs={leaseMs} stalled={a.status === 'stalled'} testId={`agent-countdown-${id}`} variant="ring" />
        )}
      </div>
      {a.status === 'exited' && !remote && (
        <button
          type="button"
          className="tab-button"
          tabIndex={-1}
          aria-hidden="true"
          data-testid={`relaunch-${id}`}
          title="Relaunch (also in the command palette)"
          onClick={() => void c.relaunch(id)}
        >
          Relaunch
        </button>
      )}
      {a.status === 'exited' && a.resumable && !remote && (
        <button
          type="button"
          className="tab-button"
          tabIndex={-1}
          aria-hidden="true"
          data-testid={`resume-${id}`}
          title="Start its CLI again on the same conversation (it claims its tasks again through the board; also in the command palette)"
          onClick={() => void c.resume(id)}
        >
          Resume conversation
        </button>
      )}
      {!remote && (
        <button
          type="button"
          className="tab-close"
          tabIndex={-1}
          aria-hidden="true"
          data-testid={`close-${id}`}
          title={`Close ${a.name}: ends the agent (asks first while it runs) and releases its claims. Delete on its tab does the same.`}
          onClick={() => void closeAgentAsking(c, id)}
        >
          ×
        </button>
      )}
    </div>
  );
});
