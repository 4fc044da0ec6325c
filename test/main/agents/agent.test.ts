import { describe, expect, it } from 'vitest';
import { Agent, IllegalTransition, secretDigestOf, type AgentChange, type Lifecycle } from '../../../src-main/agents/agent.js';
import { AgentRegistry } from '../../../src-main/agents/agentRegistry.js';

/** Every change an agent announces, as `before>after`. */
function watched(agent: Agent): string[] {
  const seen: string[] = [];
  agent.onChange((c: AgentChange) => seen.push(`${c.before}>${c.agent.status}`));
  return seen;
}

describe("an agent's life", () => {
  it('goes starting → running ↔ stalled → exited → (resumed) starting, announcing each move once', () => {
    const a = Agent.launched('shell', 'shell 1', 1, 0);
    const seen = watched(a);
    expect(a.status).toBe('starting');
    a.started(4242);
    expect(a.pid).toBe(4242);
    a.progressing(false);
    a.progressing(false); // said again: no move
    a.progressing(true);
    a.progressing(true);
    expect(a.ended({ code: 0, signal: null })).toBe(true);
    expect(a.ended()).toBe(false); // the second word of its death ends nothing more
    expect(a.exit).toEqual({ code: 0, signal: null });
    a.resumed(10);
    expect(seen).toEqual(['starting>running', 'running>stalled', 'stalled>running', 'running>exited', 'exited>starting']);
    expect(a.run).toBe(1);
    expect(a.pid).toBeNull();
    expect(a.exit).toBeNull();
  });

  it('the exit status that follows its death is kept and announced, without a second death', () => {
    const a = Agent.launched('shell', 'shell 1', 1, 0);
    a.started(1);
    const seen = watched(a);
    expect(a.ended()).toBe(true);
    expect(a.ended({ code: 137, signal: 9 })).toBe(false);
    expect(a.exit).toEqual({ code: 137, signal: 9 });
    expect(seen).toEqual(['running>exited', 'exited>exited']);
  });

  it('refuses the moves its life does not allow, and stays where it was', () => {
    const illegal: Array<[string, (a: Agent) => void, Lifecycle]> = [
      ['start twice', (a) => (a.started(1), a.started(2)), 'running'],
      ['start a gone agent', (a) => (a.ended(), a.started(1)), 'exited'],
      ['resume a starting agent', (a) => a.resumed(0), 'starting'],
      ['resume a running agent', (a) => (a.started(1), a.resumed(0)), 'running'],
      ['resume a stalled agent', (a) => (a.started(1), a.progressing(false), a.resumed(0)), 'stalled'],
    ];
    for (const [what, act, stays] of illegal) {
      const a = Agent.launched('shell', 'shell 1', 1, 0);
      expect(() => act(a), what).toThrow(IllegalTransition);
      expect(a.status, what).toBe(stays);
    }
  });

  it('the liveness word does not move an agent that is not running yet or is gone', () => {
    const starting = Agent.launched('shell', 'shell 1', 1, 0);
    starting.progressing(false);
    expect(starting.status).toBe('starting');
    const gone = Agent.restored('shell-2-aa', 'shell', 'shell 2', 0);
    gone.progressing(true);
    expect(gone.status).toBe('exited');
  });

  it('only the agent writes its life: status, pid, exit and last board call have no setter', () => {
    const a = Agent.launched('shell', 'shell 1', 1, 0);
    for (const field of ['status', 'pid', 'exit', 'lastBoardCallAt', 'secret', 'secretDigest']) {
      expect(() => ((a as unknown as Record<string, unknown>)[field] = 'x'), field).toThrow(TypeError);
    }
    a.calledBoard(99);
    expect(a.lastBoardCallAt).toBe(99);
  });

  it('its secret dies with it, and a resume gives it a new one that the registry knows', () => {
    const reg = new AgentRegistry();
    const a = reg.create('shell', 'shell 1', 0, 1);
    a.started(1);
    const first = a.secret;
    expect(reg.authenticate(first)).toBe(a);
    a.ended();
    expect(reg.authenticate(first)).toBeNull();
    reg.revive(a.id, 0);
    expect(a.secret).not.toBe(first);
    expect(a.secretDigest).toBe(secretDigestOf(a.secret));
    a.started(2);
    expect(reg.authenticate(a.secret)).toBe(a);
    expect(reg.authenticate(first)).toBeNull();
  });

  it('an adopted agent runs on the digest alone; its empty secret never authenticates', () => {
    const reg = new AgentRegistry();
    const a = reg.adopt({ id: 'shell-1-aa', name: 'shell 1', profile: 'shell', secretDigest: secretDigestOf('kept'), pid: 7 }, 0);
    expect(a.status).toBe('running');
    expect(reg.authenticate('kept')).toBe(a);
    expect(reg.authenticate(a.secret)).toBeNull();
  });
});
