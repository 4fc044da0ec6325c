import { useState } from 'react';
import { useApp, useController } from '../state/hooks.js';

/**
 * "Sign out other browsers": in a browser on `forkbench serve`, ends every other browser's session on the
 * host (a link opened elsewhere, a credential someone copied), their windows closed at once. This page keeps
 * its own. Nothing in Electron, which has no browser sessions.
 */
export function SessionControl() {
  const c = useController();
  const connected = useApp((s) => s.connection === 'connected');
  const [said, setSaid] = useState<string | null>(null);
  const sessions = c.transport.sessions;
  if (!sessions) return null;
  const revoke = async () => {
    try {
      const n = await sessions.revokeOthers();
      setSaid(n === 0 ? 'no other browser' : `${n} signed out`);
    } catch (err) {
      setSaid(null);
      c.notices.showError('sign out other browsers', err);
    }
  };
  return (
    <button
      type="button"
      className="session-revoke"
      data-testid="revoke-other-sessions"
      title="Sign out every other browser on this host (a link opened elsewhere, a copied credential): they need a new link from `forkbench serve`"
      disabled={!connected}
      onClick={() => void revoke()}
    >
      Sign out others{said ? ` (${said})` : ''}
    </button>
  );
}
