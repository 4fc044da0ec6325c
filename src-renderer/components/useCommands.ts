import { useEffect, useRef } from 'react';
import type { CommandSource } from '../state/commandRegistry.js';
import { useCommandRegistry } from '../state/hooks.js';

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
