import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Agent } from '../../../src-main/agents/agent.js';
import type { BoardService } from '../../../src-main/board/boardService.js';
import type { QueueView } from '../../../src-shared/board/mergeQueue.js';
import { CliBoard } from '../../helpers/cliBoard.js';

/**
 * Issue 34, item 4, at the CLI and MCP: the real `forkbench` (and its MCP server) against a real board host's
 * socket and journal, with three approved tasks in the merge queue (no runner here, so they stay queued).
 * `forkbench queue` lists them first to land first; `forkbench queue move T-3 --before T-1` reorders; an agent
 * may move only its own work; `forkbench why` says where a queued task waits; MCP has the same two tools.
 */
let fx: CliBoard;
let board: BoardService;
let a: Agent;
let b: Agent;
beforeEach(async () => {
  fx = await CliBoard.open('queue');
  ({ board, a, b } = fx);
});
afterEach(() => fx.close());
const ok = (args: string[], agent?: Agent) => fx.ok(args, agent);
const refused = (args: string[], agent?: Agent) => fx.refused(args, agent);

/** Three tasks of agent A's, each done and approved: the queue holds T-1, T-2, T-3 in that order. */
async function threeQueued(): Promise<void> {
  for (const id of ['T-1', 'T-2', 'T-3']) {
    await board.run((e) => e.addTask({ title: `work ${id}` }));
    await board.run((e) => e.claim(a.id, id));
    await board.run((e) => e.done(a.id, id));
    await board.run((e) => e.enqueue(id));
  }
}
const order = () => [...board.state.tasks.values()].filter((t) => t.queued).sort((x, y) => (x.queued?.rank ?? 0) - (y.queued?.rank ?? 0)).map((t) => t.id);

describe('forkbench queue', () => {
  it('lists the queue, moves a task of ours, refuses another agent moving it, and why says where each waits', async () => {
    await threeQueued();
    expect(await ok(['queue'])).toBe(
      'Merge queue (3, first to land first). No verify command is set: each merge lands unchecked, as approval did before the queue.\n' +
        '  1. T-1    "work T-1"  (approved by user)\n  2. T-2    "work T-2"  (approved by user)\n  3. T-3    "work T-3"  (approved by user)\n',
    );
    const moved = JSON.parse(await ok(['queue', 'move', 't-3', '--before', 'T-1', '--json'])) as { result: QueueView };
    expect(moved.result.items.map((i) => i.taskId)).toEqual(['T-3', 'T-1', 'T-2']);
    expect(order()).toEqual(['T-3', 'T-1', 'T-2']);
    expect(await ok(['queue-move', 'T-3'])).toContain('  3. T-3 ');
    expect(order()).toEqual(['T-1', 'T-2', 'T-3']);
    // B did none of this work: the order of A's is not B's to set.
    expect(await refused(['queue', 'move', 'T-1', '--before', 'T-3'], b)).toContain('refused (not-holder): T-1 is not your work');
    expect(await refused(['queue', 'move', 'T-1', '--before', 'T-9'])).toContain('T-9 is not in the merge queue');
    expect(order()).toEqual(['T-1', 'T-2', 'T-3']);
    expect(await ok(['why', 'T-2'])).toBe('T-2 "work T-2": review\n  queued: T-2 is approved and waits in the merge queue, position 2 of 3, behind T-1\n');
    // A task that waits on one queued after it lands after it, whatever the person's order.
    await board.run((e) => e.editTask('T-1', {}, 'user', ['T-3']));
    expect((JSON.parse(await ok(['queue', '--json'])) as { result: QueueView }).result.items.map((i) => [i.taskId, i.waitsOn])).toEqual([
      ['T-2', []],
      ['T-3', []],
      ['T-1', ['T-3']],
    ]);
  });

  it('MCP: queue and queue-move are tools', async () => {
    await threeQueued();
    const { byName, tool } = await fx.mcp();
    expect(byName.get('queue')).toBeDefined();
    expect(Object.keys(byName.get('queue-move')?.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['taskId', 'before']));
    const moved = await tool(3, 'queue-move', { taskId: 'T-2', before: 'T-1' });
    expect(moved.result.isError, moved.result.content[0]?.text).toBeFalsy();
    expect(order()).toEqual(['T-2', 'T-1', 'T-3']);
    const listed = await tool(4, 'queue', {});
    expect((JSON.parse(listed.result.content[0]?.text ?? '') as QueueView).items.map((i) => i.taskId)).toEqual(['T-2', 'T-1', 'T-3']);
  });
});
