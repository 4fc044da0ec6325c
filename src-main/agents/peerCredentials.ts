import { readProcStat } from '../base/procStat.js';
import { VERIFY_REAPER_NAME } from '../base/verifyReaper.js';
import { PANE_REAPER_NAME } from '../ptyhost/protocol.js';

export { MAX_CONCURRENT_PEER_READS, peerPid } from '../pty/peerPid.js';

/** How far up the ancestry of a process to look: far deeper than any real shell → agent → git → hook chain. */
const MAX_ANCESTRY = 64;

/** Who a caller is, for the person check: fail closed, so anything that cannot be told is not a person. */
export type Caller = { person: true } | { person: false; pane: string };

/** Where a process runs: in the pane of `in` (whatever the panes map names it by), in no pane at all
 *  (`outside`), or somewhere that cannot be told (`unknown`, with why). */
export type Whereabouts<T> = { in: T } | { outside: true } | { unknown: string };

/**
 * Whether a process runs inside one of the panes: it or an ancestor is a pane's root process, or it is in a
 * pane's session or process group (a pane's root leads both: node-pty starts it with setsid), or it
 * descends from a pty host's pane reaper (an agent's process that left its pane by a double fork and setsid
 * is adopted there, and which pane it left cannot be told) or from a verify's reaper (base/verifyReaper.ts).
 * A process that cannot be read (gone already: it connected, forked and exited), or an ancestry deeper than
 * any real one, cannot be told either.
 */
export function whereIs<T>(pid: number | null, panes: ReadonlyMap<number, T>): Whereabouts<T> {
  if (pid === null) return { unknown: 'a caller the kernel did not name' };
  let cur: number | undefined = pid;
  for (let i = 0; i < MAX_ANCESTRY; i++) {
    if (!cur || cur <= 1) return { outside: true };
    const hit = panes.get(cur);
    if (hit !== undefined) return { in: hit };
    const st = readProcStat(cur);
    // A zombie has exited: what speaks on its connection is a process it left behind, unknown.
    if (!st || st.state === 'zombie') return { unknown: cur === pid ? 'a caller that is gone' : 'a caller whose parent is gone' };
    if (st.comm === PANE_REAPER_NAME) return { unknown: 'a process an agent started, outside its pane' };
    // A verify's reaper no longer tracked (its verify just ended, or a host that died left it) holds only
    // the task's code: no person's process is ever below it.
    if (st.comm === VERIFY_REAPER_NAME) return { unknown: 'a process a verify command started' };
    const bySession = st.session !== undefined ? panes.get(st.session) : undefined;
    if (bySession !== undefined) return { in: bySession };
    const byGroup = panes.get(st.pgrp);
    if (byGroup !== undefined) return { in: byGroup };
    cur = st.ppid;
  }
  return { unknown: 'a caller with an ancestry too deep to follow' };
}

/** The person check's answer: a person is a process found outside every pane, nothing else. */
export function callerOf(pid: number | null, panes: ReadonlyMap<number, string>): Caller {
  const w = whereIs(pid, panes);
  if ('outside' in w) return { person: true };
  return { person: false, pane: 'in' in w ? w.in : `(${w.unknown})` };
}
