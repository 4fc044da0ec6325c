import { describe, expect, it } from 'vitest';
import type { AgentState } from '../../../src-shared/agents/agentLife.js';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { nextWaiting } from '../../../src-renderer/state/nextWaiting.js';
import { applyEvent, emptyBoard } from '../../../src-shared/board/reducer.js';

const agent = (id: string, state: AgentState | null, text: string | null = null, claims = ['T-1']): AgentInfo => ({
  id,
  name: `shell ${id}`,
  profile: 'shell',
  status: 'running',
  pid: 1,
  exit: null,
  claims,
  state: state ? { state, source: 'hook', text, since: 0 } : null,
});

describe('the next waiting agent', () => {
  it('the next waiting agent comes after the current tab, wrapping round', () => {
    const agents = { a: agent('a', 'needs-input'), b: agent('b', 'working'), c: agent('c', 'needs-input') };
    const ids = ['a', 'b', 'c'];
    const board = null;
    expect(nextWaiting({ agentIds: ids, agents, activeAgentId: 'a', board })).toBe('c');
    expect(nextWaiting({ agentIds: ids, agents, activeAgentId: 'c', board })).toBe('a');
    expect(nextWaiting({ agentIds: ids, agents: { b: agents.b }, activeAgentId: 'b', board })).toBeNull();
  });

  it('an agent whose work waits for the person\'s review is waiting for them too; one holding work at its prompt is not', () => {
    const board = emptyBoard('t');
    for (const id of ['T-1', 'T-2']) applyEvent(board, { kind: 'task-added', at: 0, taskId: id, title: id, body: '', verify: null, by: 'you' } as never);
    applyEvent(board, { kind: 'grant', at: 0, taskId: 'T-1', agentId: 'a', token: 1, deadline: 120_000, by: 'a' } as never);
    applyEvent(board, { kind: 'grant', at: 0, taskId: 'T-2', agentId: 'b', token: 2, deadline: 120_000, by: 'b' } as never);
    applyEvent(board, { kind: 'submitted', at: 0, taskId: 'T-2', agentId: 'b', token: 2 } as never);
    const agents = { a: agent('a', 'idle', null, ['T-1']), b: agent('b', 'idle', null, ['T-2']) };
    expect(board.tasks.get('T-2')?.state).toBe('review');
    expect(nextWaiting({ agentIds: ['a', 'b'], agents, activeAgentId: 'a', board })).toBe('b');
    expect(nextWaiting({ agentIds: ['a', 'b'], agents: { a: agents.a }, activeAgentId: 'a', board })).toBeNull();
  });
});
