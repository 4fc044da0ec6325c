import { execFile } from 'node:child_process';
import { devNull } from 'node:os';
import { withoutInheritedFds } from '../pty/inheritedFds.js';

/** A git command that exited non-zero, with what it said: callers turn it into a message for a person. */
export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly code: number | null,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} failed (${code ?? 'killed'}): ${stderr.trim() || stdout.trim()}`);
    this.name = 'GitError';
  }
}

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
}

/**
 * Variables git sets for hooks and scripts it runs. A host started from such a place (a hook, `git rebase
 * -x`) would otherwise point every command at the wrong repository.
 */
const INHERITED_GIT_VARS = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_COMMON_DIR', 'GIT_PREFIX', 'GIT_OBJECT_DIRECTORY'];

/** Configuration carried in the environment (what `git -c` and GIT_CONFIG_COUNT set for a child): the host's
 *  git takes its settings from its own command line only. */
const CONFIG_VARS = /^GIT_CONFIG_(PARAMETERS|COUNT|KEY_\d+|VALUE_\d+)$/;

function cleanEnv(extra: NodeJS.ProcessEnv | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const k of INHERITED_GIT_VARS) if (!extra || !(k in extra)) delete env[k];
  for (const k of Object.keys(env)) if (CONFIG_VARS.test(k)) delete env[k];
  // Never stop to ask a person for anything: the host has no terminal to ask on.
  env.GIT_TERMINAL_PROMPT = '0';
  // No system or global config: ~/.gitconfig (and, for a person who is root, /etc/gitconfig) is a file every
  // agent can write, and it can name programs and URL rewrites. What the host needs of the person's config
  // (their identity, their credential helpers) it reads itself and names on the command line (configSettings).
  env.GIT_CONFIG_NOSYSTEM = '1';
  env.GIT_CONFIG_GLOBAL = devNull;
  return env;
}

/** The transports the host's git talks over: a local path (`file`), ssh and https. None runs a program of the
 *  repository's choosing (`ext::` runs any command; a `<helper>::` URL runs git-remote-<helper>). */
export const ALLOWED_PROTOCOLS = ['file', 'ssh', 'https'] as const;

/**
 * What every git the host runs is told on its command line, over the repository's config (.git/config and a
 * worktree's config.worktree, which every agent can write and git cannot be told to skip; a `-c` setting
 * wins over both for a key that has one value):
 * - hooks: none. `core.hooksPath` names the null device, a folder nobody can put a hook in: the host's
 *   `worktree add`, `merge`, `update-ref`, `fetch`, `push` and `fast-import` run no hook of anyone's, so
 *   nothing an agent planted in `.git/hooks` runs as the host (and no person check can be asked from there).
 * - no program the config names: fsmonitor, ssh, askpass, credential helpers, signing programs, pager and
 *   editor are git's own or none (the drivers of filters and diffs are emptied per command: withoutAgentPrograms).
 * - transports: file, ssh and https only. `protocol.<name>.allow` in the repository's config beats
 *   `protocol.allow`, so each one the config sets is put back to `never` where the host talks to a remote
 *   (TaskRemote: `ext::` runs any command).
 * - no submodules: a checkout or fetch that recursed would reach URLs and config of the submodules'.
 */
const HOST_ONLY = [
  `core.hooksPath=${devNull}`,
  'core.fsmonitor=false',
  'core.sshCommand=ssh',
  'core.askPass=',
  'core.pager=cat',
  'core.editor=:',
  'credential.helper=',
  'gpg.program=gpg',
  'gpg.ssh.program=ssh-keygen',
  'gpg.x509.program=gpgsm',
  'protocol.allow=never',
  ...ALLOWED_PROTOCOLS.map((p) => `protocol.${p}.allow=always`),
  'submodule.recurse=false',
  'fetch.recurseSubmodules=false',
  'push.recurseSubmodules=no',
].flatMap((kv) => ['-c', kv]);

/** A diff of a large change can be big; past this the caller is told, not the process killed. 64 MiB. */
const MAX_BUFFER = 64 * 1024 * 1024;

/**
 * Run git in `cwd`. Resolves with its output whatever the exit code when `allowFail` is set (some commands
 * answer through their exit code: merge-tree, rev-parse --verify); otherwise a non-zero exit rejects.
 */
export function git(
  cwd: string,
  args: readonly string[],
  o: { allowFail?: boolean; env?: NodeJS.ProcessEnv; input?: string; closeFds?: boolean; timeoutMs?: number } = {},
): Promise<GitResult> {
  const full = ['-c', 'core.quotepath=off', ...HOST_ONLY, ...args];
  // A git that may start a program beside itself (ssh, a credential helper) starts with only its stdio: see
  // inheritedFds.ts.
  const run = o.closeFds ? withoutInheritedFds('git', full, cleanEnv(o.env)) : { command: 'git', args: full, env: cleanEnv(o.env) };
  return new Promise((resolve, reject) => {
    let pid: number | undefined;
    const child = execFile(
      run.command,
      run.args,
      // A command that talks to a remote can hang on the network: `timeoutMs` ends it (SIGTERM), as a failure.
      { cwd, env: run.env as NodeJS.ProcessEnv, maxBuffer: MAX_BUFFER, encoding: 'utf8', ...(o.timeoutMs ? { timeout: o.timeoutMs } : {}) },
      (err, stdout, stderr) => {
        if (pid !== undefined) running.delete(pid);
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : null) : 0;
        if (err && code === null) {
          const e = err as NodeJS.ErrnoException & { killed?: boolean };
          if (e.killed && o.timeoutMs) return reject(new GitError(args, null, stdout, `no answer within ${Math.round(o.timeoutMs / 1000)} s`));
          if (e.code === 'ENOENT') return reject(new Error('git is not installed (or not on PATH): worktrees need it'));
          return reject(new GitError(args, null, stdout, stderr || e.message));
        }
        if (code !== 0 && !o.allowFail) return reject(new GitError(args, code, stdout, stderr));
        resolve({ stdout, stderr, code: code ?? 0 });
      },
    );
    pid = child.pid;
    if (pid !== undefined) running.add(pid);
    if (o.input !== undefined) child.stdin?.end(o.input);
  });
}

/** The host's git processes running now, by pid. */
const running = new Set<number>();

/**
 * The git processes the host runs now: whatever runs under one of them (an ssh the host's push started, and
 * what that ran) is not a person, however far it is from every pane (ProcessWhereabouts.callerOf).
 */
export function hostGitPids(): ReadonlySet<number> {
  return running;
}

/** One setting as git reads it, and from where. */
export interface ScopedSetting {
  scope: string;
  /** As git prints it: section and variable lowercased, a subsection as written. */
  key: string;
  value: string;
}

/**
 * Every setting matching `pattern` (a `git config --get-regexp` pattern) with the scope it comes from, read
 * as the person's own git would (system and global too): for the host to choose from as text, never to run.
 * The person's identity and credential helpers are taken from their system and global config only, what
 * the repository's config says of URLs and transports from the repository's scopes.
 */
export function configSettings(cwd: string, pattern: string): Promise<ScopedSetting[]> {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0' };
  for (const k of INHERITED_GIT_VARS) delete env[k];
  for (const k of Object.keys(env)) if (CONFIG_VARS.test(k)) delete env[k];
  return new Promise((resolve) => {
    execFile('git', ['config', '--null', '--show-scope', '--get-regexp', pattern], { cwd, env, encoding: 'utf8', maxBuffer: MAX_BUFFER }, (_err, stdout) => {
      // `<scope>\0<key>\n<value>\0` per entry; nothing (exit 1) when there is none.
      const out: ScopedSetting[] = [];
      const parts = (stdout ?? '').split('\0');
      for (let i = 0; i + 1 < parts.length; i += 2) {
        const entry = parts[i + 1] as string;
        const nl = entry.indexOf('\n');
        out.push({ scope: parts[i] as string, key: nl < 0 ? entry : entry.slice(0, nl), value: nl < 0 ? '' : entry.slice(nl + 1) });
      }
      resolve(out);
    });
  });
}

/** A setting of the person's own (their system or global config), not the repository's. */
export const personScope = (s: ScopedSetting) => s.scope === 'system' || s.scope === 'global';

/** Output of a command that prints one value. */
export async function gitLine(cwd: string, args: readonly string[]): Promise<string> {
  return (await git(cwd, args)).stdout.trim();
}

/** Commands that may run a filter (clean, smudge, process), merge or diff driver named by .gitattributes. */
// read-tree -u and checkout-index write files (a saved parked work restored: parkedWork.ts), and write-tree,
// update-index and hash-object may read them through a clean filter (write-tree did, in parkedWork.test.ts).
const RUNS_DRIVERS = new Set(['status', 'diff', 'show', 'merge-tree', 'merge', 'worktree', 'checkout', 'add', 'commit', 'stash', 'read-tree', 'checkout-index', 'write-tree', 'update-index', 'hash-object']);
/** The keys of drivers: which program a `filter=`, `merge=` or `diff=` attribute runs. */
const DRIVER_KEY = /^(filter|merge|diff)\..+\.(clean|smudge|process|driver|command|textconv)$/i;

/**
 * `args` with the `-c` settings that keep git from running a driver the repository's config names (beyond
 * HOST_ONLY, which every host git gets): for commands that may run drivers, every driver the config defines,
 * emptied (git then runs no filter; a merge that needed the driver fails, and the task stays in review with
 * a note). Per command, since their names are the config's own.
 */
export async function withoutAgentPrograms(cwd: string, args: readonly string[]): Promise<string[]> {
  const command = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '-c');
  if (!command || !RUNS_DRIVERS.has(command)) return [...args];
  const listed = await git(cwd, ['config', '--null', '--name-only', '--get-regexp', '^(filter|merge|diff)\\.'], { allowFail: true });
  const drivers = listed.stdout.split('\0').filter((k) => DRIVER_KEY.test(k));
  return [...drivers.flatMap((k) => ['-c', `${k}=`]), ...args];
}
