import type { ProcState } from '../pty/procReader.js';

/**
 * The background check that renews the leases of agents that are alive and making progress. Its decision is
 * a pure function, so every case (stopped, zombie, silent, busy) is a unit test; the loop around it only
 * gathers facts.
 */
export interface LivenessFacts {
  /** State of the agent's root process. */
  state: ProcState;
  /** performance.now() of the last sign of progress: pty output, a board call, or CPU time used. */
  lastProgressAt: number;
  now: number;
  /** The Thread's lease: silence for this long means the agent is not working on anything. */
  leaseMs: number;
}

export type LivenessVerdict = 'renew' | 'stalled' | 'gone';

export function judgeLiveness(f: LivenessFacts): LivenessVerdict {
  if (f.state === 'gone') return 'gone';
  // A stopped process (SIGSTOP, a debugger, Ctrl-Z) or a zombie cannot be working, whatever its past.
  if (f.state === 'stopped' || f.state === 'zombie') return 'stalled';
  return f.now - f.lastProgressAt >= f.leaseMs ? 'stalled' : 'renew';
}
