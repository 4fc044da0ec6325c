/**
 * Agent states of panes kept in the pty host, read off the pty host's one mirror of each pane: its terminal
 * signals come to the board host as control frames, and the screen matcher asks it for the screen's lines.
 * Real processes throughout: a pty host, its ptys, and a Thread's board journaling each change.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import type { ProfileIdShared } from '../../../src-shared/agents/profileIds.js';
import { AgentStates } from '../../../src-main/roster/agentStates.js';
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import type { TerminalSignal } from '../../../src-main/pty/headlessMirror.js';
import { PtyHostLink } from '../../../src-main/ptyhost/ptyHostLink.js';
import { RemotePty } from '../../../src-main/ptyhost/remotePty.js';
import { nextEvent } from '../../helpers/events.js';
import { waitFor } from '../../helpers/pty.js';
import { openTestHost } from '../../helpers/testHost.js';

const linux = process.platform === 'linux';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function openHost(): Promise<{ host: ThreadHost; link: PtyHostLink }> {
  const root = fs.mkdtempSync(join(tmpdir(), 'fb-ptyhost-states-'));
  const folder = join(root, 'project');
  fs.mkdirSync(folder);
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const link = await PtyHostLink.open(join(root, 'data'), { idleMs: 60_000 });
  const { host } = await openTestHost({ closedBy: 'caller', folder, dataRoot: join(root, 'data'), runtimeRoot: join(root, 'run'), liveness: false, ptyHost: link });
  cleanups.push(async () => {
    await host.dispose();
    await link.shutdown();
  });
  return { host, link };
}

const stateEvents = async (host: ThreadHost, id: string) =>
  (await host.board.log()).filter((e): e is Extract<BoardEvent, { kind: 'agent-state' }> => e.kind === 'agent-state' && e.agentId === id);
const stateEvent = (host: ThreadHost, id: string, state: string) =>
  nextEvent(host, (e) => e.kind === 'agent-state' && e.agentId === id && e.state === state, 10_000, `${id} ${state}`) as Promise<Extract<BoardEvent, { kind: 'agent-state' }>>;

/** A stand-in program in a pane of the pty host, read as `profile` reads its pane, journaled as "stand-in". */
async function standIn(host: ThreadHost, link: PtyHostLink, profile: ProfileIdShared, script: string): Promise<{ pty: RemotePty; states: AgentStates; signals: TerminalSignal[] }> {
  const who = { threadKey: 'k', agentId: 'stand-in', secretDigest: 'd'.repeat(64), socketPath: '/tmp/none.sock', profile, name: `${profile} 1` };
  const pty = await link.spawn('/bin/sh', ['-c', script], { cwd: host.folder, env: { PATH: process.env.PATH, LANG: 'C.UTF-8' }, cols: 80, rows: 24 }, who);
  expect(pty).toBeInstanceOf(RemotePty);
  const states = new AgentStates({ board: host.board });
  const signals: TerminalSignal[] = [];
  pty.onSignal((s) => signals.push(s));
  states.track('stand-in', who.name, profile, pty);
  cleanups.push(async () => {
    states.stop();
    await pty.kill().catch(() => undefined);
    pty.dispose();
  });
  return { pty: pty as RemotePty, states, signals };
}

const until = (what: string, ok: () => boolean | Promise<boolean>) => waitFor(ok, 10_000, what);

