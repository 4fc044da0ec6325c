import { describe, expect, it } from 'vitest';
import type { Task } from '../../../src-shared/board/model.js';
import type { AppController } from '../../../src-renderer/state/controller.js';
import { settle } from '../../helpers/renderer.js';
import { closeAgentAsking, describeHeld } from '../../../src-renderer/components/agentClose.js';

describe("closing a running agent's tab", () => {
  it('names what it holds, a title from an old journal with its controls shown as escapes', () => {
    const tasks = new Map([
      ['T-1', { id: 'T-1', title: 'fix the \u202eevil\u202c parser \x1b[2J' } as Task],
      ['T-2', { id: 'T-2', title: 'Add tests' } as Task],
    ]);
    const c = { state: { board: { tasks }, agents: { 'shell-1-aaaaaaaaaaaa': { claims: ['T-1', 'T-2', 'T-9'] } } } } as unknown as Pick<AppController, 'state'>;
    expect(describeHeld(c, 'shell-1-aaaaaaaaaaaa')).toEqual(['T-1 "fix the \\u202eevil\\u202c parser \\x1b[2J"', 'T-2 "Add tests"', 'T-9']);
  });

  it("does nothing for another host's agent (it has no ×): neither asks nor closes, its process being that host's", async () => {
    const closed: string[] = [];
    const c = {
      state: { board: null, agents: { b1: { id: 'b1', name: 'shell 1', status: 'running', host: 'build-box', claims: ['T-1'] } } },
      actions: { closeAgent: async (id: string) => (closed.push(id), true) },
    } as unknown as AppController;
    // Asking would wait for a person's answer that never comes: the call is over once its microtasks ran.
    let over = false;
    void closeAgentAsking(c, 'b1').then(() => (over = true));
    await settle();
    expect(over).toBe(true);
    expect(closed).toEqual([]);
  });
});
