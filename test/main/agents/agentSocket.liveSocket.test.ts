import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentRegistry } from '../../../src-main/agents/agentRegistry.js';
import { AgentSocket } from '../../../src-main/agents/agentSocket.js';
import { JournalBoard } from '../../../src-main/board/journalBoard.js';
import { type BoardService } from '../../../src-main/board/boardService.js';

let root: string;
let board: BoardService;
beforeAll(async () => {
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-livesock-'));
  board = await JournalBoard.open({ dir: join(root, 'board'), threadId: 'live' });
});
afterAll(async () => {
  await board.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const answers = (path: string) =>
  new Promise<boolean>((resolve) => {
    const c = net.createConnection(path);
    c.once('connect', () => c.write('ping\n'));
    c.once('data', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });

describe('AgentSocket.listen on a path that holds a socket', () => {
  it("never unlinks a socket another live process listens on, and replaces one whose process is gone", async () => {
    const path = join(root, 'fb-live.sock');
    // another host's socket, in another process
    const other = spawn(process.execPath, ['-e', `require('node:net').createServer((c) => c.on('data', () => c.write('pong\\n'))).listen(${JSON.stringify(path)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((resolve) => other.stdout!.once('data', resolve));
    await expect(AgentSocket.listen(path, new AgentRegistry(), board)).rejects.toThrow(`another Forkbench host is listening on ${path}`);
    expect(await answers(path)).toBe(true);
    other.kill('SIGKILL');
    await new Promise((resolve) => other.once('exit', resolve));
    expect(fs.lstatSync(path).isSocket()).toBe(true); // left behind by the kill, refused on connect
    const ours = await AgentSocket.listen(path, new AgentRegistry(), board);
    expect(await answers(path)).toBe(true);
    await ours.close();
  });
});
