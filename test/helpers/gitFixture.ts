import type { ParkedSeams } from '../../src-main/git/parkedWork.js';
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PeerJudgeFactory } from '../../src-main/agents/peerJudge.js';
import type { ThreadHost } from '../../src-main/thread/threadHost.js';
import { remoteTaskRef, strayRef } from '../../src-shared/git/taskBranch.js';
import { CLI } from './cli.js';
import { openTestHost } from './testHost.js';
export { nextEvent } from './events.js';

/** A fixed identity, so commits work on a machine with no git config (CI). */
export const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'Test Person',
  GIT_AUTHOR_EMAIL: 'person@example.com',
  GIT_COMMITTER_NAME: 'Test Person',
  GIT_COMMITTER_EMAIL: 'person@example.com',
};

/**
 * The test's own git, for setting up and reading back, with no hooks: it blocks this process, which is also
 * the host's, so a fence hook asking the host (the Thread folder's person check) could never be answered.
 * What hooks do is tested through `sh`, a separate process, as an agent or person runs git.
 */
export function gitSync(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): string {
  return execFileSync('git', ['-c', 'core.hooksPath=/dev/null', ...args], { cwd, env: { ...process.env, ...GIT_IDENTITY, ...env }, encoding: 'utf8' }).trim();
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A shell command as a separate process, with the environment given (an agent's, or a person's). */
export function sh(cwd: string, command: string, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', command], { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...GIT_IDENTITY, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0, stdout, stderr });
    });
  });
}

/** A repository on `main` with one committed file. */
export function makeRepo(folder: string, files: Record<string, string> = { 'notes.txt': 'line one\n' }): void {
  fs.mkdirSync(folder, { recursive: true });
  gitSync(folder, ['init', '-q', '-b', 'main']);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(join(folder, name), text);
  gitSync(folder, ['add', '-A']);
  gitSync(folder, ['commit', '-q', '-m', 'first']);
}

export class Fixture {
  readonly hosts: ThreadHost[] = [];
  readonly dirs: string[] = [];

  /** `peerJudge`: what every host of this fixture takes unless `host()` is given another; the real judge
   *  without it. A file that acts as an agent from the test process passes peerJudges.ts's and says why. */
  constructor(private readonly defaults: { peerJudge?: PeerJudgeFactory } = {}) {}

  tmp(): string {
    const d = fs.mkdtempSync(join(tmpdir(), 'forkbench-git-'));
    this.dirs.push(d);
    return d;
  }

  /** A Thread on a fresh repository (or on `folder` as given). `peerJudge`: the real one unless a test acts
   *  as an agent from the test process (peerJudges.ts) and says why. */
  async host(o: { folder?: string; repo?: boolean; liveness?: boolean; dataRoot?: string; runtimeRoot?: string; env?: Record<string, string | undefined>; uncontained?: string; parked?: ParkedSeams; peerJudge?: PeerJudgeFactory } = {}): Promise<{ host: ThreadHost; folder: string; root: string }> {
    const root = this.tmp();
    const folder = o.folder ?? join(root, 'project');
    if (!o.folder) {
      if (o.repo === false) fs.mkdirSync(folder, { recursive: true });
      else makeRepo(folder);
    }
    const { host } = await openTestHost({
      root,
      folder,
      closedBy: 'caller',
      ...(o.dataRoot ? { dataRoot: o.dataRoot } : {}),
      ...(o.runtimeRoot ? { runtimeRoot: o.runtimeRoot } : {}),
      liveness: o.liveness ?? false,
      env: o.env,
      peerJudge: o.peerJudge ?? this.defaults.peerJudge,
      ...(o.uncontained ? { sandboxSupport: uncontainedBecause(o.uncontained) } : {}),
      ...(o.parked ? { parked: o.parked } : {}),
    });
    this.hosts.push(host);
    return { host, folder, root };
  }

