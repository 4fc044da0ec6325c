/**
 * What one agent's sandbox holds (issue 43, item 2), from the host's folders and the agent's profile.
 *
 * Read-only: the system, the person's home, the Thread folder. Writable: the agent's worktrees folder
 * (`worktrees/<board>/<agent>/`: its present and future claims' folders, under one bind), git's objects, refs and
 * logs (what a commit needs), the worktrees' admin folders, a private /tmp, its own state folder and its CLI's
 * state folders. Hidden: the data root and the runtime folder, except the fence hooks (read-only: every
 * commit runs them), the CLI shim, the agent's own config files and the agents' socket.
 *
 * The admin folders (`.git/worktrees/<id>`) are bound as one folder, because git makes a claim's admin folder
 * in the moment of its grant, after the sandbox started, and a bind made at start of each would miss it.
 * Other agents' admin folders that exist at start are bound read-only over themselves (a mount point cannot
 * be removed or renamed either, so `git worktree prune` in a sandbox where their folders are hidden cannot
 * drop them); one made for another agent after this sandbox started is writable from it (docs/sandbox.md).
 */
import * as fs from 'node:fs';
import { dirname, join, relative, isAbsolute } from 'node:path';
import type { AgentReach } from './sandboxArgs.js';

export interface HostFolders {
  /** The Thread's folder: the agent's starting folder. */
  threadFolder: string;
  /** Whether agents write the Thread folder itself (a Thread without worktrees has no other place). */
  threadFolderWritable: boolean;
  /** The data root (every Thread's board, serve.json, host.lock). */
  dataRoot: string;
  /** The runtime folder (the agents' sockets, their config files, the pty host's socket and log). */
  runtimeRoot: string;
  socketPath: string;
  binDir: string;
  /** What the CLI shim and the agents' MCP servers run: the Node's folder and the CLI's root. A packaged
   *  app's lie in /tmp when it runs as an AppImage (mounted at /tmp/.mount_*), where the private /tmp would
   *  hide them and `forkbench` would fail in every contained pane: they are bound back in read-only. */
  cliFolders?: string[];
  /** The fence hooks, which every commit in a claim's folder runs. */
  hooksDir: string | null;
  /** The repository's common git folder, when the Thread has worktrees. */
  gitCommonDir: string | null;
  /** Where claims' folders go, one folder per agent inside. */
  worktreesRoot: string | null;
  home: string | undefined;
}

export interface AgentFolders {
  agentId: string;
  profile: string;
  /** Its config files (0700 folder in the runtime folder). */
  filesDir: string;
  /** Its state folder in the data root (conversations, a CLI home of the profile's own). */
  stateDir: string;
  env: Record<string, string | undefined>;
  /** A custom command line as the person typed it: the folder of its program, when named by an absolute
   *  path, is readable (the person chose to run it). */
  commandLine?: string;
}

/** Characters a folder name may hold; anything else in an agent's id (a test's own id) becomes `_`. */
export function agentFolderName(agentId: string): string {
  const name = agentId.replace(/[^A-Za-z0-9_.-]/g, '_');
  return name === '.' || name === '..' || name === '' ? `_${name}` : name;
}

/** The folder that holds one agent's claims' folders. */
export const agentWorktreesOf = (worktreesRoot: string, agentId: string) => join(worktreesRoot, agentFolderName(agentId));

/** Each CLI's own state (logins, history, caches), which it must write. Never the person's start-up files,
 *  git config or ssh keys: those stay read-only with the rest of the home. */
