import { useApp } from '../state/hooks.js';
import { ErrorBanner, Toasts, TopBar } from './Chrome.js';
import { EventLog } from './EventLog.js';
import { PromptHost } from './prompt.js';
import { ThreadList } from './ThreadList.js';
import { ThreadView } from './ThreadView.js';

export function App() {
  const activeKey = useApp((s) => s.activeKey);
  return (
    <div className="app">
      <TopBar />
      <ErrorBanner />
      <div className="layout">
        <aside className="sidebar">
          <ThreadList />
        </aside>
        <main className="main">{activeKey ? <ThreadView key={activeKey} /> : <Welcome />}</main>
        <aside className="logpanel">
          <EventLog />
        </aside>
      </div>
      <Toasts />
      <PromptHost />
    </div>
  );
}

function Welcome() {
  const connected = useApp((s) => s.connection === 'connected');
  return (
    <div className="welcome">
      <h1>Forkbench</h1>
      <p>{connected ? 'Open a folder on the left, or pick a thread, to see its board and agents.' : 'Connecting to the Forkbench host…'}</p>
    </div>
  );
}
