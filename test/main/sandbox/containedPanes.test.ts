/**
 * Issue 43: each agent runs in a bubblewrap sandbox of its own. Real Thread host, real panes, real git: from
 * a contained pane, each line of what an agent can and cannot reach, including the third probe's attacks.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import * as net from 'node:net';
import { afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ensureBuilt } from '../../helpers/cli.js';
import { agentEnv, CLAIM_T1_AND_CD, cliAs, Fixture, GIT_IDENTITY, gitSync, idleAgent, nextEvent, paneAgent, sh } from '../../helpers/gitFixture.js';
import { probeBwrap } from '../../../src-main/sandbox/bwrapProbe.js';
import { listProcesses } from '../../../src-main/pty/procReader.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';

// Its tests run git and the CLI as an agent from the test process, outside any pane (peerJudges.ts).
const fx = new Fixture({ peerJudge: secretsFromTheTestProcess });
beforeAll(() => ensureBuilt());
afterEach(() => fx.cleanup());

/** A line per check, `CHECK name yes|no`: whether the pane could do it. */
const check = (name: string, cmd: string) => `if ( ${cmd} ) >/dev/null 2>&1; then echo "CHECK ${name} yes"; else echo "CHECK ${name} no"; fi`;
const results = (out: string) => new Map([...out.matchAll(/CHECK (\S+) (yes|no)/g)].map((m) => [m[1] as string, m[2] === 'yes']));

