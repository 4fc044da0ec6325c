/**
 * The bubblewrap command line that contains one agent: what it holds (AgentReach) in, the argv out.
 *
 * Why our own arguments and not `@anthropic-ai/sandbox-runtime` (checked at 0.0.83): it declares Node >= 22.12
 * (Forkbench runs on 20.11+), its Linux sandbox is built around filesystem allow/deny lists and a network
 * proxy it starts (HTTP + SOCKS5) that we do not want (the agents' CLIs need their APIs directly), and it
 * cannot say what item 2 of issue 43 needs per agent: a pid namespace whose /proc shows only the agent's own
 * tree, a devpts of its own, the agents' socket bound in, and writable binds chosen per claim.
 *
 * The order of the mounts matters, each later one lies over the earlier:
 * 1. the whole system read-only, a fresh /dev (its own devpts: /dev/pts holds no other pane's terminal; the
 *    pane's own pty is inherited as fds 0-2 and is the controlling terminal, and bwrap binds it to
 *    /dev/console), its own /proc (its pid namespace's), a private /tmp;
 * 2. what the agent may read although it lay under /tmp (a test's or a container's home, the Thread folder);
 * 3. hidden folders: an empty tmpfs over the data root (journal, snapshots, serve.json, host.lock, other
 *    agents' records and worktrees) and the runtime folder (the pty host's socket and log, other agents'
 *    secrets);
 * 4. what of those it reads (the fence hooks, the CLI shim, its own config files);
 * 5. what it writes (its worktrees folder, its state folder, git's objects/refs/logs, its CLI's state);
 * 6. the agents' socket, the one door to the board;
 * 7. what must stay read-only although it lies inside a writable bind (other agents' worktree admin folders).
 *
 * No `--new-session`: it would setsid the agent away from its pty, and the pane's program needs that pty as
 * its controlling terminal (job control, Ctrl-C). The pty's other processes are out of its reach anyway:
 * the pid namespace hides them and the fresh devpts hides their terminals.
 */
import * as fs from 'node:fs';

/** What one agent's sandbox holds. Absolute paths; a path that does not exist is left out (bwrap refuses a
 *  missing source), so a folder made later must lie under one that exists at start. */
export interface AgentReach {
  /** Read-only again after the private /tmp hid it (the Thread folder, the home, when under /tmp). */
  visible: string[];
  /** Hidden behind an empty tmpfs. */
  hidden: string[];
  /** Read-only, inside hidden folders. */
  readOnly: string[];
  /** Writable. */
  writable: string[];
  /** Folders of Unix sockets, bound in read-only (a connect needs no write permission on the mount). */
  sockets: string[];
  /** Read-only again inside writable binds. */
  protect: string[];
  /** Where the agent starts. */
  cwd: string;
  /** bwrap keeps every capability of a root caller (the sandbox would then be read-only only by
   *  convention: root remounts it); they are dropped. Unprivileged callers have none to drop. */
  root: boolean;
}

/** The flags every agent's sandbox starts with (and the probe and `sandbox check` use). */
export function baseArgs(root: boolean): string[] {
  return [
    // The sandbox ends with whatever started it (the pty host), never lingering behind a dead host.
    '--die-with-parent',
    '--unshare-pid',
    '--unshare-ipc',
    ...(root ? ['--cap-drop', 'ALL'] : []),
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
  ];
}

export function sandboxArgs(reach: AgentReach, command: string, args: readonly string[], exists: (p: string) => boolean = fs.existsSync): string[] {
  const out = baseArgs(reach.root);
  const each = (flag: string, paths: readonly string[]) => {
    for (const p of unique(paths)) if (exists(p)) out.push(flag, p, p);
  };
  each('--ro-bind', reach.visible);
  for (const p of unique(reach.hidden)) if (exists(p)) out.push('--tmpfs', p);
  each('--ro-bind', reach.readOnly);
  each('--bind', reach.writable);
  each('--ro-bind', reach.sockets);
  // Other agents' admin folders come and go with their claims (an approval removes one) while this sandbox
  // starts: one listed a moment ago and gone when bwrap binds it would fail the whole start ("Can't find
  // source path"; seen under load when a task was approved as another agent launched). A gone one needs no
  // protecting, so bwrap is told to skip it.
  for (const p of unique(reach.protect)) out.push('--ro-bind-try', p, p);
  out.push('--chdir', reach.cwd, '--', command, ...args);
  return out;
}

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths)];
}
