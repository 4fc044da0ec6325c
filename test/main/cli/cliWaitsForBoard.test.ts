import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Agent } from '../../../src-main/agents/agent.js';
import { AgentRegistry } from '../../../src-main/agents/agentRegistry.js';
import { AgentSocket } from '../../../src-main/agents/agentSocket.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { type BoardService } from '../../../src-main/board/boardService.js';
import { CLI, ensureBuilt } from '../../helpers/cli.js';

/**
 * Issue 18: an agent's board call made while the board host is down (restarting) waits for it, for a
 * bounded time, instead of failing at once. Down means nobody listens: the socket is missing, or left behind
 * by a host killed -9 (it refuses). Each case runs the real CLI against a real board socket that comes up late.
 */
let root: string;
let board: BoardService;
let registry: AgentRegistry;
let agent: Agent;
let socket: AgentSocket | null = null;
const children: ChildProcess[] = [];

beforeEach(async () => {
  ensureBuilt();
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-wait-'));
  fs.mkdirSync(join(root, 'run'), { mode: 0o700 });
  board = await JournalBoard.open({ dir: join(root, 'board'), threadId: 'wait' });
  await board.run((e) => e.addTask({ title: 'waited for' }));
  registry = new AgentRegistry();
  agent = registry.create('shell', 'A', 0);
  agent.started(process.pid);
});
afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  await socket?.close();
  socket = null;
  await board.close();
  fs.rmSync(root, { recursive: true, force: true });
});

function runCli(path: string, args: string[], env: Record<string, string> = {}) {
  const proc = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH, FORKBENCH_SOCKET: path, FORKBENCH_SECRET: agent.secret, FORKBENCH_AGENT_ID: agent.id, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => (stdout += d));
  const waiting = new Promise<void>((resolve) =>
    proc.stderr.on('data', (d) => {
      stderr += d;
      if (stderr.includes('waiting up to')) resolve();
    }),
  );
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => proc.on('exit', (code) => resolve({ code, stdout, stderr })));
  return { waiting, done };
}

/** A socket file left behind by a listener killed -9: connecting to it is refused. */
async function staleSocket(path: string): Promise<void> {
  const child = spawn(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  await new Promise<void>((resolve) => child.stdout?.once('data', () => resolve()));
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  expect(fs.existsSync(path)).toBe(true);
}

describe('a board call while the board host is down', () => {
  it('waits for a board whose socket is not there yet, says so, and succeeds once it is up', async () => {
    const path = join(root, 'run', 'late.sock');
    const cli = runCli(path, ['board', '--json']);
    await cli.waiting;
    socket = await AgentSocket.listen(path, registry, board);
    const r = await cli.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`the board at ${path} is not answering (ENOENT)`);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, result: { tasks: [expect.objectContaining({ id: 'T-1', title: 'waited for' })] } });
  });

  it('waits out a socket left by a host killed -9 (refused), and a claim made then lands once', async () => {
    const path = join(root, 'run', 'stale.sock');
    await staleSocket(path);
    const cli = runCli(path, ['claim', 'T-1', '--json']);
    await cli.waiting;
    socket = await AgentSocket.listen(path, registry, board);
    const r = await cli.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('(ECONNREFUSED)');
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, result: { taskId: 'T-1', agentId: agent.id, token: 1 } });
    expect(board.state.tasks.get('T-1')?.claim).toMatchObject({ agentId: agent.id, token: 1 });
  });

  it('gives up after the bound with exit 4, saying how long it waited', async () => {
    const path = join(root, 'run', 'never.sock');
    const started = performance.now();
    const r = await runCli(path, ['board'], { FORKBENCH_BOARD_WAIT_MS: '600' }).done;
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/cannot reach the board at .*never\.sock: ENOENT \(waited 0\.[4-9] s for it to come back\)/);
    expect(performance.now() - started).toBeGreaterThanOrEqual(400);
  });

  it('a host that accepts but never answers is stuck, not down: no waiting for it to come back', async () => {
    const path = join(root, 'run', 'mute.sock');
    const mute = spawn(process.execPath, ['-e', `require('node:net').createServer((c) => c.on('data', () => {})).listen(${JSON.stringify(path)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(mute);
    await new Promise<void>((resolve) => mute.stdout?.once('data', () => resolve()));
    const r = await runCli(path, ['board'], { FORKBENCH_TIMEOUT_MS: '500' }).done;
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('did not answer board within 500 ms');
    expect(r.stderr).not.toContain('waiting up to');
  });
});
