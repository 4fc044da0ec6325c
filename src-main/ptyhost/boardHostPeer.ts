import { readFileSync } from 'node:fs';
import { readProcStat } from '../base/procStat.js';
import { redactSecrets } from '../base/redactSecrets.js';

/**
 * Whether a process that greets the pty host may be its board host, from what the kernel says of its
 * ancestry (its pid comes from SO_PEERCRED, never from anything it sent). Every process an agent starts
 * descends from this pty host (from its pane reaper, which adopts what double-forks away), or shares a
 * pane's session or process group: such a process is refused whatever it says. So is one that cannot be
 * read (gone already: it connected, forked and exited) — the pty host fails closed.
 */

/** Far deeper than any real chain of shells, terminals and launchers above a board host. */
const MAX_ANCESTRY = 64;

export type PeerVerdict =
  | { kind: 'outside'; pid: number }
  | { kind: 'pane'; pid: number; why: string }
  | { kind: 'unknown'; pid: number | null; why: string };

export interface OwnProcesses {
  /** This pty host and, when it runs under one, its pane reaper: everything below them is an agent's. */
  ancestors: ReadonlySet<number>;
  /** Each pane's root process, which leads the pane's session and process group (node-pty uses setsid). */
  paneRoots: ReadonlySet<number>;
}

export function judgePeer(pid: number | null, own: OwnProcesses): PeerVerdict {
  if (pid === null) return { kind: 'unknown', pid, why: 'the kernel did not name the process that connected' };
  let cur = pid;
  for (let i = 0; i < MAX_ANCESTRY; i++) {
    if (cur <= 1) return { kind: 'outside', pid };
    if (own.ancestors.has(cur)) return { kind: 'pane', pid, why: `process ${pid} runs below this pty host (pid ${cur}): it is one of its agents' processes` };
    if (own.paneRoots.has(cur)) return { kind: 'pane', pid, why: `process ${pid} runs in one of this pty host's panes (its root, pid ${cur})` };
    const st = readProcStat(cur);
    if (!st || st.state === 'zombie') return { kind: 'unknown', pid, why: cur === pid ? `process ${pid} is gone` : `process ${pid}'s ancestor ${cur} is gone` };
    for (const id of [st.session, st.pgrp]) {
      if (id !== undefined && own.paneRoots.has(id)) return { kind: 'pane', pid, why: `process ${pid} is in the session or process group of one of this pty host's panes (${id})` };
    }
    cur = st.ppid;
  }
  return { kind: 'unknown', pid, why: `process ${pid}'s ancestry is deeper than ${MAX_ANCESTRY}` };
}

/** A process's command line for the log ("?" when it cannot be read), bounded so a long one cannot fill it, with
 *  any URL's credentials taken out (redactSecrets: a board host started with its URL in argv wrote it here). */
export function commandLineOf(pid: number | null): string {
  if (pid === null) return '?';
  try {
    return redactSecrets(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ')).slice(0, 300) || '?';
  } catch {
    return '?';
  }
}
