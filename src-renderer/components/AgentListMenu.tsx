import { useEffect, useRef, useState, type KeyboardEvent, type MutableRefObject } from 'react';
import { containmentLine } from '../../src-shared/agents/containment.js';
import { showControls } from '../../src-shared/text/controlChars.js';
import { countsDown } from '../state/boardState.js';
import { agentLabel, statusText } from '../state/agentList.js';
import { useApp, useController } from '../state/hooks.js';
import { claimLeaseMs } from '../state/claimLease.js';
import { AgentStateBadge } from './AgentStateBadge.js';
import { DispatchMark } from './TaskDispatch.js';
import { Countdown } from './Countdown.js';
import { AgentSpend } from './AgentSpend.js';

/** "Go to agent…": opens this list from anywhere, a terminal too (caught before it, as Alt+Shift+N is). */
export const GO_TO_AGENT_KEYS = 'Alt+Shift+A';
const GO_TO_AGENT_CODE = 'KeyA';

/**
 * Every agent in one list, at the strip's end (issue 32: at 1440 px the strip shows 3 of 12 tabs): each tab's
 * details, its state, whether it runs in a sandbox (issue 43) and its claims, their countdowns as the tabs and cards show them. A menu button (WAI-ARIA APG):
 * Enter, Space or ArrowDown opens it on the selected agent; arrows, Home and End move (wrapping); a letter
 * goes to the next agent whose name starts with it; Enter or a click selects that agent, whose tab scrolls
 * into view; Escape closes it and the focus goes back where it was; Tab leaves it closed. Alt+Shift+A opens
 * it from anywhere: "go to agent" one key away.
 */
export function AgentListMenu({ onPick, opener }: { onPick(agentId: string): void; opener: MutableRefObject<(() => void) | null> }) {
  const ids = useApp((s) => s.agentIds);
  const activeId = useApp((s) => s.activeAgentId);
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  /** Where the focus was when the list opened (the button, a terminal, a card), to give it back on Escape. */
  const back = useRef<HTMLElement | null>(null);

  const openList = () => {
    const was = document.activeElement;
    back.current = was instanceof HTMLElement && !root.current?.contains(was) ? was : button.current;
    setOpen(true);
  };
  useEffect(() => {
    opener.current = openList;
    return () => {
      opener.current = null;
    };
  });
  const close = (refocus: boolean) => {
    setOpen(false);
    if (refocus) (back.current?.isConnected ? back.current : button.current)?.focus();
    back.current = null;
  };

  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (!e.altKey || !e.shiftKey || e.ctrlKey || e.metaKey || e.code !== GO_TO_AGENT_CODE) return;
      e.preventDefault();
      e.stopPropagation();
      openList();
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  }, []);
  useEffect(() => {
    if (!open) return;
    // Opened on the selected agent, as a list of choices opens on the current one.
    const items = itemsOf(menu.current);
    (items.find((el) => el.getAttribute('aria-checked') === 'true') ?? items[0])?.focus();
    const outside = (e: MouseEvent) => {
      if (root.current && !root.current.contains(e.target as Node)) close(false);
    };
    document.addEventListener('mousedown', outside);
    return () => document.removeEventListener('mousedown', outside);
    // Only when it opens: the focus then moves with the keys, not with the list's changes.
  }, [open]);

  const pick = (id: string) => {
    close(false);
    onPick(id);
  };
  const onKeyDown = (e: KeyboardEvent) => {
    const items = itemsOf(menu.current);
    const at = items.indexOf(document.activeElement as HTMLElement);
    const go = (i: number) => items[(i + items.length) % items.length]?.focus();
    if (e.key === 'Escape' && open) {
      e.preventDefault();
      e.stopPropagation();
      close(true);
    } else if (e.key === 'Tab' && open) {
      close(false);
    } else if (e.target === button.current && (e.key === 'ArrowDown' || e.key === 'ArrowUp')) {
      e.preventDefault();
      openList();
    } else if (!open || at < 0) {
      return;
    } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      go(at + (e.key === 'ArrowDown' ? 1 : -1));
    } else if (e.key === 'Home' || e.key === 'End') {
      e.preventDefault();
      go(e.key === 'Home' ? 0 : items.length - 1);
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      const id = items[at]?.dataset.agentId;
      if (id) pick(id);
    } else if (e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey) {
      const ch = e.key.toLowerCase();
      const n = items.length;
      for (let k = 1; k <= n; k++) {
        const el = items[(at + k) % n];
        if (el?.dataset.name?.toLowerCase().startsWith(ch)) return go((at + k) % n);
      }
    }
  };

  if (ids.length === 0) return null;
  return (
    <div className="agent-list" ref={root} onKeyDown={onKeyDown}>
      <button
        type="button"
        ref={button}
        data-testid="agent-list-button"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? 'agent-list-menu' : undefined}
        title={`Every agent, its state and its claims (${GO_TO_AGENT_KEYS})`}
        onClick={() => (open ? close(false) : openList())}
      >
        {ids.length === 1 ? '1 agent' : `${ids.length} agents`} <span aria-hidden="true">▾</span>
      </button>
      {open && (
        <div className="menu agent-list-menu" role="menu" id="agent-list-menu" aria-label="Go to agent" ref={menu} data-testid="agent-list">
          {ids.map((id) => (
            <AgentListItem key={id} id={id} active={id === activeId} onPick={pick} />
          ))}
        </div>
      )}
    </div>
  );
}

