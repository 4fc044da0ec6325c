import { readProcStat } from '../pty/procReader.js';
import { PANE_REAPER_NAME } from '../ptyhost/protocol.js';

export { peerPid } from '../pty/peerPid.js';

/** How far up the ancestry of a process to look: far deeper than any real shell → agent → git → hook chain. */
const MAX_ANCESTRY = 64;

/** Who a caller is, for the person check: fail closed, so anything that cannot be told is not a person. */
export type Caller = { person: true } | { person: false; pane: string };

/**
 * Whether a process runs inside one of the panes: it or an ancestor is a pane's root process, or it is in a
 * pane's session or process group (a pane's root leads both: node-pty starts it with setsid), or it
 * descends from a pty host's pane reaper (an agent's process that left its pane by a double fork and setsid
 * is adopted there). A process that cannot be read (gone already: it connected, forked and exited), or an
 * ancestry deeper than any real one, is not a person either.
 */
export function callerOf(pid: number | null, panes: ReadonlyMap<number, string>): Caller {
  if (pid === null) return { person: false, pane: '(a caller the kernel did not name)' };
  let cur: number | undefined = pid;
  for (let i = 0; i < MAX_ANCESTRY; i++) {
    if (!cur || cur <= 1) return { person: true };
    const hit = panes.get(cur);
    if (hit) return { person: false, pane: hit };
    const st = readProcStat(cur);
    // A zombie has exited: what speaks on its connection is a process it left behind, unknown.
    if (!st || st.state === 'zombie') return { person: false, pane: cur === pid ? '(a caller that is gone)' : '(a caller whose parent is gone)' };
    if (st.comm === PANE_REAPER_NAME) return { person: false, pane: '(a process an agent started, outside its pane)' };
    const bySession = st.session !== undefined ? panes.get(st.session) : undefined;
    if (bySession) return { person: false, pane: bySession };
    const byGroup = panes.get(st.pgrp);
    if (byGroup) return { person: false, pane: byGroup };
    cur = st.ppid;
  }
  return { person: false, pane: '(a caller with an ancestry too deep to follow)' };
}
