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
import type { ProfileLeaseView } from '../../../src-shared/board/leaseEvidence.js';
import { CLI, ensureBuilt } from '../../helpers/cli.js';
import { claudeQuietCodexReclaimed, leaseScript } from '../../helpers/leaseScript.js';

/**
 * Issue 34, item 5, for agents and a person in a shell: `forkbench leases` (and its MCP tool, the same
 * table entry) shows each profile's lease, the evidence and the suggestion, from the board the scripted agents
 * made (test/helpers/leaseScript.ts), through the real CLI and the host's socket. It is a read: no agent can
 * set a lease, its own or another's.
 */
let root: string;
let board: JournalBoard;
let socket: AgentSocket;
let agent: Agent;

beforeEach(async () => {
  ensureBuilt();
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-leases-'));
  fs.mkdirSync(join(root, 'run'), { mode: 0o700 });
  const s = await leaseScript(join(root, 'board'));
  await claudeQuietCodexReclaimed(s);
  await s.close();
  board = await JournalBoard.open({ dir: join(root, 'board'), threadId: 'evidence' });
  const registry = new AgentRegistry();
  agent = registry.create('shell', 'A', 0);
  agent.started(process.pid);
  socket = await AgentSocket.listen(join(root, 'run', 'host.sock'), registry, board);
});
afterEach(async () => {
  await socket.close();
  await board.close();
  fs.rmSync(root, { recursive: true, force: true });
});

function cli(args: string[]) {
  const env = { PATH: process.env.PATH, FORKBENCH_SOCKET: join(root, 'run', 'host.sock'), FORKBENCH_SECRET: agent.secret, FORKBENCH_AGENT_ID: agent.id };
  const proc = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => (stdout += d));
  proc.stderr.on('data', (d) => (stderr += d));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => proc.on('exit', (code) => resolve({ code, stdout, stderr })));
}

describe('forkbench leases', () => {
  it("prints each profile's lease, quiet-gap histogram, lapses, reclaims and suggestion", async () => {
    const r = await cli(['leases']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trimEnd()).toBe(
      [
        "Claude Code: lease 120 s (the Thread's)",
        '  quiet gaps: <30 s: 0, <60 s: 3, <90 s: 0, <120 s: 3, <180 s: 0, <300 s: 0, 300 s+: 0',
        '  lapses 0, live claims reclaimed 0',
        "  Claude Code's longest quiet gap in the last 6 claims was 90 s: suggest 150 s",
        "Codex CLI: lease 120 s (the Thread's)",
        '  quiet gaps: <30 s: 0, <60 s: 0, <90 s: 0, <120 s: 0, <180 s: 0, <300 s: 0, 300 s+: 0',
        '  lapses 3, live claims reclaimed 2',
        '  no claim of Codex CLI has ended well yet; 2 live claims were reclaimed at 120 s: suggest 180 s',
      ].join('\n'),
    );
    const json = JSON.parse((await cli(['leases', '--json'])).stdout) as { result: ProfileLeaseView[] };
    expect(json.result.map((v) => [v.profile, v.suggestion?.suggestedMs])).toEqual([
      ['claude', 150_000],
      ['codex', 180_000],
    ]);
  });

  it('the MCP tool answers the same views', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp'],
      env: { PATH: process.env.PATH ?? '', FORKBENCH_SOCKET: join(root, 'run', 'host.sock'), FORKBENCH_SECRET: agent.secret },
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const r = await client.callTool({ name: 'leases', arguments: {} });
      const views = JSON.parse((r.content as Array<{ text: string }>)[0]?.text as string) as ProfileLeaseView[];
      expect(views.map((v) => [v.label, v.lapses, v.reclaimed, v.suggestion?.text])).toEqual([
        ['Claude Code', 0, 0, "Claude Code's longest quiet gap in the last 6 claims was 90 s: suggest 150 s"],
        ['Codex CLI', 3, 2, 'no claim of Codex CLI has ended well yet; 2 live claims were reclaimed at 120 s: suggest 180 s'],
      ]);
      // The tool takes no argument: one sent anyway sets nothing.
      await client.callTool({ name: 'leases', arguments: { leaseMs: 999_999 } });
      expect(board.state.settings.leaseByProfile).toEqual({});
      expect(board.state.settings.leaseMs).toBe(120_000);
    } finally {
      await client.close();
    }
  });

  it('takes no argument that could set a lease: an agent cannot give itself a longer one', async () => {
    const r = await cli(['leases', '--lease', '999999']);
    expect(r.code).not.toBe(0);
    expect(board.state.settings.leaseByProfile).toEqual({});
  });
});
