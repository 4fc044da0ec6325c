import { spawn } from 'node:child_process';
import type * as net from 'node:net';

/**
 * Who is on the other end of a Unix socket connection (the agents' socket, the pty host's), from the kernel
 * rather than from anything the caller says: the pid that connected, as SO_PEERCRED recorded it at connect.
 * Node has no API for it, so perl (which git already needs, and the hooks run) reads it from the
 * connection's descriptor, handed over as the child's fd 3. That costs a process (~10-20 ms), so it is
 * asked only where it decides something rare: a call that claims to be a person's, a board host's greeting.
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