describe.runIf(linux)("agent states of a pane in the pty host, from the pty host's mirror", () => {
  it('an OSC 9 notification of a launched agent is needs-input from the terminal, Enter answers it', async () => {
    const { host } = await openHost();
    const a = await host.roster.launch('custom', { command: `printf 'asking\\033]9;Deploy now?\\007\\n'; read line; exec sleep 600` });
    const waiting = await stateEvent(host, a.id, 'needs-input');
    expect(waiting).toMatchObject({ source: 'terminal', text: 'Deploy now?' });
    const working = stateEvent(host, a.id, 'working');
    host.roster.relay.input(a.id, 'y\r');
    expect(await working).toMatchObject({ source: 'terminal' });
  });

  it('every kind of signal arrives in order; a bell flood is a frame per parse pass, and a later bell is heard again', async () => {
    const { host, link } = await openHost();
    const script = [
      `printf '\\033]777;notify;Deploy;Push?\\033\\\\'`,
      `printf '\\033]0;a title\\007'`,
      `printf '\\033]7501;state=blocked:app=codex\\007'`,
      // 20,000 bells in one write: they reach the pty host in a few reads, each parsed in one pass.
      `head -c 20000 /dev/zero | tr '\\0' '\\007'`,
      `printf 'rang\\n'`,
      'read line',
      `printf 'Again? \\007'`,
      'exec sleep 600',
    ].join('; ');
    const s = await standIn(host, link, 'aider', script);
    await stateEvent(host, 'stand-in', 'needs-input');
    // Every bell is parsed (and its frame sent) before the pty host answers a screen showing what followed.
    await until("'rang' on the pty host's screen", async () => (await s.pty.screenLines()).some((l) => l.includes('rang')));
    // Counted before the answer: the shell's next prompt and its bell can arrive before 'working' is heard.
    const heardBefore = s.signals.length;
    const working = stateEvent(host, 'stand-in', 'working');
    s.states.input('stand-in', 'y\r');
    s.pty.write('y\r');
    await working;
    await stateEvent(host, 'stand-in', 'needs-input');
    expect(s.signals.slice(heardBefore)).toEqual([{ kind: 'bell' }]);
    expect(s.signals.slice(0, 3)).toEqual([
      { kind: 'notify', text: 'Deploy: Push?' },
      { kind: 'title', text: 'a title' },
      { kind: 'status', state: 'blocked', fields: { app: 'codex' } },
    ]);
    const bells = s.signals.slice(3).filter((x) => x.kind === 'bell').length;
    expect(s.signals.slice(3).every((x) => x.kind === 'bell')).toBe(true);
    // 20,001 bells, in a few parse passes: a frame per pass, not per bell.
    expect(bells).toBeGreaterThanOrEqual(2);
    expect(bells).toBeLessThan(100);
  });

  it('a signal reaches the board host after the output it came in, never ahead of it (20 rounds)', async () => {
    const { host, link } = await openHost();
    // Two writes a moment apart: the second (the question and its notification) waits in the
    // pty host's 5 ms output batch while its mirror has already parsed it.
    const script = `for i in $(seq 1 20); do printf "x$i "; sleep 0.001; printf "ASK$i\\033]9;q$i\\007 "; sleep 0.03; done; exec sleep 600`;
    const s = await standIn(host, link, 'custom', script);
    let out = '';
    const seenAt: string[] = [];
    s.pty.onData((d) => (out += d));
    s.pty.onSignal((sig) => {
      if (sig.kind === 'notify') seenAt.push(`${sig.text}:${out.includes(`ASK${sig.text.slice(1)}`)}`);
    });
    await until('20 notifications', () => seenAt.length >= 20);
    expect(seenAt).toEqual(Array.from({ length: 20 }, (_, i) => `q${i + 1}:true`));
  });

  it("a known prompt on the screen is needs-input from the screen; Enter answers it and it is not raised again while still drawn", async () => {
    const { host, link } = await openHost();
    // The prompt stays drawn for a moment after the answer (as a CLI's dialog does for a frame), then goes.
    const script = `printf ' Do you want to proceed?\\n ❯ 1. Yes\\n'; read answer; printf 'thinking\\n'; sleep 0.3; printf '\\033[2J\\033[Hran it\\n'; exec sleep 600`;
    const s = await standIn(host, link, 'claude', script);
    expect(await stateEvent(host, 'stand-in', 'needs-input')).toMatchObject({ source: 'screen', text: 'Do you want to proceed?' });
    const working = stateEvent(host, 'stand-in', 'working');
    const redrawn = new Promise<void>((resolve) => s.pty.onData((d) => d.includes('ran it') && resolve()));
    s.states.input('stand-in', '1\r');
    s.pty.write('1\r');
    expect(await working).toMatchObject({ source: 'terminal' });
    await redrawn;
    await new Promise((r) => setTimeout(r, 200));
    expect((await stateEvents(host, 'stand-in')).map((e) => `${e.state}/${e.source}`)).toEqual(['needs-input/screen', 'working/terminal']);
  });

  it("a hook's needs-input that waits for confirmation asks the pty host's screen: kept with its prompt drawn, dropped without", async () => {
    const { host, link } = await openHost();
    const s = await standIn(host, link, 'codex', `printf 'Would you like to run the following command?\\n'; exec sleep 600`);
    // The screen matcher sees the prompt first; the hook then names it, once the screen still shows it.
    expect(await stateEvent(host, 'stand-in', 'needs-input')).toMatchObject({ source: 'screen' });
    const waiting = nextEvent(host, (e) => e.kind === 'agent-state' && e.source === 'hook', 10_000, 'the hook\'s wait');
    s.states.report('stand-in', 'needs-input', 'Run touch x?');
    expect(await waiting).toMatchObject({ source: 'hook', text: 'Run touch x?' });

    const plain = await standIn(host, link, 'codex', `printf 'nothing to approve\\n'; exec sleep 600`);
    await until("its output on the pty host's screen", async () => (await plain.pty.screenLines()).some((l) => l.includes('nothing to approve')));
    plain.states.report('stand-in', 'needs-input', 'Run rm x?');
    // Past the confirmation wait and the screen's answer: the auto-granted approval is never a wait.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(plain.states.info('stand-in')?.state).toBe('working');
  });
});