const itemsOf = (menu: HTMLElement | null): HTMLElement[] => [...(menu?.querySelectorAll<HTMLElement>('[role="menuitemradio"]') ?? [])];

function AgentListItem({ id, active, onPick }: { id: string; active: boolean; onPick(id: string): void }) {
  const c = useController();
  const a = useApp((s) => s.agents[id]);
  const leaseMs = useApp((s) => claimLeaseMs(s, id));
  // Drawn again on each board change (the list is drawn only while open): its claims' states and deadlines.
  useApp((s) => s.boardVersion);
  const board = c.state.board;
  const claims = (a?.claims ?? []).map((t) => board?.tasks.get(t)).filter((t) => t !== undefined);
  if (!a) return null;
  return (
    <div
      role="menuitemradio"
      aria-checked={active}
      tabIndex={-1}
      className={`agent-list-item${active ? ' active' : ''}`}
      data-testid={`agent-list-item-${id}`}
      data-agent-id={id}
      data-name={a.name}
      onClick={() => onPick(id)}
    >
      <span className="agent-list-head">
        <span className={`status-dot ${a.status}`} aria-hidden="true" />
        <span className="tab-name">{agentLabel(a)}</span>
        <span className="tab-status">{statusText(a)}</span>
        {a.status !== 'exited' && <AgentStateBadge agentId={id} testId={`agent-list-state-${id}`} />}
        {a.status !== 'exited' && <DispatchMark agentId={id} testId={`agent-list-dispatch-${id}`} />}
      </span>
      {/* Whether it runs in a sandbox (issue 43): one line, in the words the host's warning uses. */}
      {a.containment && (
        <span className={`agent-list-containment${a.containment.by === null ? ' off' : ''}`} data-testid={`agent-containment-${id}`}>
          {showControls(containmentLine(a.containment), 'none')}
        </span>
      )}
      {/* What its CLI spent, its overhead apart, and its rate-limit headroom (issue 47). */}
      <AgentSpend agentId={id} now={Date.now()} />
      {claims.length > 0 && (
        <span className="agent-list-claims">
          {claims.map((t) => (
            <span key={t.id} className="agent-list-claim" data-testid={`agent-list-claim-${t.id}`}>
              <span className="agent-list-claim-title">
                {t.id} {showControls(t.title, 'none')}
              </span>
              {t.claim && countsDown(t) ? (
                <Countdown deadline={t.claim.deadline} leaseMs={leaseMs} stalled={a.status === 'stalled'} testId={`agent-list-countdown-${t.id}`} variant="ring" />
              ) : (
                <span className="agent-list-review">{t.state === 'review' ? 'in review' : t.state}</span>
              )}
            </span>
          ))}
        </span>
      )}
    </div>
  );
}
