import { spawn } from 'node:child_process';
import type * as net from 'node:net';
import { PeerCredHelper } from './peerCredHelper.js';

/**
 * Who is on the other end of a Unix socket connection (the agents' socket, the pty host's), from the kernel
 * rather than from anything the caller says: the pid that connected, as SO_PEERCRED recorded it at connect. Node has no API for SO_PEERCRED, so perl (which git already needs, and the hooks run)
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
  return peerPidOnce(conn, perl);
}

/** The same, with a perl of its own for this one connection: for a process that asks rarely (the pty host,
 *  at a board host's greeting) and must not keep a helper child beside the panes it holds. */
export async function peerPidOnce(conn: net.Socket, perl: string | null): Promise<number | null> {
  if (process.platform !== 'linux' || !perl) return null;
  if (running >= MAX_CONCURRENT_PEER_READS) await new Promise<void>((go) => queued.push(go));
  running++;
  // The connection may have gone while this read waited its turn: nothing to ask the kernel about.
  const fd = (conn as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (conn.destroyed || typeof fd !== 'number' || fd < 0) {
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
      resolve(pid);
    };
    // The descriptor's number, not the socket: a stream handed to spawn as stdio stops being read here.
    const child = spawn(perl, ['-e', PEERCRED_SCRIPT], { stdio: ['ignore', 'pipe', 'ignore', fd] });
    const timer = setTimeout(() => child.kill('SIGKILL'), PEERCRED_TIMEOUT_MS);
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', () => settle(null));
    child.on('close', (code) => {
      const pid = Number(out.trim());
      settle(code === 0 && Number.isInteger(pid) && pid > 0 ? pid : null);
    });
  });
}
