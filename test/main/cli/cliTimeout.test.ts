import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');

let root: string;
let mute: net.Server;
const conns = new Set<net.Socket>();
beforeAll(async () => {
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-clitimeout-'));
  // a "host" that accepts and reads but never answers: stuck, not gone
  mute = net.createServer((c) => {
    conns.add(c);
    c.on('data', () => {});
  });
  await new Promise<void>((resolve) => mute.listen(join(root, 'mute.sock'), resolve));
});
afterAll(async () => {
  for (const c of conns) c.destroy();
  await new Promise((resolve) => mute.close(resolve));
  fs.rmSync(root, { recursive: true, force: true });
});

describe('forkbench against a board that accepts but never answers', () => {
  it('exits 4 within the timeout and says the board did not answer', async () => {
    const started = performance.now();
    const proc = spawn(process.execPath, [join(ROOT, 'bin', 'forkbench.cjs'), 'board'], {
      env: { ...process.env, FORKBENCH_SOCKET: join(root, 'mute.sock'), FORKBENCH_SECRET: 'x', FORKBENCH_TIMEOUT_MS: '700' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    proc.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
    const took = performance.now() - started;
    expect(code).toBe(4);
    expect(err).toContain(`the board at ${join(root, 'mute.sock')} did not answer board within 700 ms`);
    // 700 ms of waiting plus a node start; far below a hang
    expect(took).toBeLessThan(5000);
    expect(took).toBeGreaterThanOrEqual(700);
  });
});

describe('forkbench help', () => {
  it('names the two waits with the defaults the CLI uses, from their constants', async () => {
    const { DEFAULT_BOARD_WAIT_MS, DEFAULT_CALL_TIMEOUT_MS } = await import('../../../src-main/cli/rpcClient.js');
    const out = await new Promise<string>((resolve) => {
      let text = '';
      const p = spawn(process.execPath, [join(ROOT, 'bin', 'forkbench.cjs'), 'help'], { env: { ...process.env } });
      p.stdout.on('data', (d: Buffer) => (text += d.toString()));
      p.on('close', () => resolve(text));
    });
    expect(out).toContain(`(FORKBENCH_TIMEOUT_MS, default ${DEFAULT_CALL_TIMEOUT_MS})`);
    expect(out).toContain(`(FORKBENCH_BOARD_WAIT_MS, default ${DEFAULT_BOARD_WAIT_MS})`);
  });
});
