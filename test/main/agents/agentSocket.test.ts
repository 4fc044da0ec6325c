import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { type BoardService } from '../../../src-main/board/boardService.js';
import type { Agent } from '../../../src-main/agents/agent.js';
import { AgentRegistry } from '../../../src-main/agents/agentRegistry.js';
import { AgentSocket, socketPathFor } from '../../../src-main/agents/agentSocket.js';
import { runtimeDir } from '../../../src-main/agents/runtimeDir.js';
import { MAX_FRAME_BYTES } from '../../../src-shared/protocol/jsonrpc.js';
import { CLI, ensureBuilt } from '../../helpers/cli.js';

let root: string;
let board: BoardService;
let registry: AgentRegistry;
let socket: AgentSocket;
let a: Agent;
let b: Agent;

beforeAll(async () => {
  ensureBuilt();
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-sock-'));
  board = await JournalBoard.open({ dir: join(root, 'board'), threadId: 'sock' });
  await board.run((e) => e.addTask({ title: 'first' }));
  await board.run((e) => e.addTask({ title: 'second' }));
  registry = new AgentRegistry();
  a = registry.create('shell', 'A', 0);
  b = registry.create('shell', 'B', 0);
  a.started(process.pid);
  b.started(process.pid);
  const dir = runtimeDir(join(root, 'run'));
  socket = await AgentSocket.listen(socketPathFor(dir, 'sock'), registry, board);
});
afterAll(async () => {
  await socket.close();
  await board.close();
  fs.rmSync(root, { recursive: true, force: true });
});

function cli(agent: Agent | null, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const agentEnv = agent ? { FORKBENCH_SOCKET: socket.path, FORKBENCH_SECRET: agent.secret, FORKBENCH_AGENT_ID: agent.id } : {};
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, ...agentEnv, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** Raw frames on a fresh connection; resolves with every response line until the host closes or goes quiet. */
function raw(frames: string, waitFor: number): Promise<{ lines: unknown[]; closed: boolean }> {
  return new Promise((resolve) => {
    const c = net.createConnection(socket.path);
    const lines: unknown[] = [];
    let buf = '';
    let closed = false;
    const finish = () => {
      c.destroy();
      resolve({ lines, closed });
    };
    c.on('data', (d) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        lines.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
        if (lines.length >= waitFor) finish();
      }
    });
    c.on('close', () => {
      closed = true;
      finish();
    });
    c.on('error', () => undefined);
    c.write(frames);
  });
}

