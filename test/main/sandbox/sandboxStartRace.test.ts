/**
 * Issue 43: an agent's sandbox lists other agents' worktree admin folders to protect when it is built, and
 * one of them can go before bwrap binds it (an approval removes its worktree while another agent launches).
 * Under load the e2e accessibility run lost an agent that way: bwrap refused to start ("Can't find source
 * path .git/worktrees/T-4-2"). Real git, real bwrap, the race made deterministic by removing the folder
 * between the two steps.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentReach, agentWorktreesOf } from '../../../src-main/sandbox/agentReach.js';
import { probeBwrap } from '../../../src-main/sandbox/bwrapProbe.js';
import { sandboxArgs } from '../../../src-main/sandbox/sandboxArgs.js';
import { gitSync } from '../../helpers/gitFixture.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('a sandbox whose protected folder goes while it starts', async () => {
  const support = await probeBwrap();
  it.skipIf(!support.ok)("starts all the same when another agent's worktree is removed between its reach and bwrap's binds", () => {
    const root = fs.realpathSync(fs.mkdtempSync(join(tmpdir(), 'forkbench-start-race-')));
    dirs.push(root);
    const repo = join(root, 'project');
    fs.mkdirSync(repo);
    gitSync(repo, ['init', '-q', '-b', 'main']);
    fs.writeFileSync(join(repo, 'a.txt'), 'a\n');
    gitSync(repo, ['add', 'a.txt']);
    gitSync(repo, ['commit', '-qm', 'a']);
    const worktrees = join(root, 'data', 'worktrees');
    const theirs = join(agentWorktreesOf(worktrees, 'other'), 'T-4-2');
    gitSync(repo, ['worktree', 'add', '-q', '-b', 'forkbench/T-4', theirs]);
    const host = {
      threadFolder: repo,
      threadFolderWritable: false,
      dataRoot: join(root, 'data'),
      runtimeRoot: join(root, 'run'),
      socketPath: join(root, 'run', 'fb-x', 'agents.sock'),
      binDir: join(root, 'run', 'bin'),
      hooksDir: null,
      gitCommonDir: join(repo, '.git'),
      worktreesRoot: worktrees,
      home: undefined,
    };
    for (const d of [join(root, 'run', 'fb-x'), host.binDir]) fs.mkdirSync(d, { recursive: true });
    const stateDir = join(root, 'data', 'state');
    fs.mkdirSync(stateDir, { recursive: true });
    const reach = agentReach(host, { agentId: 'me', profile: 'custom', filesDir: join(root, 'run'), stateDir, env: { PATH: process.env.PATH } });
    expect(reach.protect).toEqual([join(repo, '.git', 'worktrees', 'T-4-2')]);
    // The other agent's task is approved now: its worktree and admin folder go.
    gitSync(repo, ['worktree', 'remove', '--force', theirs]);
    expect(fs.existsSync(join(repo, '.git', 'worktrees', 'T-4-2'))).toBe(false);
    // Built as the roster builds it, the folder's existence asked anew (as a launch a moment later would).
    const started = spawnSync(support.ok ? support.bwrap : 'bwrap', sandboxArgs(reach, '/bin/sh', ['-c', 'echo STARTED'], () => true), { encoding: 'utf8' });
    expect(started.stderr).toBe('');
    expect(started.stdout).toBe('STARTED\n');
  });
});
