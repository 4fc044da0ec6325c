import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import '@xterm/xterm/css/xterm.css';
import './styles/app.css';
import './styles/worktrees.css';
import { replaceAddress } from './address.js';
import { App } from './components/App.js';
import { closeSystemNotification, notificationPermission, requestNotificationPermission, systemNotify } from './notifications.js';
import { nextWaiting } from './state/nextWaiting.js';
import { CommandRegistry } from './state/commandRegistry.js';
import { AppController } from './state/controller.js';
import { ServicesContext } from './state/hooks.js';
import { followShownThread } from './state/threadInUrl.js';
import { PaneTerminal } from './terminal/paneTerminal.js';
import { TerminalRegistry } from './terminal/terminalRegistry.js';
import { chooseTransport } from './transport/index.js';
import type { Transport } from './transport/types.js';
import { THREAD_PARAM } from '../src-shared/protocol/windowApi.js';

const transport = chooseTransport();
let controller: AppController | null = null;
const terminals = new TerminalRegistry(transport, (action, err) => controller?.notices.showError(action, err));
controller = new AppController(transport, {
  panes: terminals,
  systemNotify,
  closeSystemNotify: closeSystemNotification,
  looking: () => document.visibilityState === 'visible' && document.hasFocus(),
  notifyPermission: notificationPermission,
  requestNotifyPermission: requestNotificationPermission,
  // Electron opens one window per Thread, naming it in the query; a browser tab picks one itself and keeps
  // it in the query, so a reload asks for that Thread's snapshot at once (see AppController.onConnected).
  initialThread: new URLSearchParams(location.search).get(THREAD_PARAM),
});
followShownThread(controller.store, location, replaceAddress);
controller.start();

/** The window's actions by name, for the command palette (components add theirs while shown). */
const commands = new CommandRegistry();

/** Go to the next agent waiting for you: Alt+Shift+N, and the palette's command of the same name. */
function goToNextWaiting(): void {
  const id = controller ? nextWaiting(controller.store.getState()) : null;
  if (id) controller?.selectAgent(id);
}
commands.add(() => [
  {
    id: 'next-waiting',
    title: 'Go to the next agent waiting for you',
    group: 'Agents',
    keys: 'Alt+Shift+N',
    ...(controller && nextWaiting(controller.store.getState()) ? {} : { disabled: 'No agent is waiting for you' }),
    run: goToNextWaiting,
  },
]);

/** The "next waiting agent" shortcut: Alt+Shift+N, caught before a focused terminal takes the keys. */
const NEXT_WAITING_KEY = { altKey: true, shiftKey: true, code: 'KeyN' } as const;
window.addEventListener(
  'keydown',
  (e) => {
    if (!e.altKey || !e.shiftKey || e.ctrlKey || e.metaKey || e.code !== NEXT_WAITING_KEY.code) return;
    e.preventDefault();
    e.stopPropagation();
    goToNextWaiting();
  },
  true,
);

/** What end-to-end tests and the browser bench may reach in the page, with `?debug=1` only. */
interface ForkbenchDebug {
  store: AppController['store'];
  terminalText(agentId: string): string;
  /** The size an agent's terminal has in the page (what the pty was told), or null without such a pane. */
  terminalSize(agentId: string): { cols: number; rows: number } | null;
  /** Live output chars an agent's pane has parsed so far (what its acks count); 0 without such a pane. */
  parsedChars(agentId: string): number;
  /** Call `fn` after each parsed write of an agent's live output (null stops); false without such a pane. */
  onParsed(agentId: string, fn: ((total: number) => void) | null): boolean;
  /** A pane terminal made as the app makes one (same xterm options, renderer choice, feed and acks) on a
   *  transport that goes nowhere, shown in `container`: the in-page parse ceiling for pane throughput. */
  detachedPane(container: HTMLElement): PaneTerminal;
}

declare global {
  interface Window {
    __forkbenchDebug?: ForkbenchDebug;
  }
}
// For end-to-end tests and the browser bench only: read the state and terminals, nothing else. Never
// without ?debug=1.
if (new URLSearchParams(location.search).get('debug') === '1') {
  const nowhere: Transport = {
    kind: 'websocket',
    state: 'connected',
    call: () => Promise.resolve(null as never),
    subscribe: () => () => undefined,
    onState: () => () => undefined,
    dispose: () => undefined,
  };
  window.__forkbenchDebug = {
    store: controller.store,
    terminalText: (agentId) => terminals.get(agentId)?.text() ?? '',
    terminalSize(agentId) {
      const term = terminals.get(agentId)?.term;
      return term ? { cols: term.cols, rows: term.rows } : null;
    },
    parsedChars: (agentId) => terminals.get(agentId)?.feed.parsedChars ?? 0,
    onParsed(agentId, fn) {
      const pane = terminals.get(agentId);
      if (pane) pane.feed.onParsed = fn;
      return !!pane;
    },
    detachedPane(container) {
      const pane = new PaneTerminal('debug', 'debug', nowhere, () => undefined);
      pane.show(container);
      return pane;
    },
  };
}

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <ServicesContext.Provider value={{ controller, terminals, commands }}>
      <App />
    </ServicesContext.Provider>
  </StrictMode>,
);