describe('agents’ socket', () => {
  it('lives in an owner-only folder and is itself owner-only', () => {
    expect(fs.statSync(join(root, 'run', 'forkbench')).mode & 0o777).toBe(0o700);
    expect(fs.statSync(socket.path).mode & 0o777).toBe(0o600);
  });

  it('the CLI claims, notes with the fencing token and finishes; a write with an old token is refused', async () => {
    const claim = await cli(a, ['claim', 'T-1', '--json']);
    expect(claim.code).toBe(0);
    const out = JSON.parse(claim.stdout);
    expect(out).toMatchObject({ ok: true, result: { taskId: 'T-1', agentId: a.id } });
    const token = out.result.token as number;
    const note = await cli(a, ['note', 'T-1', 'parser', 'fixed', '--token', String(token)]);
    expect(note.code).toBe(0);
    expect(board.state.tasks.get('T-1')?.notes.at(-1)?.text).toBe('parser fixed');
    const stale = await cli(a, ['renew', 'T-1', '--token', String(token + 5), '--json']);
    expect(stale.code).toBe(3);
    expect(JSON.parse(stale.stdout)).toMatchObject({ ok: false, error: { reason: 'stale-token' } });
    const done = await cli(a, ['done', 'T-1', '--token', String(token), '--note', 'all green']);
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/T-1 is in review/);
    expect(board.state.tasks.get('T-1')?.state).toBe('review');
  });

  it('one agent cannot act as another: B’s secret only ever acts as B', async () => {
    const claim = JSON.parse((await cli(a, ['claim', 'T-2', '--json'])).stdout);
    const asB = await cli(b, ['release', 'T-2', '--token', String(claim.result.token), '--json']);
    expect(asB.code).toBe(3);
    expect(JSON.parse(asB.stdout)).toMatchObject({ ok: false, error: { reason: 'not-holder' } });
    expect(board.state.tasks.get('T-2')?.claim?.agentId).toBe(a.id);
  });

  it('refuses a wrong secret, and a revoked agent’s secret', async () => {
    const wrong = await cli(null, ['board', '--json'], { FORKBENCH_SOCKET: socket.path, FORKBENCH_SECRET: 'x'.repeat(43) });
    expect(wrong.code).toBe(3);
    expect(JSON.parse(wrong.stdout)).toMatchObject({ ok: false, error: { reason: '-32001' } });
    const c = registry.create('shell', 'C', 0);
    c.started(process.pid);
    expect((await cli(c, ['board'])).code).toBe(0);
    c.ended();
    registry.forgetSecret(c.id);
    expect((await cli(c, ['board'])).code).toBe(3);
  });

  it('exit codes: 2 for usage, 4 when the board cannot be reached', async () => {
    expect((await cli(a, ['renew'])).code).toBe(2);
    expect((await cli(a, ['renew', 'T-1', '--token', 'abc'])).code).toBe(2);
    expect((await cli(a, ['frobnicate'])).code).toBe(2);
    const usage = await cli(a, ['renew', '--json']);
    expect(JSON.parse(usage.stdout)).toMatchObject({ ok: false, error: { reason: 'usage' } });
    // no wait for the board to come back (test/main/cli/cliWaitsForBoard.test.ts covers that): it never will
    const gone = await cli(null, ['board', '--json'], { FORKBENCH_SOCKET: join(root, 'nope.sock'), FORKBENCH_SECRET: a.secret, FORKBENCH_BOARD_WAIT_MS: '0' });
    expect(gone.code).toBe(4);
    expect(JSON.parse(gone.stdout)).toMatchObject({ ok: false, error: { reason: 'unreachable' } });
    expect((await cli(null, ['board'])).code).toBe(4);
  });

  it('note and done without an id act on the one task the agent holds; none or two is a short usage error', async () => {
    const c = registry.create('shell', 'C', 0);
    c.started(process.pid);
    const none = await cli(c, ['note', 'fixed the parser']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/note needs a task id and you hold no task/);
    expect(none.stderr.trim().split('\n').length).toBeLessThanOrEqual(2); // its synopsis, not the whole help
    const t3 = await board.run((e) => e.addTask({ title: 'third' }));
    const t4 = await board.run((e) => e.addTask({ title: 'fourth' }));
    const id3 = (t3 as { ok: true; value: { id: string } }).value.id;
    const id4 = (t4 as { ok: true; value: { id: string } }).value.id;
    expect((await cli(c, ['claim', id3])).code).toBe(0);
    const noted = await cli(c, ['note', 'fixed', 'the', 'parser']);
    expect(noted.code).toBe(0);
    expect(noted.stderr).toContain(`note on ${id3}, the one task you hold`);
    expect(board.state.tasks.get(id3)?.notes.at(-1)?.text).toBe('fixed the parser');
    expect((await cli(c, ['claim', id4])).code).toBe(0);
    const two = await cli(c, ['done']);
    expect(two.code).toBe(2);
    expect(two.stderr).toContain(`you hold ${id3}, ${id4}: name one`);
    expect(board.state.tasks.get(id3)?.state).toBe('claimed');
    expect((await cli(c, ['release', id4])).code).toBe(0);
    const done = await cli(c, ['done', '--note', 'all green']);
    expect(done.code).toBe(0);
    expect(board.state.tasks.get(id3)?.state).toBe('review');
  });

  it('forkbench board prints a long goal cut short, with the task list right after it', async () => {
    const goal = `${'g'.repeat(5000)}`;
    await board.run((e) => e.setGoal(goal));
    const out = (await cli(a, ['board'])).stdout;
    expect(out.length).toBeLessThan(2000);
    expect(out).toMatch(/… \(4400 more characters: forkbench board --json has it all\)/);
    expect(out).toMatch(/T-1 /);
    expect(JSON.parse((await cli(a, ['board', '--json'])).stdout).result.goal).toBe(goal);
  });

  it('an oversized frame gets an error and the connection is closed; the host stays up', async () => {
    const big = `{"jsonrpc":"2.0","id":1,"method":"board","auth":"${a.secret}","params":{"x":"${'y'.repeat(MAX_FRAME_BYTES)}"}}\n`;
    const r = await raw(big, 1);
    expect(r.lines[0]).toMatchObject({ error: { code: -32600 } });
    expect((await cli(a, ['board'])).code).toBe(0);
  });

  it('malformed frames each get a JSON-RPC error', async () => {
    const frames = ['not json', '[]', '42', '{"jsonrpc":"2.0"}', `{"jsonrpc":"2.0","id":7,"method":"nope","auth":"${a.secret}"}`, `{"jsonrpc":"2.0","id":8,"method":"claim","params":{"taskId":"bogus"},"auth":"${a.secret}"}`, `{"jsonrpc":"2.0","id":9,"method":"board","params":[1],"auth":"${a.secret}"}`];
    const r = await raw(frames.join('\n') + '\n', frames.length);
    const codes = r.lines.map((l) => (l as { error: { code: number } }).error.code);
    expect(codes).toEqual([-32700, -32600, -32600, -32600, -32601, -32602, -32602]);
  });

  it('fuzz: 1,000 random frames each get an error or a close, and the host keeps answering', async () => {
    const frame = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.json(),
      fc.record({ jsonrpc: fc.constantFrom('2.0', '1.0', 2), id: fc.oneof(fc.integer(), fc.string(), fc.constant(null)), method: fc.oneof(fc.constantFrom('board', 'claim', 'renew', 'note', 'done', 'release', 'add', 'edit', 'show'), fc.string()), params: fc.anything(), auth: fc.oneof(fc.constant(a.secret), fc.string()) }).map((o) => JSON.stringify(o)),
    );
    const frames = fc.sample(frame, 1000).map((f) => f.replace(/\n/g, ' '));
    let answered = 0;
    for (let i = 0; i < frames.length; i += 100) {
      const batch = frames.slice(i, i + 100).filter((f) => f.trim());
      const r = await raw(batch.join('\n') + '\n', batch.length);
      for (const l of r.lines) {
        const resp = l as { jsonrpc: string; error?: { code: number }; result?: unknown };
        expect(resp.jsonrpc).toBe('2.0');
        expect(resp.error !== undefined || resp.result !== undefined).toBe(true);
      }
      expect(r.lines.length === batch.length || r.closed).toBe(true);
      answered += r.lines.length;
    }
    expect(answered).toBeGreaterThan(900);
    expect((await cli(a, ['board'])).code).toBe(0);
  }, 60_000);

  it('forkbench mcp exposes the same operations as tools to the SDK’s own client', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp'],
      env: { PATH: process.env.PATH ?? '', FORKBENCH_SOCKET: socket.path, FORKBENCH_SECRET: b.secret },
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(tools).toEqual(['add', 'board', 'claim', 'cost', 'dispatch', 'done', 'edit', 'fence', 'leases', 'limits', 'note', 'queue', 'queue-move', 'release', 'renew', 'show', 'status', 'usage', 'why']);
      const added = await client.callTool({ name: 'add', arguments: { title: 'from mcp' } });
      const id = JSON.parse((added.content as Array<{ text: string }>)[0]?.text as string).id as string;
      const claimed = await client.callTool({ name: 'claim', arguments: { taskId: id } });
      const token = JSON.parse((claimed.content as Array<{ text: string }>)[0]?.text as string).token as number;
      expect(board.state.tasks.get(id)?.claim).toMatchObject({ agentId: b.id, token });
      const stale = await client.callTool({ name: 'note', arguments: { taskId: id, text: 'x', token: token + 1000 } });
      expect(stale.isError).toBe(true);
      const staleText = (stale.content as Array<{ text: string }>)[0]?.text;
      expect(staleText).toMatch(/stale-token/);
      // One wording for a refusal: the tool says what the CLI prints (after its `forkbench: `) for the same call.
      const printed = await cli(b, ['note', id, 'x', '--token', String(token + 1000)]);
      expect(printed.code).toBe(3);
      expect(printed.stderr).toBe(`forkbench: ${staleText}\n`);
      const bad = await client.callTool({ name: 'claim', arguments: { taskId: 'nonsense' } });
      expect(bad.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  // The inspector (a devDependency) imports `commander` without declaring it, so package.json pins
  // commander@13 directly; otherwise electron-builder's commander@5 is hoisted and the inspector cannot start.
  it('the MCP Inspector’s CLI mode lists the tools and calls claim through forkbench mcp', async () => {
    const inspector = join(import.meta.dirname, '..', '..', '..', 'node_modules', '.bin', 'mcp-inspector');
    const env = ['-e', `FORKBENCH_SOCKET=${socket.path}`, '-e', `FORKBENCH_SECRET=${b.secret}`];
    const run = (args: string[]) =>
      new Promise<string>((resolve, reject) =>
        execFile(inspector, ['--cli', ...env, process.execPath, CLI, 'mcp', ...args], { env: { PATH: process.env.PATH } }, (err, stdout, stderr) =>
          err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
        ),
      );
    const tools = JSON.parse(await run(['--method', 'tools/list'])) as { tools: Array<{ name: string; inputSchema: { properties?: Record<string, unknown> } }> };
    expect(tools.tools.map((t) => t.name)).toContain('claim');
    expect(Object.keys(tools.tools.find((t) => t.name === 'note')?.inputSchema.properties ?? {}).sort()).toEqual(['key', 'taskId', 'text', 'token']);
    const added = await run(['--method', 'tools/call', '--tool-name', 'add', '--tool-arg', 'title=via the inspector']);
    const id = JSON.parse((JSON.parse(added) as { content: Array<{ text: string }> }).content[0]?.text as string).id as string;
    const claimed = JSON.parse(await run(['--method', 'tools/call', '--tool-name', 'claim', '--tool-arg', `taskId=${id}`])) as { content: Array<{ text: string }> };
    expect(JSON.parse(claimed.content[0]?.text as string)).toMatchObject({ taskId: id, agentId: b.id });
  }, 60_000);
});
