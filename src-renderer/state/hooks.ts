import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import type { TerminalRegistry } from '../terminal/terminalRegistry.js';
import type { CommandRegistry } from './commandRegistry.js';
import type { AppController, AppState } from './controller.js';
import type { HostClock } from './hostClock.js';

export interface AppServices {
  controller: AppController;
  terminals: TerminalRegistry;
  /** The window's commands: components offer theirs (useCommands), the palette reads them. */
  commands: CommandRegistry;
}

export const ServicesContext = createContext<AppServices | null>(null);

function useServices(): AppServices {
  const s = useContext(ServicesContext);
  if (!s) throw new Error('ServicesContext is missing');
  return s;
}

export function useController(): AppController {
  return useServices().controller;
}

export function useCommandRegistry(): CommandRegistry {
  return useServices().commands;
}

export function useTerminals(): TerminalRegistry {
  return useServices().terminals;
}

export function useClock(): HostClock {
  return useServices().controller.clock;
}

/** Select a slice of the app state; the component re-renders only when that slice changes (Object.is). */
export function useApp<T>(selector: (s: AppState) => T): T {
  return useStore(useServices().controller.store, selector);
}
