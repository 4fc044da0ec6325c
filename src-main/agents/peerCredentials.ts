import { spawn } from 'node:child_process';
import type * as net from 'node:net';
import { readProcStat } from '../pty/procReader.js';
import { PANE_REAPER_NAME } from '../ptyhost/protocol.js';

/**
 * Who is on the other end of a connection to the agents' socket, from the kernel rather than from anything
 * the caller says. Node has no API for SO_PEERCRED, so perl (which git already needs, and the hooks run)
 * reads it from a duplicate of the connection's descriptor, handed over as the child's fd 3. That costs a
 * process (~10-20 ms), so it is asked only for the rare call that claims to be a person's.
 */
const PEERCRED_SCRIPT = 'use Socket; open(my $s, "+<&=3") or exit 2; my $c = getsockopt($s, SOL_SOCKET, SO_PEERCRED) or exit 3; my ($pid) = unpack("l", $c); print "$pid\\n";';

/** A peer that does not answer within this long is treated as unknown (never as a person). */
const PEERCRED_TIMEOUT_MS = 5_000;

export function peerPid(conn: net.Socket, perl: string | null): Promise<number | null> {
  if (process.platform !== 'linux' || !perl) return Promise.resolve(null);
  return new Promise((resolve) => {
    let out = '';
    // The descriptor's number, not the socket: a stream handed to spawn as stdio stops being read in this
    // process (Node's rule for a stream a child now uses), and the connection must go on being served.
    const fd = (conn as unknown as { _handle?: { fd?: number } })._handle?.fd;
    if (typeof fd !== 'number' || fd < 0) return resolve(null);
    const child = spawn(perl, ['-e', PEERCRED_SCRIPT], { stdio: ['ignore', 'pipe', 'ignore', fd] });
    const timer = setTimeout(() => child.kill('SIGKILL'), PEERCRED_TIMEOUT_MS);
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const pid = Number(out.trim());
      resolve(code === 0 && Number.isInteger(pid) && pid > 0 ? pid : null);
    });
  });
}

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
