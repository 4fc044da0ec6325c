import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Agent } from '../../../src-main/agents/agent.js';
import { AgentRegistry } from '../../../src-main/agents/agentRegistry.js';
import { AgentSocket, socketPathFor } from '../../../src-main/agents/agentSocket.js';
import { runtimeDir } from '../../../src-main/agents/runtimeDir.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { type BoardService } from '../../../src-main/board/boardService.js';
import { CLI, ensureBuilt } from '../../helpers/cli.js';
import { legacyNote, legacyTask, legacyThread, writeLegacyJournal } from '../../helpers/legacyJournal.js';

/**
 * A board whose journal already holds terminal controls in its text, written before the board refused them
 * (issue 16): `forkbench board`, `forkbench show`, their `--json` and the MCP tools print it with every such
 * character as a visible escape, so an agent reading its board cannot have its pane retitled (OSC 0),
 * cleared (CSI 2J), its bracketed paste turned off (CSI ?2004l), its terminal made to answer (CSI 6n),
 * its clipboard written (OSC 52) or its text reordered (U+202E).
 */

/** Any raw character a terminal acts on, except the newlines the listing itself is made of. */
const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const OSC_TITLE = '\x1b]0;pwned\x07';
const EVIL_TITLE = `fix ${OSC_TITLE}the \x1b[2Jparser\x1b[?2004l \x9b6n \u202eevil\u202c`;
const EVIL_BODY = 'line one\n\x1b]52;c;cm0gLXJmIH4=\x07line two\x1b[c';
const EVIL_NOTE = 'done \x9d0;title\x9c and \x85 next \u2028 sep';

let root: string;
let board: BoardService;
let socket: AgentSocket;
let agent: Agent;

beforeAll(async () => {
  ensureBuilt();
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-oldtext-'));
  const dir = join(root, 'board');
  writeLegacyJournal(dir, [legacyThread('old', `goal \x1b[31mred\x1b[0m`), legacyTask('T-1', EVIL_TITLE, EVIL_BODY), legacyNote('T-1', EVIL_NOTE)]);
  board = await JournalBoard.open({ dir, warn: () => undefined });
  // the old text really is on the board: the board loads what its journal holds
  expect(board.state.tasks.get('T-1')?.title).toBe(EVIL_TITLE);
  const registry = new AgentRegistry();
  agent = registry.create('shell', 'A', 0);
  agent.started(process.pid);
  socket = await AgentSocket.listen(socketPathFor(runtimeDir(join(root, 'run')), 'old'), registry, board);
});
afterAll(async () => {
  await socket?.close();
  await board?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, FORKBENCH_SOCKET: socket.path, FORKBENCH_SECRET: agent.secret } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('old board text with terminal controls in it', () => {
  it('forkbench board prints no raw control character, and shows them as escapes', async () => {
    const r = await cli(['board']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    expect(r.stdout).toContain('fix \\x1b]0;pwned\\x07the \\x1b[2Jparser\\x1b[?2004l \\x9b6n \\u202eevil\\u202c');
    expect(r.stdout).toContain('Goal: goal \\x1b[31mred\\x1b[0m');
  });

  it('forkbench show prints no raw control character in the title, body or notes', async () => {
    const r = await cli(['show', 'T-1']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    expect(r.stdout).toContain('line one\n\\x1b]52;c;cm0gLXJmIH4=\\x07line two\\x1b[c');
    expect(r.stdout).toContain('done \\x9d0;title\\x9c and \\x85 next \\u2028 sep');
  });

  it('--json stays valid JSON that parses back to the text, with no raw control character', async () => {
    for (const args of [['board', '--json'], ['show', 'T-1', '--json']]) {
      const r = await cli(args);
      expect(r.code).toBe(0);
      expect(r.stdout.trimEnd()).not.toMatch(RAW);
      const out = JSON.parse(r.stdout) as { result: { title?: string; tasks?: Array<{ title: string }> } };
      expect(out.result.title ?? out.result.tasks?.[0]?.title).toBe(EVIL_TITLE);
    }
  });

  it('the MCP tools answer with no raw control character, in JSON that parses back to the text', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env: { PATH: process.env.PATH ?? '', FORKBENCH_SOCKET: socket.path, FORKBENCH_SECRET: agent.secret } });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    try {
      for (const [name, args] of [['board', {}], ['show', { taskId: 'T-1' }]] as const) {
        const res = await client.callTool({ name, arguments: args });
        const text = (res.content as Array<{ text: string }>)[0]?.text as string;
        expect(text.replace(/\n/g, '')).not.toMatch(RAW);
        const v = JSON.parse(text) as { title?: string; notes?: Array<{ text: string }>; tasks?: Array<{ title: string }> };
        expect(v.title ?? v.tasks?.[0]?.title).toBe(EVIL_TITLE);
      }
    } finally {
      await client.close();
    }
  });

  it('a refusal the CLI prints is escaped too: the board names the character without sending it', async () => {
    const r = await cli(['add', `new ${OSC_TITLE}title`]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/refused \(invalid-input\): the title has a control character U\+001B \(ESC\) at position 5/);
    expect(r.stderr).not.toMatch(RAW);
    // refused at the socket's edge (invalid params), before the engine
    const note = await cli(['note', 'T-1', `x\x9b2J`, '--json']);
    expect(note.code).toBe(3);
    expect(note.stdout.trimEnd()).not.toMatch(RAW);
    expect(JSON.parse(note.stdout)).toMatchObject({ ok: false, error: { reason: 'invalid-input', message: expect.stringContaining('U+009B (CSI) at position 2') } });
  });
});
