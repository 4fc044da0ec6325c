import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { ThreadHost, threadDirOf, threadKeyOf } from '../../../src-main/thread/threadHost.js';
import { PtyHostLink } from '../../../src-main/ptyhost/ptyHostLink.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { paneText } from '../../helpers/events.js';
import { agentEnv, cliAs, Fixture, GIT_IDENTITY, sh as run } from '../../helpers/gitFixture.js';
import { makeHome } from '../../helpers/homes.js';
import { hostFixture } from '../../helpers/hosts.js';
import { legacyTask, legacyThread, writeLegacyJournal } from '../../helpers/legacyJournal.js';
import { waitFor } from '../../helpers/pty.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';
import { openTestHost } from '../../helpers/testHost.js';

/**
 * A plain shell's pane (the shell profile, real bash in a real pty) is told things in its output, never
 * typed into: nothing runs, nothing lands in its history, board text in a notice is shown and not acted on,
 * and a shell standing in a task's folder is told where to go before approval removes it. Each shell is
 * hermetic: a home of the test's own whose `.profile` is all its start-up reads besides /etc/profile.
 */
// Its tests run git and the CLI as an agent from the test process, outside any pane (peerJudges.ts).
const hosts = hostFixture('shell-notices', { peerJudge: secretsFromTheTestProcess });
// Its tests run git and the CLI as an agent from the test process, outside any pane (peerJudges.ts).
const git = new Fixture({ peerJudge: secretsFromTheTestProcess });
const cleanups: Array<() => Promise<void> | void> = [];
beforeAll(() => ensureBuilt());
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await hosts.cleanup();
  await git.cleanup();
});

/**
 * The agents' environment for a bash whose history goes to a file of the test's, appended at each prompt,
 * with `.profile` lines of the test's after that.
 */
function shellEnv(profile = ''): { env: Record<string, string | undefined>; home: string; history: string } {
  const home = fs.mkdtempSync(join(tmpdir(), 'forkbench-shell-home-'));
  cleanups.push(() => fs.rmSync(home, { recursive: true, force: true }));
  const history = join(home, 'history');
  const vars = makeHome(home, { '.profile': `PS1='$ '\nHISTFILE=${history}\nPROMPT_COMMAND='history -a'\n${profile}` });
  // HISTFILE in the environment too: a contained shell may write only the history its environment names.
  return { env: { PATH: process.env.PATH, SHELL: '/bin/bash', LANG: 'C.UTF-8', ...GIT_IDENTITY, ...vars, HISTFILE: history }, home, history };
}

/** What a pane printed from now on. */
function recorder(host: ThreadHost, agentId: string): () => string {
  let seen = '';
  const d = host.roster.relay.onData.event(({ agentId: id, data }) => id === agentId && (seen += data));
  cleanups.push(() => d.dispose());
  return () => seen;
}

/** A person types a command into the pane and waits for what it prints. */
async function person(host: ThreadHost, agentId: string, command: string, prints: RegExp): Promise<void> {
  const out = paneText(host, agentId, prints);
  host.roster.relay.input(agentId, `${command}\r`);
  await out;
}

