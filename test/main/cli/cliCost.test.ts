import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Agent } from '../../../src-main/agents/agent.js';
import type { BoardService } from '../../../src-main/board/boardService.js';
import { ok as okResult } from '../../../src-shared/board/result.js';
import type { QueueView } from '../../../src-shared/board/mergeQueue.js';
import type { TaskCostView, ThreadCostView } from '../../../src-shared/usage/costView.js';
import { CliBoard } from '../../helpers/cliBoard.js';
import { turn, usageEvent, type UsageOf } from '../../helpers/usageEvents.js';

/**
 * Issue 47, items 2 and 4, at the CLI and MCP: the real `forkbench` (and its MCP server) against a real board
 * host's socket and journal. Usage events (as helper B's recordUsage decides them) go onto the board through the
 * engine; `forkbench cost T-1 --json` gives the task's tokens by kind, money and the same per agent, exactly;
 * `forkbench cost --json` the Thread's per task, agent, profile and day; `--csv` the same as CSV; the MCP tool
 * the same answer; the merge queue's entry carries what landing the task cost.
 */
let fx: CliBoard;
let board: BoardService;
let a: Agent;
let b: Agent;
beforeEach(async () => {
  fx = await CliBoard.open('cost');
  ({ board, a, b } = fx);
});
afterEach(() => fx.close());

const spend = (u: Omit<UsageOf, 'at'>) =>
  board.run((e) => {
    usageEvent(e, { ...u, at: board.clock.wall() });
    return okResult(null);
  });

/** T-1 claimed by A, who spends two turns on it (priced by the table) and one on nothing; B, one on T-1 with
 *  its CLI's own money, counted as the task it last acted on. */
async function spentOnT1(): Promise<void> {
  await board.run((e) => e.addTask({ title: '=SUM(A1), "quoted"' }));
  await board.run((e) => e.addTask({ title: 'nothing spent' }));
  await fx.ok(['claim', 'T-1']);
  await spend({ agentId: a.id, profile: 'claude', taskId: 'T-1', turns: [turn('m1', { input: 1000, output: 200 }), turn('m2', { input: 10, output: 5, cacheRead: 50_000, cacheWrite: 3000 })] });
  await spend({ agentId: b.id, profile: 'codex', taskId: 'T-1', how: 'last-acted', turns: [turn('r1', { input: 500, output: 100, reasoning: 40 }, { model: 'gpt-5-codex', usd: 0.25 })] });
  await spend({ agentId: a.id, profile: 'claude', taskId: null, turns: [turn('m3', { input: 100, output: 100 })] });
}

