import { memo, useEffect, useState } from 'react';
import { remainingFraction } from '../../src-shared/board/lease.js';
import { isWarning } from '../state/boardState.js';
import { useClock } from '../state/hooks.js';

/** How often a countdown redraws. 4 Hz keeps the seconds exact to a quarter second at almost no cost, and
 *  it runs only inside the component that shows it: nothing else re-renders, nothing goes over the wire. */
const TICK_MS = 250;

function useTick(active: boolean): void {
  const [, setN] = useState(0);
  useEffect(() => {
    if (!active) return;
    const h = setInterval(() => setN((n) => (n + 1) & 0xffff), TICK_MS);
    return () => clearInterval(h);
  }, [active]);
}

export function formatRemaining(ms: number): string {
  const s = Math.ceil(ms / 1000);
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}`;
  if (s >= 60) return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
  return `${s}s`;
}

interface Props {
  deadline: number;
  leaseMs: number;
  stalled: boolean;
  testId: string;
  variant: 'bar' | 'ring';
}

/** Time left on a lease, from its deadline in the host clock. Amber when stalled or under a quarter left. */
export const Countdown = memo(function Countdown({ deadline, leaseMs, stalled, testId, variant }: Props) {
  const clock = useClock();
  const remaining = Math.round(clock.remaining(deadline));
  useTick(remaining > 0);
  const frac = remainingFraction({ deadline }, leaseMs, clock.now());
  const warn = isWarning(remaining, leaseMs, stalled);
  const cls = `countdown countdown-${variant}${warn ? ' warn' : ''}${remaining === 0 ? ' expired' : ''}`;
  const label = `${formatRemaining(remaining)} left on the lease${stalled ? ' (holder stalled)' : ''}`;
  if (variant === 'ring') {
    const r = 7;
    const c = 2 * Math.PI * r;
    return (
      <span className={cls} data-testid={testId} data-remaining-ms={remaining} data-stalled={String(stalled)} title={label} aria-label={label}>
        <svg width="18" height="18" viewBox="0 0 18 18" aria-hidden="true">
          <circle className="ring-track" cx="9" cy="9" r={r} />
          <circle className="ring-fill" cx="9" cy="9" r={r} strokeDasharray={`${c * frac} ${c}`} transform="rotate(-90 9 9)" />
        </svg>
        <span className="countdown-text">{formatRemaining(remaining)}</span>
      </span>
    );
  }
  return (
    <div className={cls} data-testid={testId} data-remaining-ms={remaining} data-stalled={String(stalled)} title={label} aria-label={label}>
      <div className="bar-track">
        <div className="bar-fill" style={{ width: `${(frac * 100).toFixed(1)}%` }} />
      </div>
      <span className="countdown-text">{formatRemaining(remaining)}</span>
    </div>
  );
});
