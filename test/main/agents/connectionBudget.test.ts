/**
 * Issue 29, finding 3: the agents' socket let any connection hold a descriptor and up to 1 MiB of an
 * unfinished line for as long as it liked, before any authentication. The budget, on a real socket with
 * small limits: a deadline and a byte budget until the first authenticated call, a waiting pool whose
 * oldest member goes first, and a share per agent.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Agent } from '../../../src-main/agents/agent.js';
import { AgentRegistry } from '../../../src-main/agents/agentRegistry.js';
import { AgentSocket, socketPathFor } from '../../../src-main/agents/agentSocket.js';
import { ConnectionLimits, type Limits } from '../../../src-main/agents/connectionBudget.js';
import { runtimeDir } from '../../../src-main/agents/runtimeDir.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { type BoardService } from '../../../src-main/board/boardService.js';

let root: string;
let board: BoardService;
let registry: AgentRegistry;
let agent: Agent;
let socket: AgentSocket | undefined;

beforeEach(async () => {
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-budget-'));
  board = await JournalBoard.open({ dir: join(root, 'board'), threadId: 'budget' });
  registry = new AgentRegistry();
  agent = registry.create('shell', 'A', 0);
  agent.started(process.pid);
});
afterEach(async () => {
  await socket?.close();
  socket = undefined;
  await board.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const listen = async (limits: Partial<Limits>) => (socket = await AgentSocket.listen(socketPathFor(runtimeDir(join(root, 'run')), 'budget'), registry, board, {}, undefined, { limits: { ...ConnectionLimits, ...limits } }));

/** A raw connection: what the host sent on it, and a promise of its close. */
function connect(path: string): Promise<{ c: net.Socket; got: () => string; closed: Promise<void>; lines: () => unknown[] }> {
  return new Promise((resolve, reject) => {
    const c = net.createConnection(path);
    let got = '';
    c.setEncoding('utf8');
    c.on('data', (d: string) => (got += d));
    const closed = new Promise<void>((r) => c.on('close', () => r()));
    c.on('error', () => undefined);
    c.once('connect', () => resolve({ c, got: () => got, closed, lines: () => got.split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown) }));
    c.once('error', reject);
  });
}

const call = (id: number, secret: string, params = '{}') => `{"jsonrpc":"2.0","id":${id},"method":"board","auth":"${secret}","params":${params}}\n`;

describe('the agents’ socket’s connection budget', () => {
  it('a connection that does not authenticate within the deadline is closed, with the reason; one that did stays', async () => {
    const s = await listen({ unauthenticatedDeadlineMs: 300 });
    const idle = await connect(s.path);
    const authed = await connect(s.path);
    authed.c.write(call(1, agent.secret));
    await idle.closed;
    expect(idle.lines()).toEqual([{ jsonrpc: '2.0', id: null, error: { code: expect.any(Number), message: 'no authenticated request within 300 ms of connecting', data: { reason: 'connection-limit' } } }]);
    // Past the deadline, the authenticated connection is still served.
    authed.c.write(call(2, agent.secret));
    await expect.poll(() => authed.lines().length).toBe(2);
    expect(authed.c.destroyed).toBe(false);
    authed.c.destroy();
  });

  it('before authenticating a connection may send only a small request; after, a full frame', async () => {
    const s = await listen({ unauthenticatedBytes: 4096 });
    const early = await connect(s.path);
    early.c.write(`{"jsonrpc":"2.0","id":1,"method":"board","params":{"x":"${'y'.repeat(8192)}`);
    await early.closed;
    expect(early.lines()).toEqual([{ jsonrpc: '2.0', id: null, error: { code: expect.any(Number), message: 'more than 4096 bytes before an authenticated request' } }]);
    const late = await connect(s.path);
    late.c.write(call(1, agent.secret));
    await expect.poll(() => late.lines().length).toBe(1);
    // 500 KiB after authenticating: read whole and answered (board takes no params: an invalid-params error).
    late.c.write(call(2, agent.secret, `{"x":"${'y'.repeat(500 * 1024)}"}`));
    await expect.poll(() => late.lines().length, { timeout: 5_000 }).toBe(2);
    expect(late.lines()[1]).toMatchObject({ id: 2, error: { code: -32602 } });
    late.c.destroy();
  });

  it('the waiting pool is full: the oldest waiting connection goes, and the newcomer is served', async () => {
    const s = await listen({ maxUnauthenticated: 4 });
    const waiting = [];
    for (let i = 0; i < 4; i++) waiting.push(await connect(s.path));
    await expect.poll(() => s.budget.counts.waiting).toBe(4);
    const newcomer = await connect(s.path);
    await waiting[0]!.closed;
    expect(waiting[0]!.lines()).toMatchObject([{ error: { message: 'too many connections waiting to authenticate (4); the oldest goes first' } }]);
    newcomer.c.write(call(1, agent.secret));
    await expect.poll(() => newcomer.lines().length).toBe(1);
    expect(newcomer.lines()[0]).toHaveProperty('result');
    for (const w of [...waiting, newcomer]) w.c.destroy();
  });

  it('one agent holds at most its share of connections; the socket at most its total', async () => {
    const s = await listen({ maxPerAgent: 2, maxConnections: 4 });
    const mine = [];
    for (let i = 0; i < 3; i++) {
      const m = await connect(s.path);
      m.c.write(call(1, agent.secret));
      await expect.poll(() => m.lines().length).toBe(1);
      mine.push(m);
    }
    expect(mine[0]!.lines()[0]).toHaveProperty('result');
    expect(mine[1]!.lines()[0]).toHaveProperty('result');
    expect(mine[2]!.lines()[0]).toMatchObject({ error: { message: 'A holds 2 connections already (or this connection is another agent’s)'.replace('’', "'"), data: { reason: 'connection-limit' } } });
    await mine[2]!.closed;
    // Two held by A, two more waiting: the fifth is refused at the door.
    const others = [await connect(s.path), await connect(s.path)];
    const fifth = await connect(s.path);
    await fifth.closed;
    expect(fifth.lines()).toMatchObject([{ error: { message: "the agents' socket holds 4 connections already" } }]);
    for (const c of [...mine, ...others]) c.c.destroy();
  });
});
