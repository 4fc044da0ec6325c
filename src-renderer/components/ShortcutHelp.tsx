import { useEffect, useRef, useState } from 'react';
import { GO_TO_AGENT_KEYS } from './AgentListMenu.js';
import { NEXT_TAB_KEYS, PREVIOUS_TAB_KEYS } from './AgentTabs.js';
import { PALETTE_KEYS } from './CommandPalette.js';
import { typingIn } from './keys.js';
import { TOGGLE_AGENTS_KEYS, TOGGLE_BOARD_KEYS } from './layoutCommands.js';
import { useCommands } from './useCommands.js';
import { useReturnFocus } from './returnFocus.js';

/** Every shortcut the window has, in one place (`?` shows it). */
const SHORTCUTS: ReadonlyArray<[string, string]> = [
  [PALETTE_KEYS, 'Command palette: every action of the window by name, a task by its id or title (Ctrl+K not in a terminal or a field)'],
  ['/', 'Search the board (id, title, holder, state); Enter goes to the first match, Escape clears'],
  ['Enter on a card', 'Open the task’s details; Escape closes them'],
  ['Space on a card', 'Pick it up; arrows move between drop targets (Open, each agent’s tab); Space drops; Escape cancels'],
  ['Assign to… on a card', 'Assign it from the keyboard: arrows pick an agent, Enter assigns'],
  ['Ctrl+F in a terminal', 'Find in that agent’s terminal; Enter / Shift+Enter next / previous'],
  ['Alt+Shift+N', 'Go to the next agent waiting for you'],
  [TOGGLE_AGENTS_KEYS, 'Hide or show the agents’ terminals (anywhere, a terminal too)'],
  [TOGGLE_BOARD_KEYS, 'Hide or show the board'],
  ['↑ ↓ on the divider', 'Size the board and the terminals (Page Up / Page Down: bigger steps; Home / End: smallest / largest board; Enter hides or shows the board); a drag does it too'],
  [`${NEXT_TAB_KEYS} / ${PREVIOUS_TAB_KEYS}`, 'Next / previous agent tab (wrapping around), in a terminal too'],
  [GO_TO_AGENT_KEYS, 'Go to agent: the list of every agent with its state and claims; arrows or its first letter pick, Enter goes there'],
  ['← → Home End on an agent’s tab', 'Move between the agents’ tabs; Enter or Space selects one'],
  ['Delete on an agent’s tab', 'Close that agent (asks first while it runs)'],
  ['↑ ↓ in a menu', 'Move in the Launch and Assign to… menus (Home / End: first / last launch choice); Enter picks; Escape closes it and goes back to its button'],
  ['Escape', 'Close a menu, dialog or drawer'],
  ['?', 'This list'],
];

/** `?` anywhere but a field or a terminal: the shortcut list, closed by Escape, the focus given back. */
export function ShortcutHelp() {
  const [open, setOpen] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const focus = useReturnFocus();
  useCommands(() => [{ id: 'show-shortcuts', title: 'Show keyboard shortcuts', group: 'Window', keys: '?', keywords: 'help keys', run: () => setOpen(true) }]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== '?' || e.ctrlKey || e.metaKey || e.altKey || typingIn(e.target)) return;
      e.preventDefault();
      setOpen((o) => !o);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  useEffect(() => {
    if (!open) return;
    focus.remember();
    box.current?.focus();
    return () => void focus.restore();
  }, [open, focus]);
  if (!open) return null;
  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && setOpen(false)}>
      <div
        className="modal shortcuts"
        role="dialog"
        aria-modal="true"
        aria-label="Keyboard shortcuts"
        tabIndex={-1}
        ref={box}
        data-testid="shortcut-help"
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            setOpen(false);
          }
        }}
      >
        <div className="modal-title">Keyboard shortcuts</div>
        <dl className="details-facts">
          {SHORTCUTS.map(([k, what]) => (
            <div key={k} style={{ display: 'contents' }}>
              <dt>
                <kbd>{k}</kbd>
              </dt>
              <dd>{what}</dd>
            </div>
          ))}
        </dl>
        <div className="modal-buttons">
          <button type="button" data-testid="shortcut-help-close" onClick={() => setOpen(false)}>
            Close
          </button>
        </div>
      </div>
    </div>
  );
}
