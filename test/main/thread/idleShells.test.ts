import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { probeBwrap } from '../../../src-main/sandbox/bwrapProbe.js';
import { uncontainedBecause } from '../../helpers/gitFixture.js';
import { makeHome } from '../../helpers/homes.js';
import { hostFixture } from '../../helpers/hosts.js';
import { waitFor } from '../../helpers/pty.js';

/**
 * "Stalled" means alive, holding a claim and making no progress. Real shells at their prompt, with the
 * real liveness loop on the shortest lease: the ones that hold nothing become idle and stay running; the one
 * holding a claim is stalled (its claim then runs out, and it is idle like the rest); a stopped one is
 * stalled whatever it holds.
 */
const fixture = hostFixture('idle-shells');
afterEach(() => fixture.cleanup());

describe('agents that make no progress', () => {
  it('idle shells that hold nothing are idle, never stalled; a silent holder is stalled until its claim runs out; a stopped one is stalled', async () => {
    const host = await fixture.open({ liveness: true });
    await host.board.run((e) => e.setSettings({ leaseMs: 2_000 }));
    const idle = await Promise.all([1, 2, 3].map(() => host.roster.launch('shell')));
    const holder = await host.roster.launch('shell');
    const stopped = await host.roster.launch('shell');
    const t = await host.board.run((e) => e.addTask({ title: 'held in silence' }));
    if (!t.ok) throw new Error(t.error.message);
    expect((await host.board.run((e) => e.claim(holder.id, t.value.id))).ok).toBe(true);
    process.kill(stopped.pid!, 'SIGSTOP');
    const seen = new Map<string, Set<string>>();
    const note = (list: AgentInfo[]) => {
      for (const a of list) {
        const s = seen.get(a.id) ?? new Set<string>();
        s.add(`${a.status}/${a.state?.state}`);
        seen.set(a.id, s);
      }
    };
    host.roster.onAgents.event(note);
    const info = (id: string) => host.roster.agents().find((a) => a.id === id)!;
    try {
      await waitFor(() => idle.every((a) => info(a.id).state?.state === 'idle'), 20_000, 'the idle shells to be idle');
      await waitFor(() => seen.get(holder.id)?.has('stalled/stalled') === true, 20_000, 'the silent holder to be stalled');
      await waitFor(() => host.board.state.tasks.get(t.value.id)?.claim === null, 20_000, "the holder's claim to run out");
      await waitFor(() => info(holder.id).state?.state === 'idle' && info(holder.id).status === 'running', 20_000, 'the former holder to be idle');
      await waitFor(() => info(stopped.id).status === 'stalled', 20_000, 'the stopped shell to be stalled');
      for (const a of idle) {
        expect(info(a.id).status).toBe('running');
        expect([...(seen.get(a.id) ?? [])].filter((s) => s.includes('stalled')), `${a.name}: ${[...(seen.get(a.id) ?? [])].join(', ')}`).toEqual([]);
      }
    } finally {
      process.kill(stopped.pid!, 'SIGCONT');
    }
  }, 60_000);

  it('a shell whose work waits in review is idle, never stalled, and keeps its claim for 3 leases (issue 44: review is the person\'s time)', async () => {
    const host = await fixture.open({ liveness: true });
    const lease = 2_000;
    await host.board.run((e) => e.setSettings({ leaseMs: lease }));
    const sh = await host.roster.launch('shell');
    const t = await host.board.run((e) => e.addTask({ title: 'waits for the person' }));
    if (!t.ok) throw new Error(t.error.message);
    const c = await host.board.run((e) => e.claim(sh.id, t.value.id));
    if (!c.ok) throw new Error(c.error.message);
    expect((await host.board.run((e) => e.done(sh.id, t.value.id, c.value.token))).ok).toBe(true);
    const seen = new Set<string>();
    host.roster.onAgents.event((list) => {
      const a = list.find((x) => x.id === sh.id);
      if (a) seen.add(`${a.status}/${a.state?.state}`);
    });
    const lapses: string[] = [];
    host.board.onEvent((e) => e.kind === 'claim-ended' && lapses.push(e.reason));
    const start = host.board.engine.now();
    await waitFor(() => host.board.engine.now() - start >= 3 * lease, 20_000, 'three leases to pass');
    host.board.engine.sweep();
    expect(host.board.state.tasks.get(t.value.id)).toMatchObject({ state: 'review', claim: { agentId: sh.id, token: c.value.token } });
    expect(lapses).toEqual([]);
    expect([...seen].filter((s) => s.includes('stalled')), [...seen].join(', ')).toEqual([]);
    expect(host.roster.agents().find((a) => a.id === sh.id)?.status).toBe('running');
  }, 60_000);

  it('a bash at its prompt is idle as soon as it draws it, working while a command runs, and idle again after (its prompt marks)', async () => {
    // No liveness loop: what the shell says about itself is all there is.
    const host = await fixture.open({ env: { ...process.env, SHELL: '/bin/bash' } });
    const sh = await host.roster.launch('shell');
    const states: string[] = [];
    host.roster.onAgents.event((list) => {
      const s = list.find((a) => a.id === sh.id)?.state;
      if (s && states[states.length - 1] !== `${s.state}/${s.source}`) states.push(`${s.state}/${s.source}`);
    });
    const state = () => host.roster.agents().find((a) => a.id === sh.id)?.state;
    await waitFor(() => state()?.state === 'idle', 10_000, 'the shell at its prompt to be idle');
    expect(state()?.source).toBe('terminal');
    host.roster.relay.input(sh.id, 'sleep 2; echo "SLEPT"-OUT\r');
    await waitFor(() => state()?.state === 'working', 5_000, 'the shell running a command to be working');
    let out = '';
    host.roster.relay.onData.event(({ agentId, data }) => agentId === sh.id && (out += data));
    await waitFor(() => out.includes('SLEPT-OUT'), 10_000, 'the command to end');
    await waitFor(() => state()?.state === 'idle', 5_000, 'the shell back at its prompt to be idle');
    // A message of the host's is shown in its output, not typed: nothing runs, so no prompt is drawn again
    // and it stays idle.
    const before = states.length;
    let prompts = 0;
    host.roster.get(sh.id)!.session.onSignal((sig) => sig.kind === 'prompt' && sig.mark === 'A' && prompts++);
    await host.roster.relay.tell(sh.id, 'You have been assigned T-9 (a test message).');
    expect(out).toContain('Forkbench: You have been assigned T-9 (a test message).');
    await host.roster.get(sh.id)!.session.flushMirror();
    expect(prompts).toBe(0);
    expect(states.slice(before)).toEqual([]);
    expect(state()?.state).toBe('idle');
    expect(states.filter((s) => s.startsWith('stalled'))).toEqual([]);
  }, 30_000);
});

