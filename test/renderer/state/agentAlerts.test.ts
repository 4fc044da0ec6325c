import { describe, expect, it } from 'vitest';
import type { AgentState } from '../../../src-shared/agents/agentState.js';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { alertText, alertsFor, nextWaiting } from '../../../src-renderer/state/agentAlerts.js';

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

describe('agent alerts', () => {
  it('tells of an agent that starts waiting or finishes its turn, once, and not of one first seen', () => {
    const before = { a: agent('a', 'working'), b: agent('b', 'working'), c: agent('c', 'needs-input') };
    const after = [agent('a', 'needs-input', 'Allow?'), agent('b', 'idle'), agent('c', 'needs-input'), agent('d', 'needs-input')];
    expect(alertsFor(before, after).map((x) => `${x.agent.id}:${x.kind}`)).toEqual(['a:waiting', 'b:done']);
    // idle after a wait (a denied prompt) is not "finished its turn"
    expect(alertsFor({ a: agent('a', 'needs-input') }, [agent('a', 'idle')])).toEqual([]);
  });

  it('a CLI that is ready after starting up (the launch only presumed it working) finished no turn', () => {
    const starting: AgentInfo = { ...agent('a', 'working'), state: { state: 'working', source: 'liveness', text: null, since: 0, presumed: true } };
    const ready = agent('a', 'idle');
    expect(alertsFor({ a: starting }, [ready])).toEqual([]);
    // Once a turn was said to begin, its end is news.
    expect(alertsFor({ a: agent('a', 'working') }, [ready]).map((x) => x.kind)).toEqual(['done']);
  });

  it('names the agent and the task, and shows controls in the question as text', () => {
    const t = alertText(agent('a', 'needs-input', 'Run \x1b[2J?'), 'waiting', { id: 'T-1', title: 'Migrate' });
    expect(t).toEqual({ title: 'shell a is waiting for you', body: 'T-1 "Migrate"\nRun \\x1b[2J?' });
    expect(alertText(agent('b', 'idle'), 'done', null)).toEqual({ title: 'shell b finished its turn', body: 'no task claimed' });
  });

  it('the next waiting agent comes after the current tab, wrapping round', () => {
    const agents = { a: agent('a', 'needs-input'), b: agent('b', 'working'), c: agent('c', 'needs-input') };
    const ids = ['a', 'b', 'c'];
    expect(nextWaiting({ agentIds: ids, agents, activeAgentId: 'a' })).toBe('c');
    expect(nextWaiting({ agentIds: ids, agents, activeAgentId: 'c' })).toBe('a');
    expect(nextWaiting({ agentIds: ids, agents: { b: agents.b }, activeAgentId: 'b' })).toBeNull();
  });
});
