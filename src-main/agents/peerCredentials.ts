import { spawn } from 'node:child_process';
import type * as net from 'node:net';
import { readProcStat } from '../pty/procReader.js';

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
    const child = spawn(perl, ['-e', PEERCRED_SCRIPT], { stdio: ['ignore', 'pipe', 'ignore', conn] });
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

/**
 * Whether a process runs inside one of the panes: it or an ancestor is a pane's root process, or it is in a
 * pane's session or process group (a pane's root leads both: node-pty starts it with setsid). A process
 * that daemonizes out of its pane (a double fork and setsid) escapes this; the README says so.
 */
export function paneOfProcess(pid: number, panes: ReadonlyMap<number, string>): string | null {
  let cur: number | undefined = pid;
  for (let i = 0; cur && cur > 1 && i < MAX_ANCESTRY; i++) {
    const hit = panes.get(cur);
    if (hit) return hit;
    const st = readProcStat(cur);
    if (!st) return null;
    const bySession = st.session !== undefined ? panes.get(st.session) : undefined;
    if (bySession) return bySession;
    const byGroup = panes.get(st.pgrp);
    if (byGroup) return byGroup;
    cur = st.ppid;
  }
  return null;
}