describe('prompt marks count only from the shell (issue 43)', async () => {
  const homes: string[] = [];
  afterEach(() => {
    for (const h of homes.splice(0)) fs.rmSync(h, { recursive: true, force: true });
  });
  const bwrap = await probeBwrap();
  // The two ways a shell pane runs: bash is the pane's root, or bash runs under bwrap's two processes.
  const layouts = [
    { how: 'uncontained', root: 'bash', sandboxSupport: uncontainedBecause('this case runs the shell as it is'), skip: false },
    { how: 'inside bwrap', root: 'bwrap', sandboxSupport: undefined, skip: !bwrap.ok },
  ];
  for (const l of layouts) {
    it.skipIf(l.skip)(`a command that prints a prompt mark while it runs leaves bash (${l.how}) working; the prompt after it makes it idle`, async () => {
      const host = await fixture.open({ env: { ...process.env, SHELL: '/bin/bash' }, sandboxSupport: l.sandboxSupport });
      const sh = await host.roster.launch('shell');
      const state = () => host.roster.agents().find((a) => a.id === sh.id)?.state;
      await waitFor(() => state()?.state === 'idle', 10_000, 'the shell at its prompt to be idle');
      // Read once the shell is up: until then the root may still be the launcher that execs it (inheritedFds.ts).
      expect(fs.readFileSync(`/proc/${sh.pid}/comm`, 'utf8').trim()).toBe(l.root);
      const states: string[] = [];
      host.roster.onAgents.event((list) => {
        const s = list.find((a) => a.id === sh.id)?.state;
        if (s && states[states.length - 1] !== s.state) states.push(s.state);
      });
      let out = '';
      host.roster.relay.onData.event(({ agentId, data }) => agentId === sh.id && (out += data));
      // What an agent's command would do to look idle while busy: print the mark, then keep running.
      host.roster.relay.input(sh.id, `sh -c 'printf "\\033]133;A\\007"; echo FAKED-"PROMPT"; exec sleep 30'\r`);
      await waitFor(() => out.includes('FAKED-PROMPT'), 10_000, 'the command to print its mark');
      await host.roster.get(sh.id)!.session.flushMirror();
      expect(state()?.state).toBe('working');
      expect(states).toEqual(['working']);
      // Ctrl-C ends it: the shell takes the terminal back and marks its prompt.
      host.roster.relay.input(sh.id, '\x03');
      await waitFor(() => state()?.state === 'idle', 10_000, 'the shell back at its prompt to be idle');
      expect(states).toEqual(['working', 'idle']);
    }, 30_000);

    it.skipIf(l.skip)(`bash (${l.how}) marks its prompt after the person's own prompt command, which holds the terminal while it runs, and is idle`, async () => {
      const home = fs.mkdtempSync(join(tmpdir(), 'forkbench-idle-home-'));
      homes.push(home);
      // Ends with `;`, as some do: the mark is joined on after it all the same.
      const vars = makeHome(home, { '.profile': `PS1='$ '\nPROMPT_COMMAND='/bin/echo "PERSON"-PC;'\n` });
      const host = await fixture.open({ env: { PATH: process.env.PATH, SHELL: '/bin/bash', LANG: 'C.UTF-8', ...vars }, sandboxSupport: l.sandboxSupport });
      const out = new Map<string, string>();
      host.roster.relay.onData.event(({ agentId, data }) => out.set(agentId, (out.get(agentId) ?? '') + data));
      const sh = await host.roster.launch('shell');
      await waitFor(() => host.roster.agents().find((a) => a.id === sh.id)?.state?.state === 'idle', 10_000, 'the shell at its prompt to be idle');
      expect(out.get(sh.id)).toContain('PERSON-PC\r\n\x1b]133;A\x07');
    }, 30_000);
  }
});
