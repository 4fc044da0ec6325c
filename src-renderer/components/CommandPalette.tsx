import { useEffect, useRef, useState } from 'react';
import type { PaletteCommand } from '../state/commandRegistry.js';
import { typingIn } from './keys.js';
import { useCommandRegistry } from '../state/hooks.js';
import { useReturnFocus } from './returnFocus.js';

/** How far PageUp / PageDown move in the list: about what the list shows at once. */
const PAGE = 8;

/** Its shortcuts: Ctrl+Shift+P anywhere (a terminal too), Ctrl+K where it is no one's key. */
export const PALETTE_KEYS = 'Ctrl+Shift+P / Ctrl+K';

/**
 * Whether a key press opens the palette. Ctrl+Shift+P (Cmd on a Mac) works everywhere, in a terminal and a
 * field too: it is the palette's own key. Ctrl+K only outside fields and terminals, where it belongs to
 * the shell (readline's kill-line) or the text field (kill to the end of the line on a Mac).
 */
function opensPalette(e: KeyboardEvent): boolean {
  if (!(e.ctrlKey || e.metaKey) || e.altKey) return false;
  const key = e.key.toLowerCase();
  if (e.shiftKey) return key === 'p';
  return key === 'k' && !typingIn(e.target);
}

/**
 * The command palette: every action the window has, filtered as one types; arrows and Enter run one, Escape
 * closes, and the focus goes back where it was before the command runs (so a command that moves the focus,
 * like "Focus the board search", moves it from there).
 */
export function CommandPalette() {
  const registry = useCommandRegistry();
  const [open, setOpen] = useState(false);
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const focus = useReturnFocus();
  const list = useRef<HTMLUListElement>(null);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!opensPalette(e)) return;
      // Caught before a focused terminal sees it, so the shell never gets a stray ^P.
      e.preventDefault();
      e.stopPropagation();
      setOpen((was) => {
        if (!was) focus.remember();
        return true;
      });
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  }, [focus]);

  // Read on every render while open: the commands follow the query and the window's state of the moment.
  const commands = open ? registry.matching(query) : [];
  let current = Math.min(active, Math.max(commands.length - 1, 0));
  // A command that cannot run now is never the one Enter runs: the next one that can is.
  if (commands[current]?.disabled) {
    const next = commands.findIndex((c, i) => i >= current && !c.disabled);
    if (next >= 0) current = next;
  }

  useEffect(() => {
    if (open) list.current?.querySelector('[aria-selected="true"]')?.scrollIntoView({ block: 'nearest' });
  }, [open, current, query]);

  if (!open) return null;

  const close = () => {
    setOpen(false);
    setQuery('');
    setActive(0);
    focus.restore();
  };
  const run = (cmd: PaletteCommand | undefined) => {
    if (!cmd || cmd.disabled) return;
    close();
    cmd.run();
  };
  /** The next runnable command `by` steps from the current one (wrapping), skipping disabled ones. */
  const step = (by: number) => {
    const n = commands.length;
    if (n === 0) return;
    for (let i = 1; i <= n; i++) {
      const at = (((current + by * i) % n) + n) % n;
      if (!commands[at]?.disabled) return setActive(at);
    }
  };
  const jump = (by: number) => setActive(Math.max(0, Math.min(commands.length - 1, current + by)));

  return (
    <div className="modal-backdrop palette-backdrop" onMouseDown={(e) => e.target === e.currentTarget && close()}>
      <div
        className="modal palette"
        role="dialog"
        aria-modal="true"
        aria-label="Command palette"
        data-testid="command-palette"
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            close();
          } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
            e.preventDefault();
            step(e.key === 'ArrowDown' ? 1 : -1);
          } else if (e.key === 'PageDown' || e.key === 'PageUp') {
            e.preventDefault();
            jump(e.key === 'PageDown' ? PAGE : -PAGE);
          } else if (e.key === 'Enter') {
            e.preventDefault();
            run(commands[current]);
          } else if (e.key === 'Tab') {
            // One field and a list it drives: the focus stays in the dialog until it closes.
            e.preventDefault();
          }
        }}
      >
        <input
          autoFocus
          data-testid="palette-input"
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-list"
          aria-autocomplete="list"
          aria-activedescendant={commands[current] ? `palette-item-${commands[current]?.id}` : undefined}
          aria-label="Command"
          placeholder="Type a command, or a task’s id or title"
          value={query}
          onChange={(e) => {
            setQuery(e.target.value);
            setActive(0);
          }}
        />
        <ul className="palette-list" id="palette-list" role="listbox" aria-label="Commands" ref={list}>
          {commands.map((cmd, i) => (
            <li
              key={cmd.id}
              id={`palette-item-${cmd.id}`}
              role="option"
              aria-selected={i === current}
              aria-disabled={cmd.disabled ? true : undefined}
              className={`palette-item${i === current ? ' active' : ''}${cmd.disabled ? ' disabled' : ''}`}
              data-testid={`palette-item-${cmd.id}`}
              title={cmd.disabled}
              onMouseMove={() => i !== current && setActive(i)}
              onClick={() => run(cmd)}
            >
              <span className="palette-group">{cmd.group}</span>
              <span className="palette-text">
                <span className="palette-title">{cmd.title}</span>
                {(cmd.detail || cmd.disabled) && <span className="palette-detail">{cmd.detail ?? cmd.disabled}</span>}
              </span>
              {cmd.keys && <kbd>{cmd.keys}</kbd>}
            </li>
          ))}
          {commands.length === 0 && (
            <li className="palette-empty" role="presentation">
              Nothing matches “{query}”.
            </li>
          )}
        </ul>
      </div>
    </div>
  );
}
