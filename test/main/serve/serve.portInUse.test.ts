import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureRendererBuilt } from '../../../e2e/harness.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');

let root: string;
let holder: net.Server;
let port: number;
beforeAll(async () => {
  ensureRendererBuilt();
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-port-'));
  fs.mkdirSync(join(root, 'project'));
  holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  port = (holder.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => holder.close(resolve));
  fs.rmSync(root, { recursive: true, force: true });
});

describe('forkbench serve --port N with N taken', () => {
  it('says the port is in use in one line, exits non-zero, and opens nothing', async () => {
    const proc = spawn(process.execPath, [join(ROOT, 'bin', 'forkbench.cjs'), 'serve', join(root, 'project'), '--port', String(port)], {
      env: { ...process.env, FORKBENCH_DATA_DIR: join(root, 'data'), XDG_RUNTIME_DIR: join(root, 'run') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
    expect(code).not.toBe(0);
    expect(err).toContain(`port ${port} is in use`);
    expect(err).not.toMatch(/^\s+at /m); // no stack trace
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(out).not.toContain('Open');
    // nothing opened: no Thread's board, no agents' socket
    expect(fs.existsSync(join(root, 'data', 'threads'))).toBe(false);
    expect(fs.readdirSync(root).filter((f) => f !== 'project' && f !== 'data')).toEqual([]);
    const runDir = join(root, 'run');
    expect(fs.existsSync(runDir) ? fs.readdirSync(runDir, { recursive: true }) : []).toEqual([]);
  });
});
