import { spawn } from 'node:child_process';
import type * as net from 'node:net';
import { readProcStat } from '../pty/procReader.js';
import { PANE_REAPER_NAME } from '../ptyhost/protocol.js';
import { PeerCredHelper } from './peerCredHelper.js';

/**
 * Who is on the other end of a connection to the agents' socket, from the kernel rather than from anything
 * the caller says. Node has no API for SO_PEERCRED, so perl (which git already needs, and the hooks run)
 * reads it from a duplicate of the connection's descriptor: one long-lived perl that is handed each
 * descriptor (peerCredHelper.ts, ~0.2 ms a connection), or where that cannot run, a perl per connection
 * that gets it as its fd 3 (~10 ms with the constants written in, ~20 ms with `use Socket` loading them;
 * measured on a 2-core Linux box). It is asked once per connection, and only of a connection whose first
 * call presents a live secret or asks for a person.
 */
const peercredScript = (constants: string) => `${constants}open(my $s, "+<&=3") or exit 2; my $c = getsockopt($s, $SOL, $PEERCRED) or exit 3; my ($pid) = unpack("l", $c); print "$pid\\n";`;

/** SOL_SOCKET and SO_PEERCRED in the kernel's generic socket ABI (x86, arm, arm64, riscv, s390, loongarch);
 *  mips, powerpc and sparc number them otherwise, and there perl's Socket module says. */
const GENERIC_ABI = new Set(['x64', 'ia32', 'arm', 'arm64', 'riscv64', 's390x', 'loong64']);
const PEERCRED_SCRIPT = peercredScript(GENERIC_ABI.has(process.arch) ? 'my ($SOL, $PEERCRED) = (1, 17); ' : 'use Socket; my ($SOL, $PEERCRED) = (SOL_SOCKET, SO_PEERCRED); ');

/** A peer that does not answer within this long is treated as unknown (never as a person). */
const PEERCRED_TIMEOUT_MS = 5_000;

/** Reads at once: each is a process, and a flood of connections must not become a flood of processes. Four
 *  keep 2 cores busy without starving the host; more only queue in the kernel's scheduler instead of here. */
export const MAX_CONCURRENT_PEER_READS = 4;

let running = 0;
const queued: Array<() => void> = [];
const release = () => {
  running--;
  queued.shift()?.();
};

/** Helpers started in this process's life: one that keeps dying is not started over and over; the
 *  per-connection perl takes over. */
const MAX_HELPER_STARTS = 3;
let helper: PeerCredHelper | null = null;
let helperStarts = 0;

/** The process's one helper, started on first use (and again if it died, a few times). */
function sharedHelper(perl: string): PeerCredHelper | null {
  if (helper?.alive) return helper;
  if (helperStarts >= MAX_HELPER_STARTS) return null;
  helperStarts++;
  helper = PeerCredHelper.start(perl);
  return helper;
}

export async function peerPid(conn: net.Socket, perl: string | null): Promise<number | null> {
  if (process.platform !== 'linux' || !perl) return null;
  const shared = sharedHelper(perl);
  if (shared) return shared.peerPid(conn);
  if (running >= MAX_CONCURRENT_PEER_READS) await new Promise<void>((go) => queued.push(go));
  running++;
  // The connection may have gone while this read waited its turn: nothing to ask the kernel about.
  if (conn.destroyed) {
    release();
    return null;
  }
  return new Promise((resolve) => {
    let out = '';
    let settled = false;
    const settle = (pid: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      release();
      // Node stops reading a socket it hands to a child as stdio (the child is meant to read it): read on,
      // or the connection never sees its client's close and holds its descriptor and slot for good.
      if (!conn.destroyed) conn.resume();
      resolve(pid);
    };
    const child = spawn(perl, ['-e', PEERCRED_SCRIPT], { stdio: ['ignore', 'pipe', 'ignore', conn] });
    const timer = setTimeout(() => child.kill('SIGKILL'), PEERCRED_TIMEOUT_MS);
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', () => settle(null));
    child.on('close', (code) => {
      const pid = Number(out.trim());
      settle(code === 0 && Number.isInteger(pid) && pid > 0 ? pid : null);
    });
  });
}

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
 * is adopted there, and which pane it left cannot be told). A process that cannot be read (gone already: it
 * connected, forked and exited), or an ancestry deeper than any real one, cannot be told either.
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
