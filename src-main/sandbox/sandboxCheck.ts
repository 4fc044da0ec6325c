/**
 * `forkbench sandbox check`: the person's own look at what a contained agent can reach (issue 43, item 4).
 * It lays out a throwaway host (a data folder with a journal, a runtime folder, a Thread folder on a git
 * repository, two agents' claims folders, the agents' socket), starts a fresh sandbox for one agent exactly
 * as the roster does (AgentSandbox.wrap, the same reach), and runs probes inside it. Each promise is then
 * reported held or not, from what the sandboxed shell could do, not from what the arguments say.
 *
 * The probes that try a write clean up whatever they managed to write: an uncontained run must leave the
 * machine as it found it.
 */
import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentSandbox } from './agentSandbox.js';
import { agentWorktreesOf } from './agentReach.js';
import { probeBwrap, type SandboxSupport } from './bwrapProbe.js';
import { findOnPath } from '../base/pathLookup.js';

export interface SandboxPromise {
  /** A short name, stable for scripts (`--json`). */
  id: string;
  /** What is promised, as the person reads it. */
  says: string;
  held: boolean;
}

export interface CheckReport {
  contained: boolean;
  /** Why agents are not contained here, and the fix, when they are not. */
  warning: string | null;
  promises: SandboxPromise[];
}

/** How long the probes may take: each is a file operation or a `kill -0`; a minute means something hangs. */
const PROBE_TIMEOUT_MS = 60_000;

/** One probe: a shell test, and whether the promise is that it succeeds (`can`) or fails (`cannot`). */
interface Probe {
  id: string;
  says: string;
  expect: 'can' | 'cannot';
  sh: string;
}

