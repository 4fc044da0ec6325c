import { createContext, useContext, useEffect, useRef } from 'react';
import { CommandRegistry, type CommandSource } from '../state/commandRegistry.js';

/** The window's command registry (App provides it; the palette reads it). */
export const CommandsContext = createContext<CommandRegistry | null>(null);

export function useCommandRegistry(): CommandRegistry {
  const r = useContext(CommandsContext);
  if (!r) throw new Error('CommandsContext is missing');
  return r;
}

/**
 * Offer this component's actions to the command palette for as long as it is shown. `source` is read
 * anew each time the palette asks, so the commands always call the component's current functions.
 */
export function useCommands(source: CommandSource): void {
  const registry = useCommandRegistry();
  const latest = useRef(source);
  useEffect(() => {
    latest.current = source;
  });
  useEffect(() => registry.add((q) => latest.current(q)), [registry]);
}
