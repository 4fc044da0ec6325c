import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import '@xterm/xterm/css/xterm.css';
import './styles/app.css';
import { App } from './components/App.js';
import { notificationPermission, requestNotificationPermission, systemNotify } from './notifications.js';
import { AppController } from './state/controller.js';
import { ServicesContext } from './state/hooks.js';
import { TerminalRegistry } from './terminal/terminalRegistry.js';
import { chooseTransport } from './transport/index.js';

const transport = chooseTransport();
let controller: AppController | null = null;
const terminals = new TerminalRegistry(transport, (action, err) => controller?.showError(action, err));
controller = new AppController(transport, {
  panes: terminals,
  systemNotify,
  notifyPermission: notificationPermission,
  requestNotifyPermission: requestNotificationPermission,
  // Electron opens one window per Thread, naming it in the query; a browser tab picks one itself.
  initialThread: new URLSearchParams(location.search).get('thread'),
});
controller.start();

declare global {
  interface Window {
    __forkbenchDebug?: { store: AppController['store']; terminalText(agentId: string): string };
  }
}
// For end-to-end tests only: read the state and a terminal's text, nothing else. Never without ?debug=1.
if (new URLSearchParams(location.search).get('debug') === '1') {
  window.__forkbenchDebug = { store: controller.store, terminalText: (agentId) => terminals.get(agentId)?.text() ?? '' };
}

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <ServicesContext.Provider value={{ controller, terminals }}>
      <App />
    </ServicesContext.Provider>
  </StrictMode>,
);