export async function sandboxCheck(env: NodeJS.ProcessEnv = process.env, support?: SandboxSupport): Promise<CheckReport> {
  const s = support ?? (await probeBwrap(findOnPath('bwrap', env)));
  const root = fs.realpathSync(fs.mkdtempSync(join(env.TMPDIR || tmpdir(), 'forkbench-sandbox-check-')));
  const server = net.createServer((c) => c.end());
  try {
    const dataRoot = join(root, 'data');
    const runtimeRoot = join(root, 'run');
    const thread = join(root, 'project');
    const worktreesRoot = join(dataRoot, 'threads', 'check', 'worktrees');
    const socketDir = join(runtimeRoot, 'fb-check');
    const socketPath = join(socketDir, 'agents.sock');
    const binDir = join(runtimeRoot, 'bin');
    const filesDir = join(runtimeRoot, 'agents-check', 'me');
    const stateDir = join(dataRoot, 'threads', 'check', 'agents', 'me');
    for (const d of [thread, socketDir, binDir, filesDir, stateDir, join(thread, '.git', 'hooks'), join(thread, '.git', 'objects'), join(thread, '.git', 'refs')]) fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(join(thread, '.git', 'config'), '[core]\n\trepositoryformatversion = 0\n');
    fs.writeFileSync(join(thread, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    const journal = join(dataRoot, 'threads', 'check', 'journal.jsonl');
    fs.writeFileSync(journal, '{"kind":"a line of the board\'s journal"}\n');
    const others = agentWorktreesOf(worktreesRoot, 'other');
    fs.mkdirSync(join(others, 'T-1-1'), { recursive: true });
    fs.writeFileSync(join(others, 'T-1-1', 'work.txt'), 'another agent\'s work\n');
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));

    const sandbox = new AgentSandbox(s, {
      threadFolder: thread,
      threadFolderWritable: false,
      dataRoot,
      runtimeRoot,
      socketPath,
      binDir,
      hooksDir: null,
      gitCommonDir: join(thread, '.git'),
      worktreesRoot,
      home: env.HOME,
    });
    const mine = agentWorktreesOf(worktreesRoot, 'me');
    // A process of the host's that the agent must not see nor signal: a stand-in for serve.
    const serve = spawn('sleep', ['600'], { stdio: 'ignore' });
    const ttyOf = terminalOfStdin();
    const probes: Probe[] = [
      { id: 'own-folder', says: 'it writes its own claims’ folder', expect: 'can', sh: `echo x > '${mine}/probe' && rm '${mine}/probe'` },
      { id: 'board-socket', says: 'it reaches the agents’ socket, its one door to the board', expect: 'can', sh: `test -S '${socketPath}'` },
      { id: 'other-terminals', says: 'no other terminal is in its /dev/pts', expect: 'cannot', sh: `ls /dev/pts | grep -q '^[0-9]'${ttyOf ? ` || echo > '${ttyOf}'` : ''}` },
      { id: 'data-folder', says: 'it cannot read the data folder (the journal, agents’ records)', expect: 'cannot', sh: `cat '${journal}'` },
      { id: 'git-hooks', says: 'it cannot write the repository’s .git/hooks', expect: 'cannot', sh: `echo '#!/bin/sh' > '${thread}/.git/hooks/post-commit'` },
      { id: 'git-config', says: 'it cannot write the repository’s .git/config', expect: 'cannot', sh: `echo '[x]' >> '${thread}/.git/config'` },
      { id: 'serve-proc', says: 'it cannot see the host’s processes in /proc', expect: 'cannot', sh: `test -e /proc/${serve.pid}/cmdline` },
      { id: 'serve-kill', says: 'it cannot signal the host’s processes', expect: 'cannot', sh: `kill -0 ${serve.pid}` },
      { id: 'other-worktree', says: 'it cannot read another agent’s worktree', expect: 'cannot', sh: `cat '${others}/T-1-1/work.txt'` },
      { id: 'thread-folder', says: 'it cannot write the Thread folder outside its claims', expect: 'cannot', sh: `echo x > '${thread}/planted'` },
      ...(env.HOME ? [{ id: 'home', says: 'it cannot write the home folder (start-up files, git config, ssh keys)', expect: 'cannot' as const, sh: `echo x > "$HOME/.forkbench-sandbox-check"` }] : []),
    ];
    const script = probes.map((p) => `if ( ${p.sh} ) >/dev/null 2>&1; then echo "${p.id} yes"; else echo "${p.id} no"; fi`).join('\n');
    const run = sandbox.wrap('/bin/sh', ['-c', script], { agentId: 'me', profile: 'shell', filesDir, stateDir, env: { ...env } });
    let out = '';
    try {
      out = await new Promise<string>((resolve, reject) =>
        execFile(run.command, run.args, { cwd: thread, env: { ...env, ...run.env }, timeout: PROBE_TIMEOUT_MS }, (err, stdout, stderr) => (err && !stdout ? reject(new Error(String(stderr).trim() || err.message)) : resolve(String(stdout)))),
      );
    } finally {
      serve.kill('SIGKILL');
      // What an uncontained run managed to write outside the throwaway folder.
      if (env.HOME) fs.rmSync(join(env.HOME, '.forkbench-sandbox-check'), { force: true });
    }
    const could = new Map([...out.matchAll(/^(\S+) (yes|no)$/gm)].map((m) => [m[1], m[2] === 'yes']));
    return {
      contained: run.containment.by !== null,
      warning: sandbox.warning,
      promises: probes.map((p) => ({ id: p.id, says: p.says, held: could.has(p.id) && could.get(p.id) === (p.expect === 'can') })),
    };
  } finally {
    server.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** The report as the person reads it: one line per promise, then what to do when one is not held. */
export function describeCheck(r: CheckReport): string {
  const lines = [r.contained ? 'Agents here run contained (bubblewrap). A fresh sandbox was started and probed:' : `Agents here are NOT contained. ${r.warning ?? ''}`.trim()];
  if (!r.contained) lines.push('Probed as an agent runs here (uncontained):');
  for (const p of r.promises) lines.push(`  ${p.held ? 'held    ' : 'NOT held'}  ${p.says}`);
  const broken = r.promises.filter((p) => !p.held).length;
  lines.push(broken === 0 ? 'Every promise held.' : `${broken} of ${r.promises.length} promises not held.`);
  return lines.join('\n');
}

/** The terminal the person runs the check from (another pane's, as the agent sees it), or null. */
function terminalOfStdin(): string | null {
  try {
    const link = fs.readlinkSync('/proc/self/fd/0');
    return link.startsWith('/dev/pts/') ? link : null;
  } catch {
    return null;
  }
}
