import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { AGENT_METHODS, AgentEnv, type AgentMethod } from '../../src-shared/protocol/agentMethods.js';
import { paramShape } from '../../src-shared/protocol/agentSchemas.js';
import { jsonShowControls } from '../../src-shared/text/controlChars.js';
import { formatRefusal, refusalReason } from './format.js';
import { RpcClient, RpcFailure } from './rpcClient.js';

/**
 * `forkbench mcp`: the agents' API as MCP tools over stdio, for agents that speak MCP (Claude Code, Codex,
 * Gemini CLI, OpenCode). Each tool is one entry of the shared method table, with its schema; calls are
 * proxied to the board's socket with this agent's secret, so the board sees exactly what the CLI would send.
 */
export async function runMcpServer(env: NodeJS.ProcessEnv): Promise<McpServer> {
  const socket = env[AgentEnv.socket];
  const secret = env[AgentEnv.secret];
  const server = new McpServer({ name: 'forkbench', version: '0.1.0' });
  let client: RpcClient | null = null;
  const call = async (method: AgentMethod, given: Record<string, unknown>, write: boolean) => {
    if (!socket || !secret) throw new Error(`${AgentEnv.socket} and ${AgentEnv.secret} are not set: start this from an agent pane Forkbench launched`);
    // One idempotency key per tool call, the same on its retry: a write whose answer was lost lands once.
    const args = write && given.key === undefined ? { ...given, key: randomUUID() } : given;
    for (let attempt = 0; ; attempt++) {
      try {
        client ??= await RpcClient.reach(socket, secret);
        return await client.call(method, args);
      } catch (err) {
        if (err instanceof RpcFailure || attempt > 0) throw err;
        client?.close();
        client = null; // the connection dropped (host restarted?) or the answer never came: one fresh try
      }
    }
  };
  for (const m of AGENT_METHODS) {
    if (m.git) continue; // a hook's report of what git did, not something to do
    server.registerTool(
      m.name,
      { description: m.summary, inputSchema: paramShape(m.name), annotations: { readOnlyHint: !m.write } },
      async (args: Record<string, unknown>) => {
        try {
          const result = await call(m.name, args, m.write);
          // The agent's CLI may print a tool's result in its terminal: board text from an old journal can
          // hold C1 or bidi controls, which JSON.stringify leaves raw.
          return { content: [{ type: 'text' as const, text: jsonShowControls(JSON.stringify(result, null, 2)) }] };
        } catch (err) {
          const reason = err instanceof RpcFailure ? refusalReason(err) : 'unreachable';
          return { isError: true, content: [{ type: 'text' as const, text: formatRefusal(reason, (err as Error).message) }] };
        }
      },
    );
  }
  await server.connect(new StdioServerTransport());
  return server;
}
