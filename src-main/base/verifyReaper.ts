/**
 * A verify command runs the repository's code, which an agent wrote (issue 42, items 3 and 4). It runs under a
 * small perl parent of its own, as the panes run under the pty host's (ptyHostLauncher.ts):
 *
 * - a child subreaper (prctl PR_SET_CHILD_SUBREAPER): a process the command detaches with a double fork and
 *   setsid (`setsid -f`) is adopted by it, not by init, so the person check still finds it below the verify
 *   the host tracks as the agent's (peerCredentials.whereIs), and so it can be found and ended;
 * - the owner of the whole tree: when the command exits, when the host asks it to stop (SIGTERM: a timeout,
 *   the person taking the entry out), or when the host itself dies (PR_SET_PDEATHSIG), it sends SIGTERM to
 *   every process below it, gives them the grace to clean up, SIGKILLs what is left until nothing is, and
 *   only then exits with the command's status. A verify therefore never leaves a process behind that holds
 *   its output pipe or answers as a person.
 *
 * It also closes every inherited descriptor above 2 first (pty/inheritedFds.ts says why: the panes' pty masters).
 * Linux only: elsewhere (no /proc, no prctl) the verify runs as its own process group, as before.
 */
import { findOnPath } from './pathLookup.js';

/** The reaper's process name (comm: 15 characters at most), which the person check knows as an agent's. */
export const VERIFY_REAPER_NAME = 'forkbench-check';

/** What the reaper exits with when it was told to stop before the command ended: 128 + SIGTERM, as a shell
 *  reports a command SIGTERM ended. */
export const STOPPED_EXIT = 143;

/**
 * Arguments: whether PERL_BADLANG was set for this perl alone (withoutInheritedFds says why), the host's pid (the parent whose death ends the tree), the grace in ms, then the program and its
 * arguments. The descendants are read from /proc (every pid's parent, from the last ')' of its stat line:
 * a comm may hold spaces and parentheses). Perl's waitpid runs a signal's handler and waits again, so the
 * handler dies out of the wait (an eval) to stop at once.
 */
const REAPER = `
use POSIX ();
$0 = '${VERIFY_REAPER_NAME}';
delete $ENV{PERL_BADLANG} if shift(@ARGV) eq 'ours';
my ($host, $grace) = (shift @ARGV, shift @ARGV);
my ($d, @fds);
if (opendir($d, '/proc/self/fd')) { @fds = grep { /^\\d+$/ && $_ > 2 } readdir $d; closedir $d }
for (@fds) { open(my $fh, '<&=', $_) && close $fh }
my %prctl = (x86_64 => 157, aarch64 => 167, i386 => 172, i686 => 172, armv7l => 172);
my $nr = $prctl{(POSIX::uname())[4]};
if ($nr) { syscall($nr, 36, 1, 0, 0, 0); syscall($nr, 1, 15, 0, 0, 0) }
exit ${STOPPED_EXIT} if getppid() != $host;
my $stop = 0;
$SIG{$_} = sub { $stop = 1 } for qw(TERM INT HUP);
my $child = fork;
exit 127 unless defined $child;
if ($child == 0) { $SIG{$_} = 'DEFAULT' for qw(TERM INT HUP); exec { $ARGV[0] } @ARGV; print STDERR "forkbench: cannot run $ARGV[0]: $!\\n"; exit 127 }
sub tree {
  my %kids;
  opendir(my $p, '/proc') or return ();
  for my $pid (grep { /^\\d+$/ } readdir $p) {
    open(my $f, '<', "/proc/$pid/stat") or next;
    my $s = <$f>;
    close $f;
    next unless defined $s;
    my $r = rindex($s, ')');
    next if $r < 0;
    my (undef, $ppid) = split ' ', substr($s, $r + 1);
    push @{$kids{$ppid}}, $pid;
  }
  closedir $p;
  my @all;
  my @q = ($$);
  while (@q) { for my $k (@{$kids{shift @q} || []}) { push @all, $k; push @q, $k } }
  return @all;
}
my $status;
sub reap { while ((my $w = waitpid(-1, POSIX::WNOHANG())) > 0) { $status = $? if $w == $child } }
eval {
  my $out = sub { die "stop\n" };
  local @SIG{qw(TERM INT HUP)} = ($out, $out, $out);
  die "stop\n" if $stop;
  while (1) {
    my $w = waitpid(-1, 0);
    if ($w == $child) { $status = $?; last }
    last if $w == -1;
  }
};
$SIG{$_} = 'IGNORE' for qw(TERM INT HUP);
reap();
my @left = tree();
if (@left) {
  kill 'TERM', @left;
  for (1 .. $grace / 50) { reap(); last unless tree(); select(undef, undef, undef, 0.05) }
  for (1 .. 1000) { reap(); @left = tree(); last unless @left; kill 'KILL', @left; select(undef, undef, undef, 0.01) }
}
reap();
exit ${STOPPED_EXIT} unless defined $status;
exit(($status & 127) ? 128 + ($status & 127) : $status >> 8);
`;

type Env = Record<string, string | undefined>;

export interface ContainedLaunch {
  command: string;
  args: string[];
  env: Env;
}

/** A program (the verify's shell, or the sandbox around it) under the verify reaper; null where it cannot run
 *  (not Linux, no perl): there the caller runs it as a process group of its own, which a `setsid -f` escapes. */
export function containedShell(argv: readonly string[], graceMs: number, env: Env, perl: string | null = reaperPerl()): ContainedLaunch | null {
  if (!perl) return null;
  const ours = env.PERL_BADLANG === undefined;
  return {
    command: perl,
    args: ['-e', REAPER, '--', ours ? 'ours' : 'theirs', String(process.pid), String(graceMs), ...argv],
    env: ours ? { ...env, PERL_BADLANG: '0' } : env,
  };
}

let perlPath: string | null | undefined;

/** The perl the reaper runs, looked up once on the host's own PATH; none off Linux (no /proc, no prctl). */
function reaperPerl(): string | null {
  if (perlPath === undefined) perlPath = process.platform === 'linux' ? findOnPath('perl') : null;
  return perlPath;
}
