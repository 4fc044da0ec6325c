/**
 * Whether a pane's shell holds its terminal, as the kernel says: the shell's prompt marks (OSC 133) are
 * believed only then. While a command runs, the command's process group holds the terminal, so a mark the
 * command prints (an agent that wants its busy pane to look idle) is not the shell's.
 *
 * The rule. A job-control shell (bash, zsh) puts itself in a process group of its own and gives the terminal
 * to it at each prompt; each command it runs gets another group, led by a child of the shell. The terminal's
 * foreground group (tpgid, /proc/<pid>/stat field 8, the same for every process on the terminal) is the
 * shell's exactly when its leader is
 * - the pane's root: the pane runs the shell itself (node-pty's setsid makes the root a group leader, and a
 *   command the shell runs leads a group of its own, never the root's); or
 * - a process whose parent is one of the root's group other than the root: the shell inside a sandbox. bwrap
 *   with --unshare-pid (sandboxArgs.ts) is two processes in the root's group, the root and, under it, the
 *   pid namespace's init, whose child is the shell; a command of that shell has the shell for a parent, and
 *   the shell leads its own group.
 * Three reads of /proc (~20 us each), no scan of every process: the root's stat for tpgid, the leader's and
 * its parent's. A leader gone (its group lives on without it) is not the shell, which leads its group as
 * long as it lives.
 *
 * What it cannot tell: what runs as the shell. A builtin (bash's own `printf`) or a command substitution
 * prints while the shell holds the terminal; so does a program that joins the shell's group and takes the
 * terminal on purpose (setpgid, tcsetpgrp). And the shell holds it for a moment between the commands of one
 * line, so a mark from a program that has just exited, parsed in that moment, passes (measured here: 6 of 40
 * for `/usr/bin/printf …; echo; sleep`, 1 of 40 for the builtin; 0 of 40 for a program still running). What
 * it stops for sure is a program, an agent's CLI or a command of it, that prints the mark while it runs.
 */
import { readProcStat, type ProcStat } from '../base/procStat.js';

/** Only Linux has /proc to ask; elsewhere (macOS: no sandbox either) the marks are believed as they come. */
export const canTellShellForeground = process.platform === 'linux';

export function shellHoldsTerminal(rootPid: number, read: (pid: number) => ProcStat | undefined = readProcStat): boolean {
  const root = read(rootPid);
  if (root?.tpgid === undefined || root.tpgid <= 0) return false;
  if (root.tpgid === root.pgrp) return true;
  const leader = read(root.tpgid);
  if (!leader || leader.pgrp !== root.tpgid) return false;
  const parent = read(leader.ppid);
  return parent !== undefined && parent.pid !== rootPid && parent.pgrp === root.pgrp;
}
