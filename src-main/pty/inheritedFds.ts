/**
 * A child the host starts must inherit nothing but its stdio. node-pty 1.1.0 leaves every pty master it
 * opens without close-on-exec (microsoft/node-pty#657), so each pane's process, and every child_process the
 * host starts later, held the masters of the panes opened before it: a later agent could type into an
 * earlier agent's terminal, and a leaked master kept an earlier pane's session alive after the host died.
 *
 * Node has no fcntl, so the host cannot mark the masters close-on-exec itself without a native addon. The
 * child does it instead: the command runs under a few lines of perl that close every descriptor above 2 and
 * then exec the real program, in the same process (same pid, same start time: the process-group killer and
 * the exit watcher see the program itself). Perl because git depends on it (the fence hooks use it too) and
 * a POSIX sh cannot close a descriptor above 9. Its cost, measured here (2 cores, loaded): spawn to first
 * output 13 ms bare, 25-33 ms through the launcher; it loads no perl module because `use POSIX` alone adds
 * ~15 ms more. An agent CLI takes a second or more to start.
 *
 * node-pty 1.2.0-beta.15 (no stable release has it) closes inherited fds in its own child, but on this
 * project's machines its fallback ran, which stops at the first closed descriptor after fd 15 (a pipe at fd
 * 251 stayed open), so a master above a gap would still leak; and the host's masters stay inheritable by
 * child_process children (the verify runner): not a fix to rely on.
 */
import { findOnPath } from '../base/pathLookup.js';

/**
 * Closes 3 and up, listed from /proc/self/fd (Linux) or /dev/fd (macOS), else 3..1023 (POSIX's usual
 * FD_SETSIZE: a host without either listing is not one we ship for). `open '<&=' fd` adopts a descriptor
 * whatever its mode, so closing the handle closes it, with no module loaded. Then exec, as execvp would
 * (PATH from the child's environment); an exec that fails prints why and exits 1, as node-pty's own does.
 */
const CLOSE_AND_EXEC = [
  // First argument: whether PERL_BADLANG was set for this perl alone (see withoutInheritedFds).
  "delete $ENV{PERL_BADLANG} if shift(@ARGV) eq 'ours';",
  'my ($d, @fds);',
  "if (opendir($d, '/proc/self/fd') || opendir($d, '/dev/fd')) { @fds = grep { /^\\d+$/ && $_ > 2 } readdir $d; closedir $d } else { @fds = 3 .. 1023 }",
  "for (@fds) { open(my $fh, '<&=', $_) && close $fh }",
  'exec { $ARGV[0] } @ARGV;',
  'print STDERR "forkbench: cannot run $ARGV[0]: $!\\n";',
  'exit 1;',
].join(' ');

let perlPath: string | null | undefined;

/** The perl the launcher runs, looked up once on the host's own PATH (never the agent's environment). */
function perl(): string | null {
  if (perlPath === undefined) perlPath = process.platform === 'win32' ? null : findOnPath('perl');
  return perlPath;
}

export type Env = Record<string, string | undefined>;

export interface Launch {
  command: string;
  args: string[];
  env: Env;
}

/**
 * `command args…` wrapped so the program starts with only descriptors 0, 1 and 2. Where there is no perl
 * (Windows, which has no inherited-fd problem of this kind; a Unix without perl, where worktrees are off
 * for the same reason) the command is returned as it is.
 *
 * Perl warns on stderr at start-up when the locale in the environment is not installed (a LANG or LC_ALL
 * carried over ssh from another machine), which would print into every pane. PERL_BADLANG=0 silences it;
 * where the environment did not set it, the launcher removes it again before the exec, so the program sees
 * the environment it was given.
 */
export function withoutInheritedFds(command: string, args: readonly string[], env: Env): Launch {
  const p = perl();
  if (!p) return { command, args: [...args], env };
  const ours = env.PERL_BADLANG === undefined;
  // `--` ends perl's own switches, so a program or argument that starts with '-' is passed on untouched.
  return { command: p, args: ['-e', CLOSE_AND_EXEC, '--', ours ? 'ours' : 'theirs', command, ...args], env: ours ? { ...env, PERL_BADLANG: '0' } : env };
}
