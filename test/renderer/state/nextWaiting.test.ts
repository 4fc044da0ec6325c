import { describe, expect, it } from 'vitest';
import type { AgentState } from '../../../src-shared/agents/agentState.js';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { nextWaiting } from '../../../src-renderer/state/nextWaiting.js';

const agent = (id: string, state: AgentState | null, text: string | null = null): AgentInfo => ({
  id,
  name: `shell ${id}`,
  profile: 'shell',
  status: 'running',
  pid: 1,
  exit: null,
  claims: ['T-1'],
  state: state ? { state, source: 'hook', text, since: 0 } : null,
});

describe('the next waiting agent', () => {
  it('the next waiting agent comes after the current tab, wrapping round', () => {
    const agents = { a: agent('a', 'needs-input'), b: agent('b', 'working'), c: agent('c', 'needs-input') };
    const ids = ['a', 'b', 'c'];
    expect(nextWaiting({ agentIds: ids, agents, activeAgentId: 'a' })).toBe('c');
    expect(nextWaiting({ agentIds: ids, agents, activeAgentId: 'c' })).toBe('a');
    expect(nextWaiting({ agentIds: ids, agents: { b: agents.b }, activeAgentId: 'b' })).toBeNull();
  });
});
