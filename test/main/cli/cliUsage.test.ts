import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Agent } from '../../../src-main/agents/agent.js';
import { AgentRegistry } from '../../../src-main/agents/agentRegistry.js';
import { AgentSocket } from '../../../src-main/agents/agentSocket.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import type { UsageReportView } from '../../../src-shared/protocol/agentMethods.js';
import { Exit } from '../../../src-shared/protocol/cliWords.js';
import { CLI, ensureBuilt } from '../../helpers/cli.js';

/**
 * Issue 47: `forkbench usage`, a script's or custom agent's report of a turn, through the real CLI, the host's
 * socket and the MCP tool (one table entry): counted to the claim the agent holds, else as its overhead; a
 * turn id counted once; bad numbers refused before anything is sent; an agent whose CLI's own records are read
 * refused, so nothing is counted twice.
 */
let root: string;
let board: JournalBoard;
let socket: AgentSocket;
let shell: Agent;
let claude: Agent;

beforeEach(async () => {
  ensureBuilt();
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-usage-'));
  fs.mkdirSync(join(root, 'run'), { mode: 0o700 });
  board = await JournalBoard.open({ dir: join(root, 'board'), threadId: 'usage' });
  const registry = new AgentRegistry();
  shell = registry.create('shell', 'S', 0);
  shell.started(process.pid);
  claude = registry.create('claude', 'C', 0);
  claude.started(process.pid);
  socket = await AgentSocket.listen(join(root, 'run', 'host.sock'), registry, board);
});
afterEach(async () => {
  await socket.close();
  await board.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const envOf = (a: Agent) => ({ PATH: process.env.PATH ?? '', FORKBENCH_SOCKET: join(root, 'run', 'host.sock'), FORKBENCH_SECRET: a.secret, FORKBENCH_AGENT_ID: a.id });

function cli(args: string[], a: Agent = shell) {
  const proc = spawn(process.execPath, [CLI, ...args], { env: envOf(a), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => (stdout += d));
  proc.stderr.on('data', (d) => (stderr += d));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => proc.on('exit', (code) => resolve({ code, stdout, stderr })));
}

const usageEvents = async () => (await board.log()).filter((e): e is Extract<BoardEvent, { kind: 'usage' }> => e.kind === 'usage');

describe('forkbench usage', () => {
  it("counts a report to the task the agent holds, with every kind and the CLI's own cost, and as overhead when it holds none", async () => {
    await board.run((e) => e.addTask({ title: 'parser' }));
    const idle = await cli(['usage', '--input', '7', '--output', '3']);
    expect(idle.code, idle.stderr).toBe(Exit.ok);
    expect(idle.stdout).toMatch(/^Recorded 10 tokens \(turn report-[0-9a-f-]{36}\) as your own overhead: you held no claim\.\n$/);
    expect((await board.run((e) => e.claim(shell.id, 'T-1'))).ok).toBe(true);
    const r = await cli(['usage', '--input', '1200', '--output', '340', '--cache-read', '5000', '--cache-write', '60', '--reasoning', '17', '--model', 'gpt-x', '--cost', '0.0125', '--id', 'step-1', '--json']);
    expect(r.code, r.stderr).toBe(Exit.ok);
    const view = (JSON.parse(r.stdout) as { result: UsageReportView }).result;
    expect(view).toEqual({ id: 'step-1', recorded: true, tokens: 6600, taskId: 'T-1', token: 1, how: 'held' });
    const ev = await usageEvents();
    expect(ev.map((e) => [e.taskId, e.source, e.profile, e.how])).toEqual([
      [null, 'report', 'shell', 'overhead'],
      ['T-1', 'report', 'shell', 'held'],
    ]);
    expect(ev[1]?.turns).toEqual([{ id: 'step-1', cliAt: null, model: 'gpt-x', tokens: { input: 1200, output: 340, cacheRead: 5000, cacheWrite: 60, reasoning: 17 }, usd: 0.0125 }]);
    // Reporting renews nothing: the claim's deadline is where the grant put it.
    const grant = (await board.log()).find((e) => e.kind === 'grant') as Extract<BoardEvent, { kind: 'grant' }>;
    expect(board.state.tasks.get('T-1')?.claim?.deadline).toBe(grant.deadline);
  });

  it('counts one id once: the same report sent again is said to be recorded before', async () => {
    expect((await cli(['usage', '--input', '5', '--output', '1', '--id', 'run-7:step-2'])).code).toBe(Exit.ok);
    const again = await cli(['usage', '--input', '5', '--output', '1', '--id', 'run-7:step-2']);
    expect(again.code, again.stderr).toBe(Exit.ok);
    expect(again.stdout.trim()).toBe('Turn run-7:step-2 was recorded before: not counted again.');
    expect((await usageEvents()).flatMap((e) => e.turns.map((t) => t.id))).toEqual(['run-7:step-2']);
  });

  it.each([
    [['--input=-5', '--output', '1'], /--input takes a whole number of tokens, 0 or more, not '-5'/],
    [['--input', '-5', '--output', '1'], /Option '--input' argument is ambiguous/],
    [['--input', '1.5', '--output', '1'], /--input takes a whole number of tokens, 0 or more, not '1\.5'/],
    [['--input', 'ten', '--output', '1'], /--input takes a whole number of tokens, 0 or more, not 'ten'/],
    [['--input', '99999999999999', '--output', '1'], /--input takes a whole number of tokens/],
    [['--input', '1', '--output', '1', '--cost', '1e3'], /--cost takes US dollars as a plain number, like 0\.0125, not '1e3'/],
    [['--input', '1', '--output', '1', '--id', 'has space'], /turn id is 1 to 200 letters/],
    [['--output', '1'], /input/],
  ])('refuses %j clearly, and records nothing', async (args, message) => {
    const r = await cli(['usage', ...args]);
    expect(r.code).not.toBe(Exit.ok);
    expect(r.stderr).toMatch(message);
    expect(await usageEvents()).toEqual([]);
  });

  it("refuses an agent whose CLI's own records are read, so its turns are never counted twice", async () => {
    const r = await cli(['usage', '--input', '5', '--output', '1'], claude);
    expect(r.code).toBe(Exit.rejected);
    expect(r.stderr).toContain("Claude Code's own records of what it spent are read already; a report would count its turns twice. Nothing was recorded.");
    expect(await usageEvents()).toEqual([]);
  });

  it('the MCP tool reports the same, with numbers as numbers, and refuses a bad one', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env: envOf(shell) });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const r = await client.callTool({ name: 'usage', arguments: { input: 40, output: 2, id: 'mcp-1' } });
      expect(JSON.parse((r.content as Array<{ text: string }>)[0]?.text as string)).toMatchObject({ id: 'mcp-1', recorded: true, tokens: 42, how: 'overhead' });
      const bad = await client.callTool({ name: 'usage', arguments: { input: -1, output: 2 } });
      expect(bad.isError).toBe(true);
      expect(JSON.stringify(bad.content)).toContain('a token count is a whole number, 0 or more');
      // The host holds a turn to its bounds (reportBounds.ts) whatever the client checked: nothing recorded.
      const huge = await client.callTool({ name: 'usage', arguments: { input: 10_000_001, output: 2 } });
      expect(huge.isError).toBe(true);
      expect(JSON.stringify(huge.content)).toContain('a token count is at most 10,000,000 for one turn');
      const dear = await client.callTool({ name: 'usage', arguments: { input: 1, output: 2, cost: 100.01 } });
      expect(dear.isError).toBe(true);
      expect(JSON.stringify(dear.content)).toContain('a cost is at most 100 US dollars for one turn');
      expect((await usageEvents()).flatMap((e) => e.turns.map((t) => t.id))).toEqual(['mcp-1']);
    } finally {
      await client.close();
    }
  });
});
