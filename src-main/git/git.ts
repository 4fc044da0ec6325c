import { execFile } from 'node:child_process';
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

function cleanEnv(extra: NodeJS.ProcessEnv | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const k of INHERITED_GIT_VARS) if (!extra || !(k in extra)) delete env[k];
  // Never stop to ask a person for anything: the host has no terminal to ask on.
  env.GIT_TERMINAL_PROMPT = '0';
  return env;
}

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
  // A git that runs the repository's own hooks (user code) starts with only its stdio: see inheritedFds.ts.
  const run = o.closeFds ? withoutInheritedFds('git', ['-c', 'core.quotepath=off', ...args], cleanEnv(o.env)) : { command: 'git', args: ['-c', 'core.quotepath=off', ...args], env: cleanEnv(o.env) };
  return new Promise((resolve, reject) => {
    const child = execFile(
      run.command,
      run.args,
      // A command that talks to a remote can hang on the network: `timeoutMs` ends it (SIGTERM), as a failure.
      { cwd, env: run.env as NodeJS.ProcessEnv, maxBuffer: MAX_BUFFER, encoding: 'utf8', ...(o.timeoutMs ? { timeout: o.timeoutMs } : {}) },
      (err, stdout, stderr) => {
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
    if (o.input !== undefined) child.stdin?.end(o.input);
  });
}

/** Output of a command that prints one value. */
export async function gitLine(cwd: string, args: readonly string[]): Promise<string> {
  return (await git(cwd, args)).stdout.trim();
}

/**
 * Settings that name a program, set where an agent can write them (the repository's .git/config, a task
 * worktree's config.worktree): the host's own git must never run them. Each is put back to git's own
 * behaviour for the host's commands, whatever the repository says.
 */
const NO_AGENT_PROGRAMS = [
  'core.fsmonitor=false',
  'core.sshCommand=ssh',
  'core.askPass=',
  'credential.helper=',
  'gpg.program=gpg',
  'gpg.ssh.program=ssh-keygen',
  'gpg.x509.program=gpgsm',
].flatMap((kv) => ['-c', kv]);

/** Commands that may run a filter (clean, smudge, process), merge or diff driver named by .gitattributes. */
const RUNS_DRIVERS = new Set(['status', 'diff', 'show', 'merge-tree', 'merge', 'worktree', 'checkout', 'add', 'commit', 'stash']);
/** The keys of drivers: which program a `filter=`, `merge=` or `diff=` attribute runs. */
const DRIVER_KEY = /^(filter|merge|diff)\..+\.(clean|smudge|process|driver|command|textconv)$/i;

/**
 * `args` with the `-c` settings that keep git from running a program the repository's config names: the
 * fixed ones above, and, for commands that may run drivers, every driver the config defines, emptied (git
 * then runs no filter; a merge that needed the driver fails, and the task stays in review with a note).
 */
export async function withoutAgentPrograms(cwd: string, args: readonly string[]): Promise<string[]> {
  const command = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '-c');
  if (!command || !RUNS_DRIVERS.has(command)) return [...NO_AGENT_PROGRAMS, ...args];
  const listed = await git(cwd, ['config', '--null', '--name-only', '--get-regexp', '^(filter|merge|diff)\\.'], { allowFail: true });
  const drivers = listed.stdout.split('\0').filter((k) => DRIVER_KEY.test(k));
  return [...NO_AGENT_PROGRAMS, ...drivers.flatMap((k) => ['-c', `${k}=`]), ...args];
}