export function cliStateFolders(profile: string, env: Record<string, string | undefined>): string[] {
  const home = env.HOME;
  if (!home) return [];
  const xdg = (name: string, fallback: string) => env[name] || join(home, fallback);
  switch (profile) {
    case 'claude':
      return [env.CLAUDE_CONFIG_DIR || join(home, '.claude')];
    case 'codex':
      return [env.CODEX_HOME || join(home, '.codex')];
    case 'gemini':
      return [join(home, '.gemini')];
    case 'opencode':
      return ['XDG_DATA_HOME:.local/share', 'XDG_CONFIG_HOME:.config', 'XDG_CACHE_HOME:.cache', 'XDG_STATE_HOME:.local/state'].map((s) => {
        const [name, fallback] = s.split(':') as [string, string];
        return join(xdg(name, fallback), 'opencode');
      });
    case 'aider':
      return [join(home, '.aider')];
    default:
      return [];
  }
}

/** Files of a CLI's in the home itself that it rewrites: a shell appends its history, made empty when
 *  missing since a read-only home lets nothing create it. */
export function cliStateFiles(profile: string, env: Record<string, string | undefined>): string[] {
  if (!env.HOME) return [];
  if (profile === 'shell') return [env.HISTFILE || join(env.HOME, '.bash_history')];
  return [];
}

/**
 * What a CLI is told so that it keeps its state inside its writable folders. Claude Code keeps its settings
 * file beside the home's other files (`~/.claude.json`) and rewrites it by a lock folder, a temporary file
 * and a rename there, none of which a read-only home allows, and a bound file cannot be renamed over (it then
 * shows first-run screens again, measured with 2.1.332). With CLAUDE_CONFIG_DIR set to the folder it keeps
 * the rest in (`~/.claude`: credentials and settings stay where they were), it keeps that file there, as
 * `.claude.json`: the person's file is copied there once, when the copy is missing or older, so a contained
 * Claude Code starts as the person left it.
 */
export function cliStateEnv(profile: string, env: Record<string, string | undefined>): Record<string, string> {
  if (profile !== 'claude' || env.CLAUDE_CONFIG_DIR || !env.HOME) return {};
  const dir = join(env.HOME, '.claude');
  const theirs = join(env.HOME, '.claude.json');
  const copy = join(dir, '.claude.json');
  try {
    const from = fs.statSync(theirs);
    const to = fs.statSync(copy, { throwIfNoEntry: false });
    if (!to || to.mtimeMs < from.mtimeMs) fs.copyFileSync(theirs, copy);
  } catch {
    /* no settings of the person's yet: Claude Code starts as it would for them */
  }
  return { CLAUDE_CONFIG_DIR: dir };
}

/**
 * What the agent was told to run, where the private /tmp would hide it: its PATH's folders, its custom
 * command's program's folder and what its `forkbench` runs (`cliFolders`) that lie in /tmp (a container's or
 * a test's tools, an AppImage's mount), never inside a hidden root.
 */
export function programFolders(a: AgentFolders, hidden: readonly string[], cliFolders: readonly string[] = []): string[] {
  const path = (a.env.PATH ?? '').split(':').filter((p) => isAbsolute(p));
  const first = a.commandLine?.trim().split(/\s+/)[0] ?? '';
  const named = isAbsolute(first) ? [dirname(first)] : [];
  return [...path, ...named, ...cliFolders].filter((p) => (p === '/tmp' || inside('/tmp', p)) && !hidden.some((h) => h === p || inside(h, p)));
}

const inside = (dir: string, path: string) => {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
};

/** Admin folders of worktrees that are not this agent's, as they stand now. */
function othersAdminFolders(gitCommonDir: string, mine: string): string[] {
  const root = join(gitCommonDir, 'worktrees');
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const n of names) {
    let folder = '';
    try {
      folder = fs.readFileSync(join(root, n, 'gitdir'), 'utf8').trim();
    } catch {
      /* an admin folder without its back pointer belongs to nobody we can tell: protected */
    }
    if (n !== KEEP_ADMIN && !inside(mine, folder)) out.push(join(root, n));
  }
  return out;
}

/** What a commit in a worktree writes of the common git folder: never its hooks/, config or info/. */
const gitWriteFolders = (git: string | null): string[] => (git ? ['objects', 'refs', 'logs', 'worktrees'].map((d) => join(git, d)) : []);

