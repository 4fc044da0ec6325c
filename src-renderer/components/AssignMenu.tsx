import { useEffect, useRef, useState } from 'react';
import { agentLabel } from '../state/agentList.js';
import { useApp, useController } from '../state/hooks.js';
import { assignAsking } from './takeTask.js';
import { followCard } from './cardFocus.js';
import { AgentStateBadge } from './AgentStateBadge.js';

/**
 * "Assign to…" on a card: the keyboard's way to do what dragging onto an agent's tab does. The menu lists
 * the agents that can take work (not exited, not the holder), each with its standing ("idle", "working"); arrows move, Enter picks, Escape closes, and
 * the focus goes back to the button. Taking a task from a live holder asks first, as a drop does (takeTask.ts).
 */
export function AssignMenu({ taskId, holder, tabIndex }: { taskId: string; holder: string; tabIndex?: number }) {
  const c = useController();
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const ids = useApp((s) => s.agentIds);
  const agents = useApp((s) => s.agents);
  const choices = ids.filter((id) => agents[id] && agents[id].status !== 'exited' && id !== holder);
  useEffect(() => {
    if (open) menu.current?.querySelector<HTMLElement>('[role="menuitem"]')?.focus();
  }, [open]);
  const close = () => {
    setOpen(false);
    button.current?.focus();
  };
  const move = (by: number) => {
    const items = [...(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])];
    if (items.length === 0) return;
    const at = items.indexOf(document.activeElement as HTMLElement);
    items[(at + by + items.length) % items.length]?.focus();
  };
  return (
    <>
      <button
        type="button"
        ref={button}
        // -1 in a card's toolbar: the card is the Tab stop, Right reaches this (cardFocus.ts).
        tabIndex={tabIndex}
        data-testid={`assign-${taskId}`}
        aria-haspopup="menu"
        aria-expanded={open}
        onClick={() => setOpen((o) => !o)}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown' && !open) {
            e.preventDefault();
            setOpen(true);
          }
        }}
      >
        Assign to…
      </button>
      {open && (
        <div
          className="assign-menu"
          role="menu"
          ref={menu}
          aria-label={`Assign ${taskId} to`}
          data-testid={`assign-menu-${taskId}`}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
              e.preventDefault();
              move(e.key === 'ArrowDown' ? 1 : -1);
            } else if (e.key === 'Escape') {
              e.preventDefault();
              e.stopPropagation();
              close();
            }
          }}
        >
          {choices.length === 0 && <span className="muted">No running agent: launch one first.</span>}
          {choices.map((id) => (
            <button
              key={id}
              type="button"
              role="menuitem"
              data-testid={`assign-${taskId}-to-${id}`}
              onClick={() => {
                close();
                // The card moves to another column, drawn anew there when the push comes: the focus follows
                // it to its button.
                void assignAsking(c, taskId, id).then(() => followCard(taskId, `assign-${taskId}`));
              }}
            >
              {agents[id] ? agentLabel(agents[id]) : id} <AgentStateBadge agentId={id} testId={`assign-${taskId}-state-${id}`} />
            </button>
          ))}
        </div>
      )}
    </>
  );
}
