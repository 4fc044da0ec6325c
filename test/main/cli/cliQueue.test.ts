import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Agent } from '../../../src-main/agents/agent.js';
import { AgentRegistry } from '../../../src-main/agents/agentRegistry.js';
import { AgentSocket } from '../../../src-main/agents/agentSocket.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import type { BoardService } from '../../../src-main/board/boardService.js';
import type { QueueView } from '../../../src-shared/board/mergeQueue.js';
import { CLI, ensureBuilt } from '../../helpers/cli.js';

/**
 * Issue 34, item 4, at the CLI and MCP: the real `forkbench` (and its MCP server) against a real board host's
 * socket and journal, with three approved tasks in the merge queue (no runner here, so they stay queued).
 * `forkbench queue` lists them first to land first; `forkbench queue move T-3 --before T-1` reorders; an agent
 * may move only its own work; `forkbench why` says where a queued task waits; MCP has the same two tools.
 */
let root: string;
let board: BoardService;
let registry: AgentRegistry;
let a: Agent;
let b: Agent;
let socket: AgentSocket;
const children: ChildProcess[] = [];

beforeEach(async () => {
  ensureBuilt();
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-queue-'));
  fs.mkdirSync(join(root, 'run'), { mode: 0o700 });
  board = await JournalBoard.open({ dir: join(root, 'board'), threadId: 'queue' });
  registry = new AgentRegistry();
  a = registry.create('shell', 'A', 0);
  a.started(process.pid);
  b = registry.create('shell', 'B', 1);
  b.started(process.pid);
  socket = await AgentSocket.listen(join(root, 'run', 'host.sock'), registry, board);
});
afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  await socket.close();
  await board.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const envOf = (agent: Agent) => ({ PATH: process.env.PATH, FORKBENCH_SOCKET: join(root, 'run', 'host.sock'), FORKBENCH_SECRET: agent.secret, FORKBENCH_AGENT_ID: agent.id });

function runCli(args: string[], agent: Agent = a) {
  const proc = spawn(process.execPath, [CLI, ...args], { env: envOf(agent), stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(proc);
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => (stdout += d));
  proc.stderr.on('data', (d) => (stderr += d));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => proc.on('exit', (code) => resolve({ code, stdout, stderr })));
}

/** A command that must succeed: its stdout. */
async function ok(args: string[], agent: Agent = a): Promise<string> {
  const r = await runCli(args, agent);
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

/** A command the board must refuse (exit 3): its stderr. */
async function refused(args: string[], agent: Agent = a): Promise<string> {
  const r = await runCli(args, agent);
  expect(r.code, `${args.join(' ')} should be refused; it printed ${r.stdout}`).toBe(3);
  return r.stderr;
}

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
    const mcp = spawn(process.execPath, [CLI, 'mcp'], { env: envOf(a), stdio: ['pipe', 'pipe', 'pipe'] });
    children.push(mcp);
    let out = '';
    const waiting = new Map<number, (v: unknown) => void>();
    mcp.stdout.on('data', (d) => {
      out += d;
      for (let nl = out.indexOf('\n'); nl !== -1; nl = out.indexOf('\n')) {
        const msg = JSON.parse(out.slice(0, nl)) as { id?: number };
        out = out.slice(nl + 1);
        if (typeof msg.id === 'number') waiting.get(msg.id)?.(msg);
      }
    });
    const request = (id: number, method: string, params: object) =>
      new Promise<unknown>((resolve) => {
        waiting.set(id, resolve);
        mcp.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      });
    type ToolAnswer = { result: { isError?: boolean; content: Array<{ text: string }> } };
    const tool = async (id: number, name: string, args: object) => (await request(id, 'tools/call', { name, arguments: args })) as ToolAnswer;
    await request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } });
    mcp.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    const tools = (await request(2, 'tools/list', {})) as { result: { tools: Array<{ name: string; inputSchema: { properties: Record<string, unknown> } }> } };
    const byName = new Map(tools.result.tools.map((t) => [t.name, t]));
    expect(byName.get('queue')).toBeDefined();
    expect(Object.keys(byName.get('queue-move')?.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['taskId', 'before']));
    const moved = await tool(3, 'queue-move', { taskId: 'T-2', before: 'T-1' });
    expect(moved.result.isError, moved.result.content[0]?.text).toBeFalsy();
    expect(order()).toEqual(['T-2', 'T-1', 'T-3']);
    const listed = await tool(4, 'queue', {});
    expect((JSON.parse(listed.result.content[0]?.text ?? '') as QueueView).items.map((i) => i.taskId)).toEqual(['T-2', 'T-1', 'T-3']);
  });
});
