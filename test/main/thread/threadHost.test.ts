import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { CLI, ensureBuilt } from '../../helpers/cli.js';
import { nextEvent, paneText } from '../../helpers/events.js';
import { makeHome } from '../../helpers/homes.js';
import { hostFixture } from '../../helpers/hosts.js';
import { waitFor } from '../../helpers/pty.js';
import { legacyTask, legacyThread, writeLegacyJournal } from '../../helpers/legacyJournal.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';

const FAKE_AGENT = join(import.meta.dirname, '..', '..', 'fixtures', 'fakeAgent.sh');
// Its tests claim and report with an agent's secret from the test process (the CLI), outside any pane.
const fixture = hostFixture('host', { peerJudge: secretsFromTheTestProcess });
const openHost = fixture.open;

/** A folder with a stand-in `aider` (an agent CLI profile, typed its notices): the raw-mode reader below. */
let agentCliBin = '';
beforeAll(() => {
  ensureBuilt();
  agentCliBin = fs.mkdtempSync(join(tmpdir(), 'forkbench-agent-cli-'));
  const reader =
    "if (process.env.READER_BRACKETED_PASTE) process.stdout.write('\\x1b[?2004h'); process.stdin.setRawMode(true); process.stdin.on('data', (d) => console.log('read ' + JSON.stringify(d.toString()))); console.log('ready');";
  fs.writeFileSync(join(agentCliBin, 'aider'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} -e ${JSON.stringify(reader)}\n`, { mode: 0o755 });
});
afterAll(() => fs.rmSync(agentCliBin, { recursive: true, force: true }));
const homes: string[] = [];
afterEach(async () => {
  await fixture.cleanup();
  for (const h of homes.splice(0)) fs.rmSync(h, { recursive: true, force: true });
});



/** A host whose agents' PATH finds the stand-in `aider`; with `bracketedPaste` it first asks for pastes to be
 *  bracketed (DECSET 2004), as TUIs and readline do. */
const openTyped = (o: Parameters<typeof openHost>[0] & { bracketedPaste?: boolean } = {}) =>
  openHost({ ...o, env: { ...process.env, PATH: `${agentCliBin}:${process.env.PATH}`, READER_BRACKETED_PASTE: o.bracketedPaste ? '1' : '' } });

/**
 * An agent CLI's pane (the aider profile, whose notices are typed) running a raw-mode reader, as a TUI is: it
 * prints each read it gets from the pty, escaped. Resolves once it is reading (node takes tens of ms to
 * start: the pane is watched well before it prints).
 */
async function launchReader(host: ThreadHost): Promise<AgentInfo> {
  const agent = await host.roster.launch('aider');
  await waitFor(async () => (await host.roster.relay.screen(agent.id)).includes('ready'), 20_000, 'the reader to start');
  return agent;
}

/** T-1 assigned to a launchReader pane's agent, as a person assigns it: the reads the pane got, up to the
 *  Enter that sends the message. */
async function assignAndRead(host: ThreadHost, agentId: string): Promise<string[]> {
  const enter = paneText(host, agentId, /read "\\r"/);
  expect((await host.board.run((e) => e.assign('T-1', agentId))).ok).toBe(true);
  return readsIn(await enter);
}

/** The reads a launchReader pane printed, in order. */
const readsIn = (text: string): string[] => [...text.matchAll(/read (".*")/g)].map((m) => JSON.parse(m[1]!) as string);

function cliAs(host: ThreadHost, agentId: string, args: string[]): Promise<{ code: number; out: unknown }> {
  const rec = host.roster.agent(agentId);
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args, '--json'], { env: { PATH: process.env.PATH, FORKBENCH_SOCKET: host.socket.path, FORKBENCH_SECRET: rec?.secret } }, (err, stdout) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: JSON.parse(stdout) });
    });
  });
}

describe('agents in real ptys', () => {
  it('a scripted agent claims, notes and finishes through the CLI on its PATH', async () => {
    const host = await openHost();
    await host.board.run((e) => e.addTask({ title: 'write the parser' }));
    const submitted = nextEvent(host, (e) => e.kind === 'submitted');
    const agent = await host.roster.launch('custom', { command: FAKE_AGENT });
    await submitted;
    const t = host.board.state.tasks.get('T-1');
    expect(t).toMatchObject({ state: 'review', claim: { agentId: agent.id } });
    expect(t?.notes.map((n) => n.text)).toEqual(['working on it', 'finished by the fake agent']);
    await paneText(host, agent.id, /FAKE-AGENT-DONE/);
  });

  it('kill -9 of an agent frees its claim at once, with the reason', async () => {
    const host = await openHost();
    await host.board.run((e) => e.addTask({ title: 'task' }));
    const granted = nextEvent(host, (e) => e.kind === 'grant');
    const agent = await host.roster.launch('custom', { command: 'forkbench claim T-1 && exec sleep 600' });
    await granted;
    await paneText(host, agent.id, /Claimed T-1/);
    const released = nextEvent(host, (e) => e.kind === 'claim-ended');
    const t0 = performance.now();
    process.kill(agent.pid as number, 'SIGKILL');
    const e = await released;
    const ms = performance.now() - t0;
    console.log(`hard release after kill -9: ${ms.toFixed(1)} ms`);
    expect(e).toMatchObject({ kind: 'claim-ended', reason: 'process-exited', agentId: agent.id });
    expect(host.board.state.tasks.get('T-1')?.state).toBe('open');
    // The claim goes on the pane's death signal; the exit status follows once the output tail has drained.
    await host.roster.get(agent.id)?.session?.exited;
    expect(host.roster.agents().find((a) => a.id === agent.id)).toMatchObject({ status: 'exited', exit: { signal: 9 } });
    // the dead agent's secret died with it
    expect((await cliAs(host, agent.id, ['board'])).code).toBe(3);
  });

  it('closing a pane releases its claims as pane-closed and kills the process group', async () => {
    const host = await openHost();
    await host.board.run((e) => e.addTask({ title: 'task' }));
    const granted = nextEvent(host, (e) => e.kind === 'grant');
    const agent = await host.roster.launch('custom', { command: 'forkbench claim T-1; sleep 600 & wait' });
    await granted;
    const released = nextEvent(host, (e) => e.kind === 'claim-ended');
    await host.roster.close(agent.id);
    expect(await released).toMatchObject({ reason: 'pane-closed' });
    expect(() => process.kill(agent.pid as number, 0)).toThrow();
    expect(host.roster.agents().map((a) => a.id)).not.toContain(agent.id);
  });

  it('SIGSTOP past a short lease: shown stalled, the task lapses and goes to another agent, and on SIGCONT the old write is refused', async () => {
    const host = await openHost({ liveness: true });
    await host.board.run((e) => e.setSettings({ leaseMs: 2000, renewIntervalMs: 250 }));
    await host.board.run((e) => e.addTask({ title: 'contended' }));
    const granted = nextEvent(host, (e) => e.kind === 'grant');
    const a = await host.roster.launch('custom', { command: 'forkbench claim T-1; while :; do echo tick; sleep 0.2; done' });
    const grant = await granted;
    const token = grant.kind === 'grant' ? grant.token : 0;
    // alive and printing: the liveness check renews it past its first deadline
    await nextEvent(host, (e) => e.kind === 'renew' && e.via === 'liveness');
    const lapsed = nextEvent(host, (e) => e.kind === 'claim-ended' && e.reason === 'lapsed', 10_000);
    process.kill(-(a.pid as number), 'SIGSTOP');
    try {
      await lapsed;
      expect(host.roster.agents().find((x) => x.id === a.id)?.status).toBe('stalled');
      const b = await host.roster.launch('custom', { command: 'exec sleep 600' });
      const claimB = await cliAs(host, b.id, ['claim', 'T-1']);
      expect(claimB).toMatchObject({ code: 0, out: { ok: true, result: { taskId: 'T-1', agentId: b.id } } });
    } finally {
      process.kill(-(a.pid as number), 'SIGCONT');
    }
    const late = await cliAs(host, a.id, ['note', 'T-1', 'I am back', '--token', String(token)]);
    expect(late.code).toBe(3);
    expect(['lapsed', 'stale-token']).toContain((late.out as { error: { reason: string } }).error.reason);
    expect(host.board.state.tasks.get('T-1')?.notes).toEqual([]);
  });

  it('a verify command decides done: a failure goes back to the holder with the output, a pass approves', async () => {
    const host = await openHost();
    await host.board.run((e) => e.setSettings({ verify: 'test -f ok.txt || { echo "ok.txt is missing"; exit 1; }' }));
    await host.board.run((e) => e.addTask({ title: 'make ok.txt' }));
    const agent = await host.roster.launch('custom', { command: 'exec sleep 600' });
    const claim = await cliAs(host, agent.id, ['claim', 'T-1']);
    const token = String((claim.out as { result: { token: number } }).result.token);
    const returned = nextEvent(host, (e) => e.kind === 'returned');
    expect((await cliAs(host, agent.id, ['done', 'T-1', '--token', token])).code).toBe(0);
    expect(await returned).toMatchObject({ to: 'claimed', by: 'verify' });
    expect(host.board.state.tasks.get('T-1')?.notes.at(-1)?.text).toMatch(/ok.txt is missing/);
    fs.writeFileSync(join(host.folder, 'ok.txt'), 'yes');
    const approved = nextEvent(host, (e) => e.kind === 'approved');
    expect((await cliAs(host, agent.id, ['done', 'T-1', '--token', token])).code).toBe(0);
    expect(await approved).toMatchObject({ by: 'verify' });
    expect(host.board.state.tasks.get('T-1')?.state).toBe('done');
  });

  it('a login shell pane still finds `forkbench` after its start-up files reset PATH', async () => {
    // The user's start-up file, as many are: PATH set from scratch.
    const home = fs.mkdtempSync(join(tmpdir(), 'forkbench-path-home-'));
    homes.push(home);
    const vars = makeHome(home, { '.profile': 'PATH=/usr/bin:/bin\nexport PATH\n' });
    const host = await openHost({ env: { PATH: process.env.PATH, SHELL: '/bin/bash', LANG: 'C.UTF-8', ...vars } });
    const agent = await host.roster.launch('shell');
    host.roster.relay.input(agent.id, 'forkbench board; echo "exit=$?"\r');
    await paneText(host, agent.id, /Goal:[\s\S]*exit=0/);
  });

  it('a person’s assignment is typed into an agent CLI’s pane once the pane is quiet, then entered', async () => {
    const host = await openTyped({ typingQuietMs: 300 });
    await host.board.run((e) => e.addTask({ title: 'review the docs' }));
    const agent = await launchReader(host);
    const reads = await assignAndRead(host, agent.id);
    expect(reads.join('')).toMatch(/^You have been assigned T-1 "review the docs" on the Forkbench board \(fencing token 1\)\. Run `forkbench show T-1`.*\r$/s);
    expect(await host.roster.relay.screen(agent.id)).not.toContain('Forkbench: ');
  });

  it('a custom command’s pane is shown a person’s assignment in its output: nothing is typed into a program Forkbench does not know', async () => {
    const host = await openHost({ typingQuietMs: 300 });
    await host.board.run((e) => e.addTask({ title: 'review the docs' }));
    const agent = await host.roster.launch('custom', { command: 'exec cat' });
    const seen = paneText(host, agent.id, /Forkbench: You have been assigned T-1 "review the docs"/);
    expect((await host.board.run((e) => e.assign('T-1', agent.id))).ok).toBe(true);
    await seen;
    // cat echoes what it is given (the tty's echo, then its own copy): the screen holds the notice once, as shown.
    host.roster.relay.input(agent.id, 'person\r');
    await paneText(host, agent.id, /person\r\n(?:[\s\S]*)person/);
    const lines = (await host.roster.get(agent.id)!.session.screenLines()).filter((l) => l.length > 0);
    expect(lines.filter((l) => l.includes('You have been assigned'))).toHaveLength(1);
    expect(lines.at(-2)).toBe('person');
    expect(lines.at(-1)).toBe('person');
  });

  it('a task dragged to another agent: the holder it was taken from is told at once in its pane, by whom and to whom', async () => {
    const host = await openHost({ typingQuietMs: 300 });
    await host.board.run((e) => e.addTask({ title: 'review the docs' }));
    const first = await host.roster.launch('custom', { command: 'exec cat', name: 'first' });
    const second = await host.roster.launch('custom', { command: 'exec cat', name: 'second' });
    expect((await host.board.run((e) => e.claim(first.id, 'T-1'))).ok).toBe(true);
    const told = paneText(host, first.id, /Forkbench: T-1 "review the docs" was taken from you by a person in the Forkbench window and given to second: your fencing token 1 is no longer accepted/);
    const assigned = paneText(host, second.id, /Forkbench: You have been assigned T-1 "review the docs".*token 2/);
    expect((await host.board.run((e) => e.assign('T-1', second.id))).ok).toBe(true);
    await Promise.all([told, assigned]);
  });

  it('the Enter after an assignment comes on its own once the echo settles: a TUI would take text+Enter for a paste', async () => {
    const host = await openTyped({ typingQuietMs: 300 });
    await host.board.run((e) => e.addTask({ title: 'review the docs' }));
    const agent = await launchReader(host);
    const reads = await assignAndRead(host, agent.id);
    expect(reads.join('')).toMatch(/^You have been assigned T-1 "review the docs".*\r$/s);
    expect(reads.at(-1)).toBe('\r');
    expect(reads.slice(0, -1).some((r) => r.includes('\r'))).toBe(false);
  });

  it('a pane that asked for bracketed paste gets the assignment as a paste, then Enter on its own', async () => {
    const host = await openTyped({ typingQuietMs: 300, bracketedPaste: true });
    await host.board.run((e) => e.addTask({ title: 'review the docs' }));
    const agent = await launchReader(host);
    const reads = await assignAndRead(host, agent.id);
    expect(reads.join('')).toMatch(/^\x1b\[200~You have been assigned T-1 "review the docs".*\x1b\[201~\r$/s);
    expect(reads.at(-1)).toBe('\r');
  });

  it('an assignment made while the previous one is being typed is typed too, once the pane is quiet again', async () => {
    const host = await openTyped({ typingQuietMs: 300 });
    await host.board.run((e) => e.addTask({ title: 'first' }));
    await host.board.run((e) => e.addTask({ title: 'second' }));
    const agent = await launchReader(host);
    const firstTyped = paneText(host, agent.id, /assigned T-1/);
    expect((await host.board.run((e) => e.assign('T-1', agent.id))).ok).toBe(true);
    await firstTyped; // its Enter is still waiting for the echo to settle
    const both = paneText(host, agent.id, /assigned T-2[\s\S]*read "\\r"/, 10_000);
    expect((await host.board.run((e) => e.assign('T-2', agent.id))).ok).toBe(true);
    const reads = readsIn(await both);
    expect(reads.filter((r) => r === '\r')).toHaveLength(2);
  });

  it('control characters in a task title from an old journal reach the pane as visible escapes: a title cannot end the paste or press keys', async () => {
    // The board refuses such a title now; one written before it did is still in the journal.
    const title = 'evil \x1b[201~\x03 title';
    const host = await openTyped({ typingQuietMs: 300, bracketedPaste: true, seedBoard: (dir, key) => writeLegacyJournal(dir, [legacyThread(key), legacyTask('T-1', title)]) });
    expect(host.board.state.tasks.get('T-1')?.title).toBe(title);
    const agent = await launchReader(host);
    const typed = (await assignAndRead(host, agent.id)).join('');
    expect(typed).toMatch(/^\x1b\[200~You have been assigned T-1 "evil \\x1b\[201~\\x03 title".*\x1b\[201~\r$/s);
    expect(typed).not.toContain('\x03');
    // the only ESCs are the paste's own marks
    expect(typed.match(/\x1b/g)).toHaveLength(2);
  });

  it('C1 controls and bidi overrides in an old title reach the pane as visible escapes, never as C2 9B (CSI to a UTF-8 terminal)', async () => {
    const title = 'csi \x9b201~ osc \x9d0;t\x9c nel \x85 rlo \u202eabc';
    const host = await openTyped({ typingQuietMs: 300, bracketedPaste: true, seedBoard: (dir, key) => writeLegacyJournal(dir, [legacyThread(key), legacyTask('T-1', title)]) });
    const agent = await launchReader(host);
    const typed = (await assignAndRead(host, agent.id)).join('');
    expect(typed).toContain('"csi \\x9b201~ osc \\x9d0;t\\x9c nel \\x85 rlo \\u202eabc"');
    expect(typed).not.toMatch(/[\x80-\x9f\u202a-\u202e]/);
    // and what reached the pty as bytes has no C1 either: the reader got exactly this text, in UTF-8
    expect(Buffer.from(typed, 'utf8').includes(Buffer.from([0xc2, 0x9b]))).toBe(false);
  });
});
