import { useApp, useController } from '../state/hooks.js';
import { noticeLines } from '../state/noticeGroups.js';
import type { ConnectionState } from '../transport/types.js';
import { WaitingCount } from './AgentStateBadge.js';
import { SessionControl } from './SessionControl.js';

/** A side panel shown as a drawer over the main area (narrow windows only; wide ones show both). */
export type Drawer = 'threads' | 'log' | null;

/** Top bar: the panel toggles (narrow windows), the folder on screen, the connection and the notifications switch. */
export function TopBar({ drawer, onDrawer }: { drawer: Drawer; onDrawer: (d: 'threads' | 'log') => void }) {
  const folder = useApp((s) => s.folder);
  const active = useApp((s) => s.activeKey);
  return (
    <header className="topbar">
      <button
        type="button"
        className="panel-toggle"
        data-testid="toggle-threads"
        aria-controls="threads-panel"
        aria-expanded={drawer === 'threads'}
        onClick={() => onDrawer('threads')}
      >
        ☰ Threads
      </button>
      {active ? (
        // The page's level-one heading while a Thread is shown (the welcome has its own): the window and
        // the folder it is on. The name stays when a narrow window hides the folder.
        <h1 className="topbar-title">
          <span className="brand">Forkbench</span>
          <span className="topbar-folder" title={folder}>
            {folder}
          </span>
        </h1>
      ) : (
        <span className="brand">Forkbench</span>
      )}
      <span className="spacer" />
      <WaitingCount />
      <ConnectionStatus />
      <SessionControl />
      <NotifyBell />
      <button type="button" className="panel-toggle" data-testid="toggle-log" aria-controls="log-panel" aria-expanded={drawer === 'log'} onClick={() => onDrawer('log')}>
        Events
      </button>
    </header>
  );
}

const CONNECTION_LABEL: Record<ConnectionState, string> = {
  connecting: 'connecting…',
  connected: 'connected',
  'host-stopped': 'host stopped',
  refused: 'not let in',
  'link-spent': 'not let in',
  'link-unknown': 'not let in',
};

function ConnectionStatus() {
  const state = useApp((s) => s.connection);
  return (
    <span className={`connection ${state}`} data-testid="connection-status" data-state={state} role="status">
      <span className="status-dot" aria-hidden="true" />
      {CONNECTION_LABEL[state]}
    </span>
  );
}

/** What a person must know when the page is not live: that what they see is stale, and what to do. */
const CONNECTION_PROBLEM: Partial<Record<ConnectionState, string>> = {
  'host-stopped':
    'The Forkbench host stopped or cannot be reached. What you see is how it was: agents’ states are unknown and nothing can be changed. This page reconnects by itself when the host is back (run `forkbench serve` again).',
  refused:
    'The Forkbench host does not accept this page: its browser session expired, was signed out from another window, or is from an earlier host on another data folder or port. Open the newest link `forkbench serve` printed.',
  'link-spent':
    'This link was used already (each link lets one browser in), and this browser has no session on the host. Open the newest link `forkbench serve` printed.',
  'link-unknown':
    'This host never gave out this link: it is mistyped, cut short, or for another data folder. Open the newest link `forkbench serve` printed.',
};

export function ConnectionBanner() {
  const state = useApp((s) => s.connection);
  const text = CONNECTION_PROBLEM[state];
  if (!text) return null;
  return (
    <div className={`connection-banner ${state}`} data-testid="connection-banner" data-state={state} role="alert">
      {text}
    </div>
  );
}