/** A locked admin folder git never prunes and `worktree list` does not show (it names no worktree). */
export const KEEP_ADMIN = '.forkbench-keep';

/**
 * `git worktree prune` removes `.git/worktrees` once it is empty, and git makes it again at the next grant: a
 * new folder, not the one a running sandbox bound, so the agent could not write its new claim's admin folder.
 * A locked entry keeps the folder from ever being empty.
 */
function keepWorktreesFolder(gitCommonDir: string): void {
  const keep = join(gitCommonDir, 'worktrees', KEEP_ADMIN);
  fs.mkdirSync(keep, { recursive: true, mode: 0o700 });
  const locked = join(keep, 'locked');
  if (!fs.existsSync(locked)) fs.writeFileSync(locked, 'Forkbench: keeps this folder for the agents\' sandboxes (docs/sandbox.md)\n');
}

/**
 * The sandbox of one agent. Makes the folders it must write that do not exist yet (its worktrees folder, its
 * CLI's state folders), so that one bind at start covers what it makes later.
 */
export function agentReach(h: HostFolders, a: AgentFolders, root = process.getuid?.() === 0): AgentReach {
  const mine = h.worktreesRoot ? agentWorktreesOf(h.worktreesRoot, a.agentId) : null;
  const cliFolders = cliStateFolders(a.profile, a.env);
  const git = h.gitCommonDir;
  // git makes logs/ at the first reflog entry and worktrees/ at the first worktree: inside a read-only .git
  // it could not, so they are made now.
  const gitFolders = gitWriteFolders(git);
  for (const dir of [mine, ...cliFolders, ...gitFolders]) if (dir) fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (git) keepWorktreesFolder(git);
  const cliFiles = cliStateFiles(a.profile, a.env);
  if (a.profile === 'shell') for (const f of cliFiles) if (!fs.existsSync(f)) fs.writeFileSync(f, '', { mode: 0o600, flag: 'a' });
  return {
    visible: [h.home, h.threadFolder, ...programFolders(a, [h.dataRoot, h.runtimeRoot], h.cliFolders)].filter((p): p is string => !!p),
    hidden: [h.dataRoot, h.runtimeRoot],
    readOnly: [h.hooksDir, h.binDir, a.filesDir].filter((p): p is string => !!p),
    writable: [
      ...(h.threadFolderWritable ? [h.threadFolder] : []),
      ...(mine ? [mine] : []),
      ...gitFolders,
      a.stateDir,
      ...cliFolders,
      ...cliFiles,
    ],
    // Read-only: connecting needs no write to the folder, and an agent must not remove or replace the socket.
    sockets: [dirname(h.socketPath)],
    protect: git && mine ? othersAdminFolders(git, mine) : [],
    cwd: h.threadFolder,
    root,
  };
}

/**
 * What a verify command's sandbox holds (issue 43, item 3: verify runs contained like the agent whose work it
 * checks, since it runs that work's code): the folder it checks and what a commit there needs, nothing of
 * the host's. It writes the folder it runs in (a claim's worktree, or the merge queue's checkout inside the
 * data root, bound back in over the hidden root), git's objects, refs, logs and admin folders; no CLI state
 * (no agent CLI runs in a check), no fence hooks (a check commits nothing the board should record). The
 * agents' socket is bound in as in the agent's own sandbox: what the check asks the board, it asks as the
 * agent (the person check knows its tree as the agent's).
 */
export function verifyReach(h: HostFolders, cwd: string, root = process.getuid?.() === 0): AgentReach {
  const git = h.gitCommonDir;
  const gitFolders = gitWriteFolders(git);
  return {
    visible: [h.home, h.threadFolder].filter((p): p is string => !!p),
    hidden: [h.dataRoot, h.runtimeRoot],
    readOnly: [],
    writable: [...(h.threadFolderWritable ? [h.threadFolder] : []), cwd, ...gitFolders],
    sockets: [dirname(h.socketPath)],
    protect: [],
    cwd,
    root,
  };
}