  async cleanup(): Promise<void> {
    for (const h of this.hosts.splice(0)) await h.dispose();
    for (const d of this.dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  }
}

/**
 * A host whose agents run uncontained, as on a machine without bwrap or with the sandbox turned off: for the
 * tests of the host's own defences against what an uncontained agent can do (write .git/hooks, kill serve),
 * which a contained agent cannot even try (test/main/sandbox/containedPanes.test.ts).
 */
export const uncontainedBecause = (why: string) => ({ ok: false as const, reason: why, fix: '' });

/** A task's branch on the host's board, as the host names it (git/boardNames.ts: `forkbench/<board>/T-n`). */
export const branchOf = (host: ThreadHost, taskId: string): string => host.worktrees.require().names.branch(taskId);
/** Where the host keeps an unrecorded head `sha` of a task's branch; with no sha, the folder of them all (a
 *  `for-each-ref` pattern). */
export const strayOf = (host: ThreadHost, taskId: string, sha = ''): string => strayRef(branchOf(host, taskId), sha);
/** The remote's copy of a task's branch, where its host pushes each record. */
export const remoteRefOf = (host: ThreadHost, taskId: string): string => remoteTaskRef(branchOf(host, taskId));

/** The environment Forkbench gives an agent: what its git hooks see. */
export function agentEnv(host: ThreadHost, agentId: string): NodeJS.ProcessEnv {
  const rec = host.roster.agent(agentId);
  if (!rec) throw new Error(`no agent ${agentId}`);
  return { FORKBENCH_SOCKET: host.socket.path, FORKBENCH_SECRET: rec.secret, FORKBENCH_AGENT_ID: rec.id };
}

/** A Thread with one task T-1 claimed by a real idle agent: its token and its worktree. */
export async function claimedTask(fx: Fixture, o: { leaseMs?: number } = {}) {
  const ctx = await fx.host();
  if (o.leaseMs) await ctx.host.board.run((e) => e.setSettings({ leaseMs: o.leaseMs }));
  await ctx.host.board.run((e) => e.addTask({ title: 'work' }));
  const a = await idleAgent(ctx.host);
  const c = (await cliAs(ctx.host, a, ['claim', 'T-1'])).out.result as { token: number; worktree: { path: string } };
  return { ...ctx, a, token: c.token, wt: c.worktree.path };
}

/** `forkbench ARGS --json` as that agent. */
export async function cliAs(host: ThreadHost, agentId: string, args: string[]): Promise<{ code: number; out: { ok: boolean; result?: any; error?: { reason: string; message: string } } }> {
  const r = await sh(process.cwd(), [process.execPath, CLI, ...args, '--json'].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' '), agentEnv(host, agentId));
  return { code: r.code, out: JSON.parse(r.stdout) };
}

/** An agent that exists on the board (a real process in a real pty: a shell that waits). */
export async function idleAgent(host: ThreadHost): Promise<string> {
  const a = await host.roster.launch('custom', { command: 'exec sleep 600' });
  return a.id;
}


/**
 * A real agent: a shell script run in a real pane of the host (so the host knows its process group), its
 * output collected. `until(re)` waits for the pane to print a line matching `re`.
 */
export async function paneAgent(host: ThreadHost, dir: string, script: string): Promise<{ id: string; pid: number; output(): string; until(re: RegExp, ms?: number): Promise<void> }> {
  const file = join(dir, `agent-${Math.random().toString(36).slice(2)}.sh`);
  fs.writeFileSync(file, `#!/bin/sh\nset -u\n${script}\n`, { mode: 0o755 });
  const a = await host.roster.launch('custom', { command: file });
  let seen = '';
  host.roster.relay.onData.event(({ agentId, data }) => {
    if (agentId === a.id) seen += data;
  });
  return {
    id: a.id,
    pid: a.pid as number,
    output: () => seen,
    until: (re, ms = 20_000) =>
      new Promise<void>((resolve, reject) => {
        const t0 = Date.now();
        const poll = setInterval(() => {
          if (re.test(seen)) {
            clearInterval(poll);
            resolve();
          } else if (Date.now() - t0 > ms) {
            clearInterval(poll);
            reject(new Error(`timed out waiting for ${re}; pane: ${seen.slice(-1500)}`));
          }
        }, 20);
      }),
  };
}

/** The first lines of a pane agent's script: claim T-1 and go to its worktree. */
export const CLAIM_T1_AND_CD = `wt=$(forkbench claim T-1 --json | sed -n 's/.*"path":"\\([^"]*\\)".*/\\1/p')
cd "$wt" || exit 9`;

/** Every ref of the repository with the commit it names. */
export function allRefs(folder: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of gitSync(folder, ['for-each-ref', '--format=%(refname) %(objectname)']).split('\n')) {
    const [ref, sha] = line.split(' ');
    if (ref && sha) out.set(ref, sha);
  }
  return out;
}

/** Whether a commit is reachable from any ref (so nothing has lost it). */
export function reachable(folder: string, sha: string): boolean {
  return gitSync(folder, ['for-each-ref', '--contains', sha, '--format=%(refname)']).length > 0;
}

/** A bare repository as a remote, with main at one commit, and a clone of it as a Thread's folder, in a new
 *  temp folder `root` (the caller removes it). */
export function cloneOfBareRemote(prefix: string): { root: string; bare: string; folder: string } {
  const root = fs.mkdtempSync(join(tmpdir(), prefix));
  makeRepo(join(root, 'seed'));
  const bare = join(root, 'remote.git');
  gitSync(root, ['init', '-q', '--bare', '-b', 'main', bare]);
  gitSync(join(root, 'seed'), ['push', '-q', bare, 'main']);
  const folder = join(root, 'clone');
  gitSync(root, ['clone', '-q', bare, folder]);
  return { root, bare, folder };
}
