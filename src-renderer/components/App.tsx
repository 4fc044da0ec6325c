import { useEffect, useState } from 'react';
import { useApp } from '../state/hooks.js';
import { ConnectionBanner, ErrorBanner, Toasts, TopBar, type Drawer } from './Chrome.js';
import { CommandPalette } from './CommandPalette.js';
import { ConfirmHost } from './confirm.js';
import { EventLog } from './EventLog.js';
import { LeaseAnnouncements } from './LeaseAnnouncements.js';
import { PromptHost } from './prompt.js';
import { ShortcutHelp } from './ShortcutHelp.js';
import { ThreadList } from './ThreadList.js';
import { ThreadView } from './ThreadView.js';
import { useWindowCommands } from './windowCommands.js';

/**
 * The frame: Threads on the left, the Thread in the middle, the event log on the right. In a window of
 * 1050 px or less (styles/narrow.css) the side panels leave the grid and become drawers over the main area, opened
 * from the top bar, so the main area keeps the whole width.
 */
export function App() {
  const activeKey = useApp((s) => s.activeKey);
  // Not live: the Thread stays in view, greyed and inert (nothing there can reach the host), so no one
  // mistakes it for the host's present state.
  const offline = useApp((s) => s.connection !== 'connected' && s.connection !== 'connecting');
  const [drawer, setDrawer] = useState<Drawer>(null);
  const toggleDrawer = (d: Exclude<Drawer, null>) => setDrawer((cur) => (cur === d ? null : d));
  useWindowCommands(drawer, toggleDrawer);
  useEffect(() => {
    if (!drawer) return;
    const close = (e: KeyboardEvent) => e.key === 'Escape' && setDrawer(null);
    document.addEventListener('keydown', close);
    return () => document.removeEventListener('keydown', close);
  }, [drawer]);
  // Picking a Thread is what the Threads drawer was opened for: it closes, the Thread shows.
  useEffect(() => setDrawer((d) => (d === 'threads' ? null : d)), [activeKey]);
  return (
    <div className="app">
      <TopBar drawer={drawer} onDrawer={toggleDrawer} />
      <ConnectionBanner />
      <ErrorBanner />
      <Toasts />
      <div className={`layout${drawer ? ` drawer-${drawer}` : ''}${offline ? ' offline' : ''}`} data-testid="layout" data-offline={offline}>
        {/* Not an <aside>: the Thread list inside is the landmark (navigation "Threads"); a second, unnamed
            complementary landmark beside the log's only made two alike. */}
        <div className="sidebar" id="threads-panel" data-testid="threads-panel">
          <ThreadList />
        </div>
        <main className="main" data-testid="main" inert={offline}>
          {activeKey ? <ThreadView key={activeKey} /> : <Welcome />}
        </main>
        <aside className="logpanel" id="log-panel" data-testid="log-panel">
          <EventLog />
        </aside>
        {drawer && <div className="drawer-scrim" aria-hidden="true" onClick={() => setDrawer(null)} />}
      </div>
      <LeaseAnnouncements />
      <PromptHost />
      <ConfirmHost />
      <ShortcutHelp />
      <CommandPalette />
    </div>
  );
}

function Welcome() {
  const connection = useApp((s) => s.connection);
  const text =
    connection === 'connected'
      ? 'Open a folder on the left, or pick a thread, to see its board and agents.'
      : connection === 'connecting'
        ? 'Connecting to the Forkbench host…'
        : 'Not connected to the Forkbench host: the message above says why.';
  return (
    <div className="welcome">
      <h1>Forkbench</h1>
      <p>{text}</p>
    </div>
  );
}
