import { useEffect, useMemo, useState } from 'react';
import { heldLeases, LeaseAnnouncer } from '../state/leaseAnnouncer.js';
import { useApp, useClock, useController } from '../state/hooks.js';

/**
 * The window's one polite live region for leases (LeaseAnnouncer decides what it says). It is always in the
 * page, empty until there is something to say, since a screen reader listens only to regions that were there
 * before their text changed. It looks again on every board change and once at the moment the announcer
 * names, never on a tick; while the page is not live (host away) it says nothing, as no lease time is known.
 */
export function LeaseAnnouncements() {
  const c = useController();
  const clock = useClock();
  const thread = useApp((s) => s.activeKey);
  const live = useApp((s) => s.connection === 'connected');
  const version = useApp((s) => s.boardVersion);
  const leaseMs = useApp((s) => s.leaseMs);
  const agents = useApp((s) => s.agents);
  // A Thread of its own each: tokens repeat across Threads.
  const announcer = useMemo(() => new LeaseAnnouncer(clock), [clock, thread]);
  // The count makes a sentence said twice (the same lease's next warning) a new node, so it is heard again.
  const [said, setSaid] = useState({ text: '', n: 0 });
  const [wake, setWake] = useState(0);
  useEffect(() => {
    if (!live) return;
    const s = c.state;
    const r = announcer.update(heldLeases(s.board, s.columns, (id) => c.agentName(id)), leaseMs);
    if (r.say) setSaid((p) => ({ text: r.say as string, n: p.n + 1 }));
    if (r.nextAt === null) return;
    const h = setTimeout(() => setWake((n) => n + 1), Math.max(0, r.nextAt - clock.now()));
    return () => clearTimeout(h);
  }, [c, clock, announcer, live, version, leaseMs, agents, wake]);
  return (
    <div className="visually-hidden" role="status" aria-live="polite" aria-atomic="true" data-testid="lease-announcer">
      {said.text && <span key={said.n}>{said.text}</span>}
    </div>
  );
}
