import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RpcClient, RpcFailure, Unreachable } from '../../../src-main/cli/rpcClient.js';
import { LineSplitter, type RpcRequest } from '../../../src-shared/protocol/jsonrpc.js';

/**
 * The CLI's client on a real Unix socket, against a board stand-in that answers when and how the test says:
 * answers out of order, a connection closed with calls waiting, an error tied to no request, a call never
 * answered. (The request table under it is the one the pty host link and the page use.)
 */
let root: string;
let server: net.Server;
let path: string;
/** Requests as the stand-in read them, and the connection to answer them on. */
let heard: RpcRequest[];
let conn: net.Socket | null;
let arrived: (() => void) | null;

beforeEach(async () => {
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-rpcclient-'));
  path = join(root, 'board.sock');
  heard = [];
  conn = null;
  arrived = null;
  server = net.createServer((c) => {
    conn = c;
    const lines = new LineSplitter();
    c.setEncoding('utf8');
    c.on('data', (d: string) => {
      for (const line of lines.push(d)) heard.push(JSON.parse(line) as RpcRequest);
      arrived?.();
    });
    c.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
});
afterEach(async () => {
  conn?.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  fs.rmSync(root, { recursive: true, force: true });
});

/** Resolves once the stand-in has read `n` requests. */
function requestsRead(n: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (heard.length >= n) resolve();
    };
    arrived = check;
    check();
  });
}

const answer = (id: unknown, result: unknown) => conn?.write(`${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`);

describe("the CLI's RPC client, on the shared request table", () => {
  it('answers out of order reach their own calls; the secret rides outside the params', async () => {
    const client = await RpcClient.connect(path, 'the-secret');
    const calls = [client.call('show', { taskId: 'T-1' }), client.call('show', { taskId: 'T-2' }), client.call('show', { taskId: 'T-3' })];
    await requestsRead(3);
    expect(heard.map((r) => r.params)).toEqual([{ taskId: 'T-1' }, { taskId: 'T-2' }, { taskId: 'T-3' }]);
    expect(heard.every((r) => r.auth === 'the-secret' && r.jsonrpc === '2.0')).toBe(true);
    for (const r of [...heard].reverse()) answer(r.id, { id: r.params?.taskId });
    expect(await Promise.all(calls)).toEqual([{ id: 'T-1' }, { id: 'T-2' }, { id: 'T-3' }]);
    client.close();
  });

  it('a refusal fails its own call as an RpcFailure and leaves the others waiting', async () => {
    const client = await RpcClient.connect(path, 's');
    const refused = client.call('renew', { taskId: 'T-1', token: 1 });
    const other = client.call('board', {});
    await requestsRead(2);
    conn?.write(`${JSON.stringify({ jsonrpc: '2.0', id: heard[0]?.id, error: { code: -32000, message: 'not yours', data: { reason: 'not-holder' } } })}\n`);
    const e = await refused.catch((err: unknown) => err);
    expect(e).toBeInstanceOf(RpcFailure);
    expect((e as RpcFailure).error.data).toEqual({ reason: 'not-holder' });
    answer(heard[1]?.id, { goal: 'g' });
    expect(await other).toEqual({ goal: 'g' });
    client.close();
  });

  it('the board closing the connection fails every call still waiting as Unreachable', async () => {
    const client = await RpcClient.connect(path, 's');
    const calls = [client.call('board', {}), client.call('show', { taskId: 'T-1' })];
    await requestsRead(2);
    conn?.destroy();
    for (const c of calls) {
      const e = await c.catch((err: unknown) => err);
      expect(e).toBeInstanceOf(Unreachable);
      expect((e as Error).message).toBe('the board closed the connection');
    }
    client.close();
  });

  it('an error tied to no request (an oversized frame) fails every call waiting', async () => {
    const client = await RpcClient.connect(path, 's');
    const calls = [client.call('board', {}), client.call('board', {})];
    await requestsRead(2);
    conn?.write(`${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'frame larger than 1048576 bytes' } })}\n`);
    for (const c of calls) await expect(c).rejects.toThrow('frame larger than 1048576 bytes');
    client.close();
  });

  it('a call left unanswered fails at its bound, naming the method; a late answer then changes nothing', async () => {
    const client = await RpcClient.connect(path, 's', 5000, 150);
    const call = client.call('claim', {});
    await requestsRead(1);
    const e = await call.catch((err: unknown) => err);
    expect(e).toBeInstanceOf(Unreachable);
    expect((e as Error).message).toBe(`the board at ${path} did not answer claim within 150 ms`);
    answer(heard[0]?.id, { taskId: 'T-1' });
    // The connection goes on: the next call is answered as usual.
    const next = client.call('board', {});
    await requestsRead(2);
    answer(heard[1]?.id, { goal: 'after' });
    expect(await next).toEqual({ goal: 'after' });
    client.close();
  });
});
