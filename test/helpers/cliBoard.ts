import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Agent } from '../../src-main/agents/agent.js';
import { AgentRegistry } from '../../src-main/agents/agentRegistry.js';
import { AgentSocket } from '../../src-main/agents/agentSocket.js';
import { JournalBoard } from '../../src-main/board/journalBoard.js';
import type { BoardService } from '../../src-main/board/boardService.js';
import { CLI, ensureBuilt } from './cli.js';

/** An MCP tool as the server lists it. */
export type McpTool = { name: string; inputSchema: { properties: Record<string, unknown> } };

/** An MCP tool's answer as the server sends it. */
export type ToolAnswer = { result: { isError?: boolean; content: Array<{ text: string }> } };

/**
 * The real `forkbench` CLI (and its MCP server) against a real board host's socket and journal, with two
 * agents A and B on it: the set-up of the CLI's end-to-end tests. `close` ends every process it started.
 */
export class CliBoard {
  private readonly children: ChildProcess[] = [];

  private constructor(
    readonly root: string,
    readonly board: BoardService,
    readonly a: Agent,
    readonly b: Agent,
    private readonly socket: AgentSocket,
  ) {}

  static async open(threadId: string): Promise<CliBoard> {
    ensureBuilt();
    const root = fs.mkdtempSync(join(tmpdir(), `forkbench-${threadId}-`));
    fs.mkdirSync(join(root, 'run'), { mode: 0o700 });
    const board = await JournalBoard.open({ dir: join(root, 'board'), threadId });
    const registry = new AgentRegistry();
    const a = registry.create('shell', 'A', 0);
    a.started(process.pid);
    const b = registry.create('shell', 'B', 1);
    b.started(process.pid);
    const socket = await AgentSocket.listen(join(root, 'run', 'host.sock'), registry, board);
    return new CliBoard(root, board, a, b, socket);
  }

  envOf(agent: Agent): NodeJS.ProcessEnv {
    return { PATH: process.env.PATH, FORKBENCH_SOCKET: join(this.root, 'run', 'host.sock'), FORKBENCH_SECRET: agent.secret, FORKBENCH_AGENT_ID: agent.id };
  }

  run(args: string[], agent: Agent = this.a): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const proc = spawn(process.execPath, [CLI, ...args], { env: this.envOf(agent), stdio: ['ignore', 'pipe', 'pipe'] });
    this.children.push(proc);
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => (stdout += d));
    proc.stderr.on('data', (d) => (stderr += d));
    return new Promise((resolve) => proc.on('exit', (code) => resolve({ code, stdout, stderr })));
  }

  /** A command that must succeed: its stdout. */
  async ok(args: string[], agent: Agent = this.a): Promise<string> {
    const r = await this.run(args, agent);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r.stdout;
  }

  /** A command the board must refuse (exit 3): its stderr. */
  async refused(args: string[], agent: Agent = this.a): Promise<string> {
    const r = await this.run(args, agent);
    expect(r.code, `${args.join(' ')} should be refused; it printed ${r.stdout}`).toBe(3);
    return r.stderr;
  }

  /** `forkbench mcp` as `agent`, initialized (requests 1 and 2): its tools by name, and a tool call. */
  async mcp(agent: Agent = this.a): Promise<{ byName: Map<string, McpTool>; tool(id: number, name: string, args: object): Promise<ToolAnswer> }> {
    const { request, tool } = await mcpClient(this.envOf(agent), this.children);
    const tools = (await request(2, 'tools/list', {})) as { result: { tools: McpTool[] } };
    return { byName: new Map(tools.result.tools.map((t) => [t.name, t])), tool };
  }

  async close(): Promise<void> {
    for (const c of this.children.splice(0)) c.kill('SIGKILL');
    await this.socket.close();
    await this.board.close();
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * `forkbench mcp` with `env` (an agent's socket, secret and id), initialized (request 1): JSON-RPC requests to
 * it and tool calls, each answered by id. The process is added to `children` for the caller to end.
 */
export async function mcpClient(env: NodeJS.ProcessEnv, children: ChildProcess[]) {
  const mcp = spawn(process.execPath, [CLI, 'mcp'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
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
  const tool = async (id: number, name: string, args: object) => (await request(id, 'tools/call', { name, arguments: args })) as ToolAnswer;
  await request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } });
  mcp.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  return { request, tool };
}
