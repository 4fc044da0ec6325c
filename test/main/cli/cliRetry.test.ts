import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Agent } from '../../../src-main/agents/agent.js';
import { AgentRegistry } from '../../../src-main/agents/agentRegistry.js';
import { AgentSocket } from '../../../src-main/agents/agentSocket.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { type BoardService } from '../../../src-main/board/boardService.js';
import { CLI, ensureBuilt } from '../../helpers/cli.js';
import { mcpClient } from '../../helpers/cliBoard.js';

/**
 * Issue 31, item 4, end to end: the real `forkbench` CLI against a real board host's socket. A write carries
 * an idempotency key (one per command, or `--key K`), and a write whose answer is lost in flight — the host
 * took it, the answer never reached the CLI — is sent again with the same key and lands once. The fault is a
 * real socket between the two: a proxy that forwards the request and then drops the connection (or swallows
 * the answer) instead of relaying the first answer.
 */
let root: string;
let board: BoardService;
let registry: AgentRegistry;
let agent: Agent;
let socket: AgentSocket;
const children: ChildProcess[] = [];
const servers: net.Server[] = [];

beforeEach(async () => {
  ensureBuilt();
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-retry-'));
  fs.mkdirSync(join(root, 'run'), { mode: 0o700 });
  board = await JournalBoard.open({ dir: join(root, 'board'), threadId: 'retry' });
  registry = new AgentRegistry();
  agent = registry.create('shell', 'A', 0);
  agent.started(process.pid);
  socket = await AgentSocket.listen(join(root, 'run', 'host.sock'), registry, board);
});
afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  await socket.close();
  await board.close();
  fs.rmSync(root, { recursive: true, force: true });
});

/**
 * A proxy in front of the host's socket. Its first connection forwards what the CLI sends, and when the
 * host's first answer comes back, `drop` closes the CLI's connection without relaying it (a host that went
 * away after its write) and `swallow` just never relays it (a host that stopped answering). Later
 * connections are relayed both ways, but for `drop-all`, which drops every answer.
 */
async function faultyProxy(mode: 'drop' | 'swallow' | 'drop-all') {
  const path = join(root, 'run', `proxy-${mode}.sock`);
  const seen = { connections: 0, lostAnswers: 0, notesWhenLost: -1 };
  const server = net.createServer((client) => {
    const n = ++seen.connections;
    const host = net.createConnection(join(root, 'run', 'host.sock'));
    client.pipe(host);
    host.on('data', (d) => {
      if (n > 1 && mode !== 'drop-all') return void client.write(d);
      seen.lostAnswers++;
      seen.notesWhenLost = board.state.tasks.get('T-1')?.notes.length ?? -1;
      if (mode !== 'swallow') {
        client.destroy();
        host.destroy();
      }
    });
    const end = () => {
      client.destroy();
      host.destroy();
    };
    client.on('error', end);
    host.on('error', end);
    client.on('close', () => host.destroy());
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(path, r));
  return { path, seen };
}

function runCli(args: string[], env: Record<string, string> = {}) {
  const proc = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH, FORKBENCH_SOCKET: join(root, 'run', 'host.sock'), FORKBENCH_SECRET: agent.secret, FORKBENCH_AGENT_ID: agent.id, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => (stdout += d));
  proc.stderr.on('data', (d) => (stderr += d));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => proc.on('exit', (code) => resolve({ code, stdout, stderr })));
}

async function claimT1(): Promise<number> {
  await board.run((e) => e.addTask({ title: 'the task' }));
  const c = await board.run((e) => e.claim(agent.id, 'T-1'));
  if (!c.ok) throw new Error(c.error.message);
  return c.value.token;
}
const notes = () => board.state.tasks.get('T-1')?.notes.map((n) => n.text) ?? [];

