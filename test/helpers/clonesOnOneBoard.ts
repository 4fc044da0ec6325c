import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { GitRemote } from '../../src-shared/board/model.js';
import { ThreadHost } from '../../src-main/thread/threadHost.js';
import { agentEnv, cliAs, gitSync, makeRepo, remoteRefOf, sh } from './gitFixture.js';
import { waitFor } from './pty.js';
import { secretsFromTheTestProcess } from './peerJudges.js';
import { openTestHost } from './testHost.js';

/**
 * Machines on one shared board, as two people's: each a ThreadHost on its own clone of one bare remote, with
 * its own data and runtime folders, on a PostgreSQL board named after the remote. The caller owns `hosts` and
 * `dirs` and disposes them after each test.
 */
export class ClonesOnOneBoard {
  readonly hosts: ThreadHost[] = [];
  readonly dirs: string[] = [];

  constructor(private readonly url: () => string) {}

  /** A bare repository as the remote, with main at one commit; `remote` is how the board names it. */
  bareRemote(): { bare: string; remote: GitRemote; root: string } {
    const root = fs.mkdtempSync(join(tmpdir(), 'fb-clones-remote-'));
    this.dirs.push(root);
    const bare = join(root, 'remote.git');
    gitSync(root, ['init', '-q', '--bare', '-b', 'main', bare]);
    const seed = join(root, 'seed');
    makeRepo(seed, { 'notes.txt': 'line one\n', 'other.txt': 'other\n' });
    gitSync(seed, ['push', '-q', bare, 'main']);
    return { bare, remote: { name: 'origin', url: bare }, root };
  }

  /** A host on a clone of the remote, on the shared board. The clone goes over the file:// transport, so it
   *  holds only what the remote had then, as a clone on another machine does. Its users commit and claim
   *  with an agent's secret from the test process (agentEnv, cliAs), outside any pane (peerJudges.ts). */
  async machine(bare: string): Promise<Machine> {
    const root = fs.mkdtempSync(join(tmpdir(), 'fb-clones-host-'));
    this.dirs.push(root);
    const folder = join(root, 'clone');
    gitSync(root, ['clone', '-q', `file://${bare}`, folder]);
    // The board names the remote by the URL the clones have for it.
    gitSync(folder, ['remote', 'set-url', 'origin', bare]);
    const { host } = await openTestHost({ closedBy: 'caller', folder, dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, peerJudge: secretsFromTheTestProcess, sharedBoard: { url: this.url() } });
    this.hosts.push(host);
    return { host, folder };
  }

  /** Two machines on one board that names a new bare remote. */
  async two(): Promise<{ bare: string; remote: GitRemote; root: string; a: Machine; b: Machine }> {
    const r = this.bareRemote();
    const a = await this.machine(r.bare);
    const b = await this.machine(r.bare);
    expect(b.host.board.state.threadId).toBe(a.host.board.state.threadId);
    await waitFor(() => a.host.board.state.settings.remote?.url === r.bare && b.host.board.state.settings.remote?.url === r.bare, 10_000, 'both hosts to see the remote');
    return { ...r, a, b };
  }

  async dispose(): Promise<void> {
    for (const h of this.hosts.splice(0)) await h.dispose();
    for (const d of this.dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  }
}

export interface Machine {
  host: ThreadHost;
  /** The person's clone: the Thread's folder. */
  folder: string;
}

/**
 * A task worked on by a real agent (a process in a real pty) on machine `m`: claimed, `files` committed in its
 * worktree by git as the agent (recorded by the fence), and submitted. Returns the frozen sha and the agent.
 */
export async function workedOn(m: Machine, taskId: string, files: Record<string, string>, agent?: string): Promise<{ sha: string; agent: string }> {
  const who = agent ?? (await m.host.roster.launch('custom', { command: 'exec sleep 600' })).id;
  const c = await cliAs(m.host, who, ['claim', taskId]);
  expect(c.code, JSON.stringify(c.out)).toBe(0);
  const { token, worktree } = c.out.result as { token: number; worktree: { path: string } };
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(join(worktree.path, name), text);
  const commit = await sh(worktree.path, `git add -A && git commit -qm "work on ${taskId}"`, agentEnv(m.host, who));
  expect(commit.code, commit.stderr).toBe(0);
  const done = await cliAs(m.host, who, ['done', taskId, '--token', String(token)]);
  expect(done.code, JSON.stringify(done.out)).toBe(0);
  const sha = m.host.board.state.tasks.get(taskId)?.submitted?.sha;
  expect(sha).toBe(gitSync(worktree.path, ['rev-parse', 'HEAD']));
  return { sha: sha as string, agent: who };
}

/** The host that recorded `sha` pushed it to the remote's namespace, and the board says so. */
export async function hostPushed(m: Machine, bare: string, taskId: string, sha: string): Promise<void> {
  await waitFor(() => m.host.board.state.tasks.get(taskId)?.pushed?.sha === sha, 20_000, `${taskId}'s ${sha.slice(0, 7)} pushed`);
  expect(gitSync(bare, ['rev-parse', remoteRefOf(m.host, taskId)])).toBe(sha);
}

/** A pre-receive hook on the bare remote: the remote's own rules, or a push held in flight. */
export function preReceive(bare: string, script: string): void {
  fs.writeFileSync(join(bare, 'hooks', 'pre-receive'), `#!/bin/sh\n${script}\n`, { mode: 0o755 });
}

/** Whether the clone has the commit. */
export const hasCommit = async (folder: string, sha: string): Promise<boolean> => (await sh(folder, `git cat-file -e ${sha}^{commit}`)).code === 0;
