import { spawn, type ChildProcess } from 'node:child_process';
import type * as net from 'node:net';

/**
 * One long-lived perl process that reads SO_PEERCRED for the host: Node's IPC channel hands it each
 * connection's descriptor (SCM_RIGHTS, as `child.send(msg, handle)` does for any child), it reads the peer's
 * pid and closes its copy. A fresh perl per connection costs ~10-20 ms (a process start); this costs ~0.2 ms
 * a connection (measured on a 2-core Linux box). Core perl has no recvmsg, so the helper calls the syscall
 * itself with a hand-packed `struct msghdr`: written for the 64-bit Linux ABIs named below; anywhere else
 * `PeerCredHelper.start` gives null and the caller spawns one perl per connection instead.
 */

/** recvmsg's syscall number per architecture (the LP64 msghdr layout below holds for both). */
const RECVMSG_SYSCALL: Partial<Record<string, number>> = { x64: 47, arm64: 212 };

/**
 * The helper. Node writes one JSON line per handle (`{"cmd":"NODE_HANDLE",…,"msg":{"id":N}}`) with the
 * descriptor attached, and sends the next only after `NODE_HANDLE_ACK`; so at most one descriptor is in
 * flight, and it belongs to the next handle line. The answer is `{"id":N,"pid":P}` (0: could not be read).
 * SOL_SOCKET = 1, SO_PEERCRED = 17, SCM_RIGHTS = 1 in the generic Linux ABI that x64 and arm64 share.
 */
const HELPER_SCRIPT = `
my ($sys) = @ARGV;
my $fd = $ENV{NODE_CHANNEL_FD} + 0;
open(my $ch, '+<&=', $fd) or exit 2;
my $buf = '';
my @fds;
while (1) {
  my $data = "\\0" x 65536;
  my $ctrl = "\\0" x 64;
  my $iov = pack('QQ', unpack('J', pack('p', $data)), 65536);
  my $msg = pack('QLx4QQQQlx4', 0, 0, unpack('J', pack('p', $iov)), 1, unpack('J', pack('p', $ctrl)), 64, 0);
  my $n = syscall($sys + 0, $fd, $msg, 0);
  if ($n < 0) { next if $!{EINTR}; exit 3; }
  exit 0 if $n == 0;
  my $clen = unpack('x40 Q', $msg);
  if ($clen >= 20) {
    my ($len, $level, $type) = unpack('Q l l', $ctrl);
    push @fds, unpack('x16 l' . (($len - 16) / 4), $ctrl) if $level == 1 && $type == 1;
  }
  $buf .= substr($data, 0, $n);
  while ($buf =~ s/^([^\\n]*)\\n//) {
    my $line = $1;
    next unless $line =~ /"cmd":"NODE_HANDLE"/;
    my ($id) = $line =~ /"id":(\\d+)/;
    my $f = shift @fds;
    my $pid = 0;
    if (defined $f && open(my $s, '+<&=', $f)) {
      my $c = getsockopt($s, 1, 17);
      $pid = unpack('l', $c) if $c;
      close($s);
    }
    syswrite($ch, qq({"cmd":"NODE_HANDLE_ACK"}\\n{"id":$id,"pid":$pid}\\n));
  }
}
`;

/** An answer that does not come within this long is unknown (never a person, never a pane's). */
const ANSWER_TIMEOUT_MS = 5_000;

export class PeerCredHelper {
  private readonly waiting = new Map<number, (pid: number | null) => void>();
  private nextId = 1;
  private gone = false;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (m: { id?: unknown; pid?: unknown }) => {
      const done = typeof m.id === 'number' ? this.waiting.get(m.id) : undefined;
      if (!done) return;
      this.waiting.delete(m.id as number);
      done(typeof m.pid === 'number' && Number.isInteger(m.pid) && m.pid > 0 ? m.pid : null);
    });
    const fail = () => {
      this.gone = true;
      for (const done of this.waiting.values()) done(null);
      this.waiting.clear();
    };
    child.on('exit', fail);
    child.on('error', fail);
    // Neither the helper nor its channel keeps the host alive: a connection being checked does.
    child.unref();
    (child.channel as { unref?: () => void } | undefined)?.unref?.();
  }

  /** A helper, or null where it cannot run here (another OS or architecture, no perl). */
  static start(perl: string | null): PeerCredHelper | null {
    const sys = RECVMSG_SYSCALL[process.arch];
    if (process.platform !== 'linux' || !perl || sys === undefined) return null;
    try {
      return new PeerCredHelper(spawn(perl, ['-e', HELPER_SCRIPT, String(sys)], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'], serialization: 'json' }));
    } catch {
      return null;
    }
  }

  /** False once the helper has exited: the caller starts another. */
  get alive(): boolean {
    return !this.gone;
  }

  /** The pid of the process that connected `conn`, or null if it cannot be read. */
  peerPid(conn: net.Socket): Promise<number | null> {
    // The raw handle, not the socket: sent as a net.Socket, Node would hand the server's connection count
    // to the child and close the socket here after the send.
    const handle = (conn as unknown as { _handle?: object | null })._handle;
    if (this.gone || conn.destroyed || !handle) return Promise.resolve(null);
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve(null);
      }, ANSWER_TIMEOUT_MS);
      this.waiting.set(id, (pid) => {
        clearTimeout(timer);
        resolve(pid);
      });
      try {
        this.child.send({ id }, handle as net.Socket, { keepOpen: true }, (err) => {
          if (!err) return;
          this.waiting.get(id)?.(null);
          this.waiting.delete(id);
        });
      } catch {
        this.waiting.get(id)?.(null);
        this.waiting.delete(id);
      }
    });
  }

  dispose(): void {
    this.gone = true;
    this.child.kill();
  }
}