function NotifyBell() {
  const c = useController();
  const perm = useApp((s) => s.notifyPermission);
  // The name holds the word the button shows ("notify" first, or "on"), so a person using speech input who
  // says what they see reaches it (WCAG 2.5.3, label in name); the rest says what it does or why it cannot.
  const label =
    perm === 'granted'
      ? 'Desktop notifications on'
      : perm === 'denied'
        ? 'Notify: desktop notifications are blocked by the browser; in-page notices are shown instead'
        : perm === 'unsupported'
          ? 'Notify: desktop notifications are not available; in-page notices are shown instead'
          : 'Notify: turn on desktop notifications for lapsed claims and exited agents';
  return (
    <button
      type="button"
      className={`bell ${perm}`}
      data-testid="notify-bell"
      title={label}
      aria-label={label}
      disabled={perm !== 'default'}
      onClick={() => void c.notices.requestNotifications()}
    >
      <svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true">
        <path d="M8 1.5a4 4 0 0 0-4 4v2.8L2.5 11v1h11v-1L12 8.3V5.5a4 4 0 0 0-4-4zM6.5 13a1.5 1.5 0 0 0 3 0z" fill="currentColor" />
      </svg>
      {perm === 'granted' ? 'on' : 'notify'}
    </button>
  );
}

/** Errors from the host: a refused action is never silent. Each stays until dismissed, until the same
 *  action succeeds, or a minute after it last came (PageNotices). */
export function ErrorBanner() {
  const c = useController();
  const errors = useApp((s) => s.errors);
  if (errors.length === 0) return null;
  return (
    <div className="error-banner" data-testid="error-banner" role="alert">
      {errors.map((e) => (
        <div key={e.id} className="error-line" data-code={e.code} data-count={e.count} data-testid="error-line">
          <span className="error-text">
            Could not {e.action}
            {e.actions.length > 1 ? ` (nor ${e.actions.slice(0, -1).join(', ')})` : ''}: <strong>{e.code}</strong> — {e.message}
            {e.count > 1 && (
              <span className="error-count" data-testid="error-count" title={`refused ${e.count} times`}>
                ×{e.count}
              </span>
            )}
          </span>
          <button type="button" className="dismiss" aria-label="Dismiss" onClick={() => c.notices.dismissError(e.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

/**
 * The page's notices in one place (issue 44): the host's current notices for the Thread on screen (standing
 * until withdrawn or dismissed) and the passing toasts (notices of other Threads), each once by its id, a kind
 * collapsed into one line ("6 claims lapsed"), at most NoticeDisplay.maxLines lines. In the page's flow
 * under the header, never over it: a stack fixed over the corner covered the event log and Launch.
 */
export function Toasts() {
  const c = useController();
  const toasts = useApp((s) => s.toasts);
  const notices = useApp((s) => s.hostNotices);
  const standing = new Set(notices.map((n) => n.id));
  const passing = toasts.map((t) => ({ id: `toast-${t.id}`, about: t.about ?? `toast:${t.id}`, title: t.title, body: t.body }));
  const { lines, hidden } = noticeLines([...notices, ...passing]);
  const dismiss = (ids: readonly string[]) => {
    for (const id of ids) {
      if (standing.has(id)) c.notices.dismissHostNotice(id);
      else c.notices.dismissToast(Number(id.slice('toast-'.length)));
    }
  };
  return (
    <section className="toasts" aria-label="Notices" aria-live="polite" data-testid="notices">
      {lines.map((l) => {
        const isHost = l.ids.some((id) => standing.has(id));
        return (
          <div
            key={l.ids[l.ids.length - 1]}
            className={`toast${isHost ? ' standing' : ''} kind-${l.kind}`}
            data-testid={isHost ? 'host-notice' : 'toast'}
            data-notice-id={l.ids[l.ids.length - 1]}
            data-count={l.ids.length}
            role="status"
          >
            <div className="toast-title">{l.title}</div>
            <div className="toast-body">{l.body}</div>
            <button type="button" className="dismiss" aria-label={`Dismiss: ${l.title}`} onClick={() => dismiss(l.ids)}>
              ×
            </button>
          </div>
        );
      })}
      {hidden > 0 && (
        <div className="toast-more" data-testid="notices-more">
          and {hidden} more: the event log has each
        </div>
      )}
    </section>
  );
}