describe('a contained agent (bwrap)', async () => {
  const support = await probeBwrap();
  it.skipIf(!support.ok)('reaches its own worktree, the board and its commits; not the other panes, the host, the data folder, git hooks or another agent’s worktree', async () => {
    const { host, folder, root } = await fx.host({ env: { ...process.env, ...GIT_IDENTITY } });
    await host.board.run((e) => e.addTask({ title: 'B works here' }));
    await host.board.run((e) => e.addTask({ title: 'A works here' }));
    // B: claims T-1, commits through the fence, then waits (its terminal is what A attacks).
    const b = await paneAgent(host, root, `${CLAIM_T1_AND_CD}
echo mine > mine.txt && git add mine.txt && git commit -qm "B's work" && echo COMMITTED
pwd; echo TTY $(tty); sleep 600`);
    await b.until(/COMMITTED/);
    const wtB = host.board.state.tasks.get('T-1')?.worktree?.path as string;
    expect(host.board.state.tasks.get('T-1')?.record?.sha).toBe(gitSync(wtB, ['rev-parse', 'HEAD']));
    const bPts = (await listProcesses()).filter((p) => p.session === b.pid).map((p) => fs.readlinkSync(`/proc/${p.pid}/fd/0`)).find((l) => l.startsWith('/dev/pts/')) as string;
    expect(bPts).toMatch(/^\/dev\/pts\/\d+$/);
    // The board's own files (journal, snapshots, agents' records), as the host wrote them.
    const boardDir = join(root, 'data', 'threads', host.key);
    const boardFiles = fs.readdirSync(boardDir, { recursive: true, withFileTypes: true }).filter((f) => f.isFile() && !join(f.parentPath, f.name).includes('/hooks/')).map((f) => join(f.parentPath, f.name));
    expect(boardFiles.some((f) => /journal/.test(f))).toBe(true);
    const secretFile = join(root, 'outside-secret.txt');
    fs.writeFileSync(secretFile, 'x');
    // B's worktree's admin folder in the common .git (what git writes for B's commits).
    const adminB = /^gitdir: (.*)$/m.exec(fs.readFileSync(join(wtB, '.git'), 'utf8'))?.[1] as string;
    expect(adminB).toMatch(/\.git\/worktrees\//);
    // The network stays open (the CLIs need their APIs): a listener of the test's on loopback.
    const listener = net.createServer((c) => c.end());
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    onTestFinished(() => void listener.close());
    const port = (listener.address() as net.AddressInfo).port;
    // A's script in a folder of its own: the folder of the program a pane runs is readable from it.
    const a = await paneAgent(host, fx.tmp(), `wt=$(forkbench claim T-2 --json | sed -n 's/.*"path":"\\([^"]*\\)".*/\\1/p')
${check('own-worktree-write', 'cd "$wt" && echo a > a.txt')}
${check('own-commit', 'cd "$wt" && git add a.txt && git commit -qm "A\'s work"')}
${check('pts-listed', `ls /dev/pts | grep -q '^[0-9]'`)}
${check('other-pts-write', `echo FAKE > ${bPts}`)}
${check('other-pts-read', `head -c1 ${bPts}`)}
${check('other-pts-resize', `stty -F ${bPts} rows 5`)}
${check('git-info-write', `echo x >> ${join(folder, '.git', 'info', 'exclude')}`)}
${check('other-admin-write', `echo x >> ${join(adminB, 'gitdir')}`)}
${check('gitconfig-write', 'echo x >> "$HOME/.gitconfig"')}
${check('ssh-write', 'mkdir -p "$HOME/.ssh" && echo x >> "$HOME/.ssh/authorized_keys"')}
${check('home-read', 'ls -a "$HOME" | grep -q .')}
${check('network', `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}'`)}
${check('host-proc', `test -e /proc/${process.pid}/cmdline`)}
${check('host-environ', `cat /proc/${process.pid}/environ`)}
${check('kill-host', `kill -0 ${process.pid} && [ "$(cat /proc/${process.pid}/comm)" != sleep ]`)}
${check('other-pane-proc', `test -e /proc/${b.pid}/cmdline && grep -q 600 /proc/${b.pid}/cmdline`)}
${check('git-hooks-write', `echo '#!/bin/sh' > ${join(folder, '.git', 'hooks', 'post-commit')}`)}
${check('git-config-write', `echo '[core]' >> ${join(folder, '.git', 'config')}`)}
${check('thread-folder-write', `echo x > ${join(folder, 'planted.txt')}`)}
${check('thread-folder-read', `cat ${join(folder, 'notes.txt')}`)}
${boardFiles.map((f, i) => check(`data-file-${i}`, `cat '${f}'`)).join('\n')}
${check('other-worktree-read', `ls ${wtB} | grep -q mine`)}
${check('bashrc-write', 'echo x >> "$HOME/.bashrc"')}
${check('tmp-write', 'echo x > /tmp/a-private-file')}
${check('outside-read', `cat ${secretFile}`)}
echo DONE; sleep 600`);
    await a.until(/DONE/);
    const r = results(a.output());
    // What it can do: its own claim's folder, a commit the board records, the Thread folder read, its /tmp.
    const dataFilesRead = boardFiles.filter((_f, i) => r.get(`data-file-${i}`) !== false);
    expect(dataFilesRead).toEqual([]);
    for (let i = 0; i < boardFiles.length; i++) r.delete(`data-file-${i}`);
    expect(Object.fromEntries(r)).toEqual({
      'own-worktree-write': true,
      'own-commit': true,
      'pts-listed': false,
      'other-pts-write': false,
      'other-pts-read': false,
      'other-pts-resize': false,
      'git-info-write': false,
      'other-admin-write': false,
      'gitconfig-write': false,
      'ssh-write': false,
      'home-read': true,
      network: true,
      'host-proc': false,
      'host-environ': false,
      'kill-host': false,
      'other-pane-proc': false,
      'git-hooks-write': false,
      'git-config-write': false,
      'thread-folder-write': false,
      'thread-folder-read': true,
      'other-worktree-read': false,
      'bashrc-write': false,
      'tmp-write': true,
      'outside-read': false,
    });
    const wtA = host.board.state.tasks.get('T-2')?.worktree?.path as string;
    expect(host.board.state.tasks.get('T-2')?.record?.sha).toBe(gitSync(wtA, ['rev-parse', 'HEAD']));
    expect(fs.existsSync('/tmp/a-private-file')).toBe(false);
    expect(b.output()).not.toMatch(/FAKE/);
    // Both agents' worktrees lie in folders of their own.
    expect(wtA.includes(a.id)).toBe(true);
    expect(wtB.includes(b.id)).toBe(true);
  });

  it.skipIf(!support.ok)('a verify command runs in its agent’s sandbox: it writes the folder it checks, not the host’s git, data or Thread folder, and cannot see the host', async () => {
    const { host, folder, root } = await fx.host();
    const boardDir = join(root, 'data', 'threads', host.key);
    const journal = fs.readdirSync(boardDir, { recursive: true, withFileTypes: true }).find((f) => f.isFile() && /journal/.test(f.name));
    expect(journal).toBeTruthy();
    const journalPath = join(journal!.parentPath, journal!.name);
    const secretFile = join(root, 'outside-secret.txt');
    fs.writeFileSync(secretFile, 'x');
    // The verify reports each check in its output, which a failed verify returns to the agent as a note.
    const probes = [
      check('own-folder-write', 'echo v > verified.txt'),
      check('git-hooks-write', `echo '#!/bin/sh' > ${join(folder, '.git', 'hooks', 'post-merge')}`),
      check('git-config-write', `echo '[core]' >> ${join(folder, '.git', 'config')}`),
      check('thread-folder-write', `echo x > ${join(folder, 'planted.txt')}`),
      check('journal-read', `cat '${journalPath}'`),
      check('host-proc', `test -e /proc/${process.pid}/cmdline`),
      check('outside-read', `cat ${secretFile}`),
    ].join('\n');
    await host.board.run((e) => e.setSettings({ verify: `${probes}\nexit 1` }));
    await host.board.run((e) => e.addTask({ title: 'checked' }));
    const a = await idleAgent(host);
    const c = (await cliAs(host, a, ['claim', 'T-1'])).out.result as { token: number; worktree: { path: string } };
    fs.writeFileSync(join(c.worktree.path, 'w.txt'), 'w\n');
    expect((await sh(c.worktree.path, 'git add -A && git commit -qm work', agentEnv(host, a))).code).toBe(0);
    const returned = nextEvent(host, (e) => e.kind === 'returned');
    expect((await cliAs(host, a, ['done', 'T-1', '--token', String(c.token)])).code).toBe(0);
    expect(await returned).toMatchObject({ by: 'verify' });
    const note = host.board.state.tasks.get('T-1')?.notes.at(-1)?.text ?? '';
    expect(Object.fromEntries(results(note))).toEqual({
      'own-folder-write': true,
      'git-hooks-write': false,
      'git-config-write': false,
      'thread-folder-write': false,
      'journal-read': false,
      'host-proc': false,
      'outside-read': false,
    });
    expect(fs.readFileSync(join(c.worktree.path, 'verified.txt'), 'utf8')).toBe('v\n');
    expect(fs.existsSync(join(folder, '.git', 'hooks', 'post-merge'))).toBe(false);
  });

  it.skipIf(!support.ok)('escapes (setsid, a double fork, unshare) stay in the sandbox and die with the pane; the host still knows them as the agent’s', async () => {
    const { host, root } = await fx.host({ repo: false });
    // Durations no other process of the machine sleeps for: how the host finds them afterwards.
    const n = 600_000 + (process.pid % 10_000) * 3;
    const a = await paneAgent(host, root, `setsid sleep ${n} &
( sleep ${n + 1} & ) &
unshare -p -f sleep ${n + 2} 2>/dev/null &
sleep 0.3; echo STARTED; sleep 600`);
    await a.until(/STARTED/);
    const escaped = async () => (await listProcesses()).filter((p) => {
      try {
        const slept = Number(/^sleep\0(\d+)\0$/.exec(fs.readFileSync(`/proc/${p.pid}/cmdline`, 'utf8'))?.[1]);
        return slept >= n && slept <= n + 2;
      } catch {
        return false;
      }
    });
    const found = await escaped();
    expect(found.length).toBeGreaterThanOrEqual(2);
    // The person check: each is in the agent's pane, not a person outside every pane.
    for (const p of found) expect(host.roster.whereabouts.callerOf(p.pid)).toMatchObject({ person: false });
    await host.roster.close(a.id);
    await expect.poll(async () => (await escaped()).length, { timeout: 5000 }).toBe(0);
  });
});

describe('the probe', () => {
  it('a machine without bwrap is told the fix; a bwrap that cannot start a sandbox is told why', async () => {
    expect(await probeBwrap(null)).toMatchObject({ ok: false, fix: expect.stringMatching(/apt install bubblewrap/) });
    const refusing = join(fx.tmp(), 'bwrap');
    fs.writeFileSync(refusing, '#!/bin/sh\necho "bwrap: No permissions to creating new namespace" >&2\nexit 1\n', { mode: 0o755 });
    expect(await probeBwrap(refusing)).toMatchObject({ ok: false, reason: expect.stringMatching(/refused.*No permissions/) });
  });
});
