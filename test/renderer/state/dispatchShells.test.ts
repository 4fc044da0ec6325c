import { describe, expect, it } from 'vitest';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { AppController } from '../../../src-renderer/state/controller.js';
import { agentModeShellLine, threadDefaultShellLine } from '../../../src-renderer/state/dispatchShells.js';
import { HostClock } from '../../../src-renderer/state/hostClock.js';
import { dispatchCommands } from '../../../src-renderer/components/TaskDispatch.js';
import { agent, engineWith, FakeTransport, settle, snapshotOf } from '../../helpers/renderer.js';

/**
 * Issue 44: dispatch could be turned on for a plain shell with no word. A shell or a custom command reads no
 * task it is given (the board's grant is only printed in its terminal), so the window says so in one line
 * when a person's change starts dispatching to one: the palette command's detail and a toast after it, and
 * Thread settings' line while its box is ticked. A real lease engine behind a fake transport, as the host
 * answers the window.
 */
const KEY = '0123456789abcdef';

function setup(agents: AgentInfo[]) {
  const host = engineWith(['parse']);
  const t = new FakeTransport();
  t.on('threads.list', () => [{ key: KEY, open: true, folder: '/p', goal: '' }]);
  t.on('thread.snapshot', () => snapshotOf(host.engine, { agents }));
  let sent = host.events.length;
  const pushEvents = () => {
    for (const e of host.events.slice(sent)) t.push({ type: 'board-event', key: KEY, event: e });
    sent = host.events.length;
  };
  // The host's answer: the engine's own write, its event pushed as the host pushes it.
  t.on('agent.setDispatch', (p) => {
    const r = host.engine.setAgentDispatch(p.agentId, p.mode, p.labels);
    if (!r.ok) throw new Error(r.error.message);
    pushEvents();
    return null;
  });
  const c = new AppController(t, { clock: new HostClock(() => 0), setTimeout: () => 0, clearTimeout: () => undefined });
  return { host, c, pushEvents };
}

const shell = agent('shell-1-0123456789ab', { name: 'shell 1', profile: 'shell' });
const custom = agent('custom-1-0123456789ab', { name: 'custom 1', profile: 'custom' });
const claude = agent('claude-1-0123456789ab', { name: 'claude 1', profile: 'claude' });
const gone = agent('shell-2-0123456789ab', { name: 'shell 2', profile: 'shell', status: 'exited' });

describe('dispatch turned on for a plain shell says so', () => {
  it("an agent's own dispatch: the command's detail says it before, a toast after; a CLI agent's says nothing", async () => {
    const { c } = setup([shell, custom, claude, gone]);
    c.start();
    await settle();
    const words = 'shell 1 is a plain shell: it does not pick work by itself. A task the board gives it is only shown in its terminal, for you to act on.';
    expect(agentModeShellLine(c.state, shell.id, 'on')).toBe(words);
    expect(agentModeShellLine(c.state, custom.id, 'on')).toBe(
      'custom 1 is a plain shell: it does not pick work by itself. A task the board gives it is only shown in its terminal, for you to act on.',
    );
    // An agent CLI reads its tasks; an exited shell takes none; off or the Thread's default (off) starts nothing.
    expect(agentModeShellLine(c.state, claude.id, 'on')).toBeNull();
    expect(agentModeShellLine(c.state, gone.id, 'on')).toBeNull();
    expect(agentModeShellLine(c.state, shell.id, 'off')).toBeNull();
    expect(agentModeShellLine(c.state, shell.id, 'thread')).toBeNull();

    const on = dispatchCommands(c, shell.id, shell.name).find((x) => x.id === `agent-dispatch-on-${shell.id}`)!;
    expect(on.detail).toBe(words);
    on.run();
    await settle();
    await settle();
    expect(c.state.toasts.map((x) => [x.title, x.body])).toEqual([['Dispatch to shell 1 is on', words]]);
    // Already on: nothing more to say, and the command is disabled.
    expect(agentModeShellLine(c.state, shell.id, 'on')).toBeNull();

    const claudeOn = dispatchCommands(c, claude.id, claude.name).find((x) => x.id === `agent-dispatch-on-${claude.id}`)!;
    expect(claudeOn.detail).toBe('When it is idle and holds nothing, the board gives it the next ready task it may take');
    claudeOn.run();
    await settle();
    await settle();
    expect(c.state.toasts).toHaveLength(1);
  });

  it("the Thread's default: names every running plain shell that follows it, none that has its own setting", async () => {
    const { c, host, pushEvents } = setup([shell, custom, claude, gone]);
    c.start();
    await settle();
    expect(threadDefaultShellLine(c.state)).toBe(
      'shell 1 and custom 1 are plain shells: they do not pick work by themselves. A task the board gives one is only shown in its terminal, for you to act on.',
    );
    // custom 1 set off of its own: the default does not reach it.
    host.engine.setAgentDispatch(custom.id, 'off', []);
    pushEvents();
    await settle();
    expect(threadDefaultShellLine(c.state)).toBe('shell 1 is a plain shell: it does not pick work by itself. A task the board gives it is only shown in its terminal, for you to act on.');
    // With the Thread's default on, following it is dispatch turned on.
    host.engine.setSettings({ dispatch: true });
    pushEvents();
    await settle();
    expect(agentModeShellLine(c.state, custom.id, 'thread')).toBe(
      'custom 1 is a plain shell: it does not pick work by itself. A task the board gives it is only shown in its terminal, for you to act on.',
    );
  });
});