describe('forkbench cost', () => {
  it('gives a task’s tokens by kind, money, claims and the same per agent, exactly, as JSON and for a person', async () => {
    await spentOnT1();
    const { result } = JSON.parse(await fx.ok(['cost', 'T-1', '--json'])) as { result: { task: TaskCostView } };
    expect(result.task).toMatchObject({
      taskId: 'T-1',
      state: 'claimed',
      tokens: { input: 1510, output: 305, cacheRead: 50_000, cacheWrite: 3000, reasoning: 40 },
      // A: (1010 × $3 + 205 × $15 + 50,000 × $0.30 + 3000 × $3.75) per million = $0.032355; B: $0.25, its CLI's.
      usd: 0.282355,
      unpriced: 0,
      turns: 3,
      claims: 1,
      lapses: 0,
      commits: 0,
      budget: null,
    });
    expect(result.task.byAgent).toEqual([
      { agentId: b.id, tokens: { input: 500, output: 100, cacheRead: 0, cacheWrite: 0, reasoning: 40 }, usd: 0.25, unpriced: 0, turns: 1, lastActed: 1 },
      { agentId: a.id, tokens: { input: 1010, output: 205, cacheRead: 50_000, cacheWrite: 3000, reasoning: 0 }, usd: 0.032355, unpriced: 0, turns: 2, lastActed: 0 },
    ]);
    expect(result.task.spend).toHaveLength(2);
    const text = await fx.ok(['cost', 't-1']);
    expect(text).toContain('spent: $0.282, 54,815 tokens (in 1,510 · out 305 · cache read 50,000 · cache write 3,000 · reasoning 40), 3 turns');
    expect(text).toContain('claims: 1, lapses 0, commits 0');
    expect(text).toContain(`  ${b.id}: $0.250, 600 tokens`);
    expect(text).toContain('(1 as the task it last acted on)');
    expect(await fx.refused(['cost', 'T-9'])).toContain('no task T-9');
  });

  it('without an id gives the Thread: per task (dearest first), per agent with its overhead, per profile and per day', async () => {
    await spentOnT1();
    const { result } = JSON.parse(await fx.ok(['cost', '--json'])) as { result: { thread: ThreadCostView } };
    const v = result.thread;
    expect(v.thread).toMatchObject({ usd: 0.284155, turns: 4, unpriced: 0 });
    expect(v.today).toEqual(v.thread);
    expect(v.week).toEqual(v.thread);
    expect(v.tasks.map((t) => [t.key, t.usd])).toEqual([['T-1', 0.282355]]);
    expect(v.agents.map((x) => [x.key, x.label, x.turns, x.overhead.turns])).toEqual([
      [b.id, 'codex', 1, 0],
      [a.id, 'claude', 3, 1],
    ]);
    expect(v.profiles.map((p) => [p.key, p.usd])).toEqual([
      ['codex', 0.25],
      ['claude', 0.034155],
    ]);
    expect(v.days.map((d) => d.key)).toEqual([new Date(board.clock.wall()).toISOString().slice(0, 10)]);
    expect(v.pricesOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('--csv gives every row as CSV, a title that would run as a spreadsheet formula made text', async () => {
    await spentOnT1();
    const csv = (await fx.ok(['cost', '--csv'])).trimEnd().split('\n');
    expect(csv[0]).toBe('scope,id,label,input,output,cache_read,cache_write,reasoning,usd,unpriced_turns,turns');
    expect(csv[1]).toBe('thread,,,1610,405,50000,3000,40,0.284155,0,4');
    expect(csv[2]).toBe(`task,T-1,"'=SUM(A1), ""quoted""",1510,305,50000,3000,40,0.282355,0,3`);
    expect(csv).toContain(`agent-overhead,${a.id},claude,100,100,0,0,0,0.0018,0,1`);
    expect(csv.filter((l) => l.startsWith('day,'))).toHaveLength(1);
    const one = (await fx.ok(['cost', 'T-1', '--csv'])).trimEnd().split('\n');
    expect(one.slice(1)).toEqual([
      `task,T-1,"'=SUM(A1), ""quoted""",1510,305,50000,3000,40,0.282355,0,3`,
      `task-agent,${b.id},T-1,500,100,0,0,40,0.25,0,1`,
      `task-agent,${a.id},T-1,1010,205,50000,3000,0,0.032355,0,2`,
    ]);
  });

  it('MCP has the same read as a tool, and the merge queue entry carries what landing the task cost', async () => {
    await spentOnT1();
    const mcp = await fx.mcp();
    expect(mcp.byName.get('cost')?.inputSchema.properties).toHaveProperty('taskId');
    const answer = await mcp.tool(3, 'cost', { taskId: 'T-1' });
    expect(answer.result.isError).toBeFalsy();
    const viaCli = JSON.parse(await fx.ok(['cost', 'T-1', '--json'])) as { result: { task: TaskCostView } };
    const viaMcp = JSON.parse(answer.result.content[0]!.text) as { task: TaskCostView };
    expect({ ...viaMcp.task, wallMs: 0 }).toEqual({ ...viaCli.result.task, wallMs: 0 });

    await board.run((e) => e.done(a.id, 'T-1'));
    await board.run((e) => e.enqueue('T-1'));
    const q = JSON.parse(await fx.ok(['queue', '--json'])) as { result: QueueView };
    expect(q.result.items[0]).toMatchObject({ taskId: 'T-1', cost: { usd: 0.282355, turns: 3, tokens: { input: 1510 } } });
  });
});