describe('a plain shell is shown notices, never typed them', () => {
  it('a task taken from a shell, its title a command: shown in the pane, nothing runs (even where `#` starts no comment, as in zsh) and the history holds only the person’s commands', async () => {
    // As zsh's default: a typed `# ...` line would be a command, and `$(...)` in it would run.
    const { env, home, history } = shellEnv('shopt -u interactive_comments\n');
    const ran = join(home, 'ran');
    const host = await hosts.open({ env, typingQuietMs: 300 });
    await host.board.run((e) => e.addTask({ title: `tidy $(touch ${ran}); touch ${ran}` }));
    const sh = await host.roster.launch('shell');
    const other = await host.roster.launch('custom', { command: 'exec sleep 600' });
    expect((await host.board.run((e) => e.claim(sh.id, 'T-1'))).ok).toBe(true);
    await person(host, sh.id, 'echo ready-$((1+1))', /ready-2/);
    const shown = paneText(host, sh.id, /Forkbench: T-1 "tidy \$\(touch [^)]+\); touch [^"]+" was taken from you by a person in the Forkbench window/);
    expect((await host.board.run((e) => e.assign('T-1', other.id))).ok).toBe(true);
    await shown;
    await person(host, sh.id, 'echo after-$((1+1))', /after-2/);
    await waitFor(() => fs.existsSync(history) && fs.readFileSync(history, 'utf8').includes('after'), 5_000, 'the history to be written');
    expect(fs.readFileSync(history, 'utf8')).toBe('echo ready-$((1+1))\necho after-$((1+1))\n');
    expect(fs.existsSync(ran)).toBe(false);
    // And the screen reads: the notice, then the person's next command at a prompt of its own.
    const lines = (await host.roster.get(sh.id)!.session.screenLines()).filter((l) => l.length > 0);
    const at = lines.findIndex((l) => l.startsWith('Forkbench: T-1 "tidy'));
    expect(lines.slice(at).find((l) => l.startsWith('$ '))).toBe('$ echo after-$((1+1))');
  });

  it('a title with escape sequences (an old journal’s) never reaches a shell’s terminal raw, through the pty host too', async () => {
    const title = 'evil \x1b]0;pwned\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07\x9b6n title';
    const root = fs.mkdtempSync(join(tmpdir(), 'forkbench-shell-ptyhost-'));
    cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
    const folder = join(root, 'project');
    fs.mkdirSync(folder);
    const dataRoot = join(root, 'data');
    const key = threadKeyOf(folder);
    writeLegacyJournal(threadDirOf(dataRoot, key), [legacyThread(key), legacyTask('T-1', title)]);
    const link = await PtyHostLink.open(dataRoot, { idleMs: 60_000 });
    const { env } = shellEnv();
    const { host } = await openTestHost({ closedBy: 'caller', folder, dataRoot, runtimeRoot: join(root, 'run'), liveness: false, ptyHost: link, env, });
    cleanups.push(async () => {
      await host.dispose();
      await link.shutdown();
    });
    const sh = await host.roster.launch('shell');
    const signals: string[] = [];
    host.roster.get(sh.id)!.session.onSignal((s) => void signals.push(s.kind));
    await person(host, sh.id, 'echo ready-$((1+1))', /ready-2/);
    const out = recorder(host, sh.id);
    const shown = paneText(host, sh.id, /Forkbench: You have been assigned T-1/);
    expect((await host.board.run((e) => e.assign('T-1', sh.id))).ok).toBe(true);
    await shown;
    expect(out()).toContain('"evil \\x1b]0;pwned\\x07\\x1b[2J\\x1b]52;c;cHduZWQ=\\x07\\x9b6n title"');
    // The only sequences are the notice's own: a cursor move, a clear below it, italics and back, the notification.
    expect(out().match(/[\x1b\x9b]\]?[^a-zA-Z\x07]*[a-zA-Z\x07]/g)?.every((seq) => /^\x1b\[(?:\d+;1H|J|0m|3m|\d+A|\d+G)$|^\x1b\]9;/.test(seq))).toBe(true);
    expect(out()).not.toMatch(/[\x80-\x9f]/);
    // The pty host's mirror, what a window that opens now is given, says the same.
    const screen = await host.roster.relay.screen(sh.id);
    expect(screen).toContain('evil \\x1b]0;pwned');
    expect(screen).not.toContain('\x1b]0;pwned');
    expect(signals).not.toContain('title');
  });

  it('approval of a task whose folder a shell stands in: the shell is told where to go before the folder is removed, and no getcwd error follows', async () => {
    // A prompt hook that asks for the real current folder, as pyenv's and many prompts' do: run in a folder
    // that is gone, it says getcwd failed.
    const { env } = shellEnv("PROMPT_COMMAND='history -a; pwd -P >/dev/null'\n");
    const { host, folder } = await git.host({ env });
    await host.board.run((e) => e.addTask({ title: 'change notes' }));
    const sh = await host.roster.launch('shell');
    // The shell claims, works in the worktree and says done, as an agent or a person in it does.
    await person(
      host,
      sh.id,
      `cd "$(forkbench claim T-1 --json | sed -n 's/.*"path":"\\([^"]*\\)".*/\\1/p')" && echo two >> notes.txt && git commit -qam two && forkbench done T-1 --token 1 >/dev/null && echo "SUBMITTED $((1+1))"`,
      /SUBMITTED 2/,
    );
    const wt = host.board.state.tasks.get('T-1')!.worktree!.path;
    expect(host.board.state.tasks.get('T-1')?.state).toBe('review');
    // In order: what the pane printed and the board's events, and whether the folder was there at each print.
    const order: string[] = [];
    let printed = '';
    let approving = 0;
    const d1 = host.roster.relay.onData.event(({ agentId, data }) => {
      if (agentId !== sh.id) return;
      printed += data;
      if (/Forkbench: The folder you are in/.test(data)) {
        order.push(`told (folder there: ${fs.existsSync(wt)})`);
        console.log(`told ${(performance.now() - approving).toFixed(0)} ms after approve() began (merge included)`);
      }
      if (/Forkbench: T-1 "change notes" landed: it was approved and merged; its worktree folder/.test(data)) order.push('merged notice');
    });
    const d2 = host.board.onEvent((e: BoardEvent) => e.kind === 'worktree-removed' && order.push('worktree-removed'));
    cleanups.push(() => (d1.dispose(), d2.dispose()));
    const merged = paneText(host, sh.id, /approved and merged; its worktree folder/);
    approving = performance.now();
    await host.worktrees.approve('T-1');
    console.log(`approve() took ${(performance.now() - approving).toFixed(0)} ms`);
    await merged;
    expect(order).toEqual(['told (folder there: true)', 'worktree-removed', 'merged notice']);
    expect(printed).toContain(`Forkbench: The folder you are in, ${wt}, is about to be removed: T-1 "change notes" was approved and merged. Leave it: cd '${folder}'.`);
    // Told once where to go: the merge's notice does not say it again.
    expect(printed).not.toContain('If your shell was in it');
    expect(fs.existsSync(wt)).toBe(false);
    // The person does as told; nothing ran in between, so nothing asked for the gone folder.
    await person(host, sh.id, `cd '${folder}' && echo "BACK $((1+1))" && cat notes.txt`, /BACK 2[\s\S]*two/);
    expect(printed).not.toMatch(/getcwd|error retrieving current directory/);
  });

  it('an agent CLI standing in the folder, never quiet: approval does not wait for it past the bound, and it is typed where to go once quiet', async () => {
    // A stand-in `aider` (its notices are typed): it goes where $HOME/go says, prints without a pause until
    // $HOME/quiet exists, then reads like a terminal program (what is typed is echoed).
    const { env, home } = shellEnv();
    const bin = join(home, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(
      join(bin, 'aider'),
      '#!/bin/sh\nwhile [ ! -f "$HOME/go" ]; do sleep 0.02; done\ncd "$(cat "$HOME/go")" && echo "IN FOLDER"\nwhile [ ! -f "$HOME/quiet" ]; do echo tick; sleep 0.05; done\nexec cat\n',
      { mode: 0o755 },
    );
    const { host, folder } = await git.host({ env: { ...env, PATH: `${bin}:${env.PATH}` } });
    await host.board.run((e) => e.addTask({ title: 'change notes' }));
    // The folder is the CLI's own claim's: a contained agent reaches no other agent's claims' folders.
    const cli = await host.roster.launch('aider');
    const c = (await cliAs(host, cli.id, ['claim', 'T-1'])).out.result as { token: number; worktree: { path: string } };
    const wt = c.worktree.path;
    fs.writeFileSync(join(wt, 'notes.txt'), 'two\n');
    expect((await run(wt, 'git commit -qam two', agentEnv(host, cli.id))).code).toBe(0);
    expect((await cliAs(host, cli.id, ['done', 'T-1', '--token', String(c.token)])).code).toBe(0);
    const inFolder = paneText(host, cli.id, /IN FOLDER/);
    fs.writeFileSync(join(home, 'go'), wt);
    await inFolder;
    const typed = paneText(host, cli.id, new RegExp(`The folder you are in, ${wt.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, is about to be removed[\\s\\S]*Leave it: cd '([^']+)'\\.`), 30_000);
    await host.worktrees.approve('T-1');
    expect(fs.existsSync(wt)).toBe(false);
    expect(host.board.state.tasks.get('T-1')?.state).toBe('done');
    // Still printing, so not yet typed to; once it is quiet, it is.
    fs.writeFileSync(join(home, 'quiet'), '');
    expect(/Leave it: cd '([^']+)'\./.exec(await typed)?.[1]).toBe(folder);
  });
});
