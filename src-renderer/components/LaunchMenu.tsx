import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { INSTALL_HINTS } from '../../src-shared/agents/installHints.js';
import type { ProfileIdShared } from '../../src-shared/agents/profileIds.js';
import { useApp, useController } from '../state/hooks.js';
import { useCommands } from './useCommands.js';

interface LaunchChoice {
  id: ProfileIdShared;
  label: string;
  available: boolean;
}

const CUSTOM: LaunchChoice = { id: 'custom', label: 'Custom command', available: true };
/** What the menu says of a CLI that is not on PATH, before its install command. */
const NOT_INSTALLED = 'not installed';
/** How long "copied" shows beside an install command after it went to the clipboard. */
const COPIED_MS = 2_000;

/**
 * "+ Launch agent": a menu of the Thread's agent profiles. From the keyboard, Enter, Space or ArrowDown on the
 * button opens it on the first choice (ArrowUp: the last); arrows, Home and End move; Enter launches;
 * Escape closes it and the focus goes back to the button (also when a click opened it and the focus
 * never left the button); Tab leaves it closed. A CLI that is not installed says so and shows the command
 * that installs it; picking it copies that command.
 */
export function LaunchMenu() {
  const c = useController();
  const snapshotProfiles = useApp((s) => s.profiles);
  const profiles: LaunchChoice[] = snapshotProfiles.some((p) => p.id === 'custom') ? snapshotProfiles : [...snapshotProfiles, CUSTOM];
  const [open, setOpen] = useState(false);
  const [custom, setCustom] = useState(false);
  const [command, setCommand] = useState('');
  const [copied, setCopied] = useState<ProfileIdShared | null>(null);
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  /** Which choice takes the focus once the menu is drawn (opened from the keyboard), or none (a click). */
  const focusOnOpen = useRef<'first' | 'last' | null>(null);

  useEffect(() => {
    if (!open) return;
    const close = (e: MouseEvent) => {
      if (root.current && !root.current.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('mousedown', close);
    return () => document.removeEventListener('mousedown', close);
  }, [open]);
  useEffect(() => {
    if (!open || !focusOnOpen.current) return;
    moveTo(focusOnOpen.current);
    focusOnOpen.current = null;
  }, [open]);
  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(null), COPIED_MS);
    return () => clearTimeout(t);
  }, [copied]);

  const items = () => [...(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])];
  function moveTo(where: 'first' | 'last' | 'next' | 'prev') {
    const all = items();
    if (all.length === 0) return;
    const at = all.indexOf(document.activeElement as HTMLElement);
    const i = where === 'first' ? 0 : where === 'last' ? all.length - 1 : where === 'next' ? (at + 1) % all.length : at < 0 ? all.length - 1 : (at - 1 + all.length) % all.length;
    all[i]?.focus();
  }
  const openFromKeys = (where: 'first' | 'last') => {
    focusOnOpen.current = where;
    if (open) moveTo(where);
    else setOpen(true);
  };
  const close = (refocus: boolean) => {
    setOpen(false);
    setCustom(false);
    if (refocus) button.current?.focus();
  };
  const launch = async (profile: ProfileIdShared, cmd?: string) => {
    // The button first: the new agent's terminal then takes the focus as it shows.
    close(true);
    await c.launch(profile, cmd);
  };
  const openCustom = () => {
    setOpen(true);
    setCustom(true);
  };
  const copyInstall = (p: LaunchChoice) => {
    const hint = INSTALL_HINTS[p.id];
    if (!hint) return;
    void navigator.clipboard?.writeText(hint).then(
      () => setCopied(p.id),
      () => undefined, // no clipboard here (an insecure origin, a denied permission): the command is on screen
    );
  };
  const pick = (p: LaunchChoice) => {
    if (!p.available) copyInstall(p);
    else if (p.id === 'custom') setCustom(true);
    else void launch(p.id);
  };
  const submitCustom = (e: FormEvent) => {
    e.preventDefault();
    const cmd = command.trim();
    if (!cmd) return;
    setCommand('');
    void launch('custom', cmd);
  };

  useCommands(() =>
    profiles.map((p) => {
      const hint = INSTALL_HINTS[p.id];
      return {
        id: `launch-${p.id}`,
        title: p.id === 'custom' ? 'Launch a custom command…' : `Launch ${p.label}`,
        group: 'Agents',
        keywords: 'agent start new',
        ...(!p.available ? { disabled: `${p.label} is ${NOT_INSTALLED}`, detail: hint ? `${NOT_INSTALLED}: ${hint}` : NOT_INSTALLED } : {}),
        run: () => (p.id === 'custom' ? openCustom() : void launch(p.id)),
      };
    }),
  );

  const onKeyDown = (e: KeyboardEvent) => {
    const inField = e.target instanceof HTMLInputElement;
    if (e.key === 'Escape' && open) {
      e.preventDefault();
      e.stopPropagation();
      close(true);
    } else if (e.key === 'Tab' && open && !(e.target as HTMLElement).closest('form')) {
      close(false);
    } else if (!inField && (e.key === 'ArrowDown' || e.key === 'ArrowUp')) {
      e.preventDefault();
      if (e.target === button.current) openFromKeys(e.key === 'ArrowDown' ? 'first' : 'last');
      else moveTo(e.key === 'ArrowDown' ? 'next' : 'prev');
    } else if (!inField && open && (e.key === 'Home' || e.key === 'End')) {
      e.preventDefault();
      moveTo(e.key === 'Home' ? 'first' : 'last');
    }
  };

  return (
    <div className="launch" ref={root} onKeyDown={onKeyDown}>
      <button
        type="button"
        ref={button}
        className="primary"
        data-testid="launch-menu"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? 'launch-menu-list' : undefined}
        onClick={(e) => {
          // detail 0: Enter or Space, not a pointer; the keyboard then goes into the menu.
          if (open) close(false);
          else if (e.detail === 0) openFromKeys('first');
          else setOpen(true);
        }}
      >
        + Launch agent
      </button>
      {open && (
        <div className="menu" role="menu" id="launch-menu-list" aria-label="Launch an agent" ref={menu} data-testid="launch-menu-list">
          {profiles.map((p) => {
            const hint = INSTALL_HINTS[p.id];
            return (
              <button
                key={p.id}
                type="button"
                role="menuitem"
                tabIndex={-1}
                data-testid={`launch-${p.id}`}
                data-available={p.available}
                aria-disabled={p.available ? undefined : true}
                className={p.available ? undefined : 'not-installed'}
                title={p.available ? undefined : hint ? `${p.label} is ${NOT_INSTALLED}. Install it with: ${hint} (Enter copies it)` : `${p.label} is ${NOT_INSTALLED}`}
                onClick={() => pick(p)}
              >
                <span className="menu-label">{p.id === 'custom' ? `${p.label.replace(/…$/, '')}…` : p.label}</span>
                {!p.available && (
                  <span className="install-hint" data-testid={`install-hint-${p.id}`}>
                    {NOT_INSTALLED}
                    {hint && (
                      <>
                        : <code>{hint}</code>
                      </>
                    )}
                    {copied === p.id && <span className="copied"> copied</span>}
                  </span>
                )}
              </button>
            );
          })}
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