describe('forkbench writes with idempotency keys', () => {
  it('`forkbench add TITLE --key K` run twice makes one task, and the second answer is the first', async () => {
    const first = await runCli(['add', 'only once', '--key', 'K-add-1', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const second = await runCli(['add', 'only once', '--key', 'K-add-1', '--json']);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual(JSON.parse(first.stdout));
    expect([...board.state.tasks.values()].map((t) => t.title)).toEqual(['only once']);
    // Each command without --key is its own write.
    await runCli(['add', 'only once']);
    expect(board.state.tasks.size).toBe(2);
  });

  it('the same key with a different request is refused key-reused; a malformed key is a usage error', async () => {
    expect((await runCli(['add', 'first', '--key', 'K-1'])).code).toBe(0);
    const reused = await runCli(['add', 'second', '--key', 'K-1']);
    expect(reused.code).toBe(3);
    expect(reused.stderr).toContain('refused (key-reused)');
    const bad = await runCli(['add', 'third', '--key', 'has space']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--key takes 1 to 64 letters, digits or . _ : -");
    expect((await runCli(['add', 'third', '--key', 'x'.repeat(65)])).code).toBe(2);
    expect(board.state.tasks.size).toBe(1);
  });

  it('a note whose answer was lost (the connection dropped after the host took it) is sent again with its key and lands once', async () => {
    const token = await claimT1();
    const proxy = await faultyProxy('drop');
    const r = await runCli(['note', 'T-1', 'landed once', '--token', String(token)], { FORKBENCH_SOCKET: proxy.path, FORKBENCH_TIMEOUT_MS: '10000' });
    expect(r.code, r.stderr).toBe(0);
    // The host had taken the note when its answer was lost; the retry was answered, not done again.
    expect(proxy.seen.lostAnswers).toBe(1);
    expect(proxy.seen.notesWhenLost).toBe(1);
    expect(proxy.seen.connections).toBe(2);
    expect(r.stderr).toMatch(/the answer to note was lost \(the board closed the connection\); sending it again with its key [0-9a-f-]{36} \(try 2\)/);
    expect(notes()).toEqual(['landed once']);
  });

  it('a write whose answer never comes is sent again within the timeout, with the same key, and lands once', async () => {
    const token = await claimT1();
    const proxy = await faultyProxy('swallow');
    const started = performance.now();
    const r = await runCli(['note', 'T-1', 'also once', '--token', String(token), '--key', 'K-slow'], { FORKBENCH_SOCKET: proxy.path, FORKBENCH_TIMEOUT_MS: '3000' });
    expect(r.code, r.stderr).toBe(0);
    expect(performance.now() - started).toBeLessThan(3000 + 5000); // its timeout plus a node start, under load
    expect(r.stderr).toContain('did not answer note within 1000 ms); sending it again with its key K-slow (try 2)');
    expect(notes()).toEqual(['also once']);
  });

  it('a write whose every answer is lost is tried three times, then says it may have landed and how to learn its outcome', async () => {
    const token = await claimT1();
    const proxy = await faultyProxy('drop-all');
    const r = await runCli(['note', 'T-1', 'maybe', '--token', String(token), '--key', 'K-lost'], { FORKBENCH_SOCKET: proxy.path, FORKBENCH_TIMEOUT_MS: '10000' });
    expect(r.code).toBe(4);
    expect(proxy.seen.connections).toBe(3);
    expect(r.stderr).toContain('the note may have landed: send it again with --key K-lost to be told its outcome');
    expect(notes()).toEqual(['maybe']);
    // Sent again by hand with its key, straight to the host: told it landed, and it still landed once.
    const again = await runCli(['note', 'T-1', 'maybe', '--token', String(token), '--key', 'K-lost']);
    expect(again.code, again.stderr).toBe(0);
    expect(notes()).toEqual(['maybe']);
  });

  it('an MCP tool call whose answer was lost is sent again with its key and lands once', async () => {
    const token = await claimT1();
    const proxy = await faultyProxy('drop');
    const { tool } = await mcpClient({ PATH: process.env.PATH, FORKBENCH_SOCKET: proxy.path, FORKBENCH_SECRET: agent.secret, FORKBENCH_AGENT_ID: agent.id }, children);
    const r = await tool(2, 'note', { taskId: 'T-1', text: 'mcp once', token });
    expect(r.result.isError, r.result.content[0]?.text).toBeFalsy();
    expect(proxy.seen.notesWhenLost).toBe(1);
    expect(proxy.seen.connections).toBe(2);
    expect(notes()).toEqual(['mcp once']);
  });

  it('a retried done gets its success back after the claim has ended, and a refused stale write stays refused', async () => {
    const token = await claimT1();
    const done = await runCli(['done', 'T-1', '--token', String(token), '--key', 'K-done', '--json']);
    expect(done.code, done.stderr).toBe(0);
    expect((await board.run((e) => e.approve('T-1'))).ok).toBe(true);
    const again = await runCli(['done', 'T-1', '--token', String(token), '--key', 'K-done', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual(JSON.parse(done.stdout));
    expect((await runCli(['done', 'T-1', '--token', String(token)])).code).toBe(3); // without its key: the claim is over

    await board.run((e) => e.addTask({ title: 'second' }));
    // A note under a token the agent does not hold yet is refused; once that token is its own, the same
    // write with the same key is still refused the same way: a refusal never turns into a success.
    const early = await runCli(['note', 'T-2', 'too early', '--token', String(token + 1), '--key', 'K-early']);
    expect(early.code).toBe(3);
    const granted = await board.run((e) => e.claim(agent.id, 'T-2'));
    expect(granted.ok && granted.value.token).toBe(token + 1);
    const retried = await runCli(['note', 'T-2', 'too early', '--token', String(token + 1), '--key', 'K-early']);
    expect(retried.code).toBe(3);
    expect(retried.stderr).toBe(early.stderr);
    expect(board.state.tasks.get('T-2')?.notes).toHaveLength(0);
  });
});
