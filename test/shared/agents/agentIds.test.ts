import { describe, expect, it } from 'vitest';
import { agentIdOf, nameFromAgentId } from '../../../src-shared/agents/agentIds.js';
import { AgentRegistry } from '../../../src-main/agents/agentRegistry.js';

describe('agent ids', () => {
  it('carry the number of the name, so a gone agent is still named by its id', () => {
    const id = agentIdOf('shell', 12, 'a1b2c3d4e5f6');
    expect(id).toBe('shell-12-a1b2c3d4e5f6');
    expect(nameFromAgentId(id)).toBe('shell 12');
    expect(nameFromAgentId('opencode-3-000000000000')).toBe('opencode 3');
    // Not of that form: a person, a hand-made id, a truncated one.
    for (const other of ['user', 'a1', 'shell-1-aa', 'shell-x-a1b2c3d4e5f6', 'Shell-1-a1b2c3d4e5f6']) expect(nameFromAgentId(other)).toBeNull();
  });

  it("the host's registry makes them from the name's number, and from its own count without one", () => {
    const r = new AgentRegistry();
    const named = r.create('shell', 'shell 41', 0, 41);
    expect(nameFromAgentId(named.id)).toBe('shell 41');
    expect(named.id).not.toBe(r.create('shell', 'shell 41', 0, 41).id);
    expect(nameFromAgentId(r.create('custom', 'mine', 0).id)).toBe('custom 3');
  });
});
