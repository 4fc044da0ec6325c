import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureRendererBuilt } from '../../../e2e/harness.js';
import { socketPathFor } from '../../../src-main/agents/agentSocket.js';
import { threadKeyOf } from '../../../src-main/thread/threadHost.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');

let root: string;
let project: string;
let sockPath: string;
const procs: ChildProcess[] = [];
beforeAll(() => {
  ensureRendererBuilt();
  root = fs.mkdtempSync(join(tmpdir(), 'forkbench-onehost-'));
  project = join(root, 'project');
  fs.mkdirSync(project);
  sockPath = socketPathFor(join(root, 'run', 'forkbench'), threadKeyOf(project));
});
afterAll(async () => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  fs.rmSync(root, { recursive: true, force: true });
});

/** `serve` on the project with a given data folder; one runtime folder for all, as for one user. */
function serve(data: string) {
  const proc = spawn(process.execPath, [join(ROOT, 'bin', 'forkbench.cjs'), 'serve', project], {
    env: { ...process.env, FORKBENCH_DATA_DIR: join(root, data), XDG_RUNTIME_DIR: join(root, 'run') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  procs.push(proc);
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (err += d));
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const serving = new Promise<string>((resolve, reject) => {
    proc.stdout!.on('data', () => {
      const m = /Open (http:\/\/forkbench-[0-9a-f]{32}\.localhost:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void exit.then((code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  serving.catch(() => {});
  return { proc, exit, serving, out: () => out, err: () => err };
}

/** The agents' socket answers a request (any JSON-RPC answer: here, to a line that is not JSON). */
function socketAnswers(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = net.createConnection(path);
    let got = '';
    c.on('connect', () => c.write('hello\n'));
    c.on('data', (d) => {
      got += d;
      if (got.includes('\n')) {
        c.destroy();
        resolve(got);
      }
    });
    c.on('error', reject);
  });
}

describe('one host per data folder and per Thread folder', () => {
  it('a second serve refuses and names the first, the first socket still answers; a kill -9 leaves nothing that blocks', async () => {
    const first = serve('data');
    const origin = await first.serving;
    expect(await socketAnswers(sockPath)).toContain('not JSON');

    // same data folder: refused before anything opens, pointing at the first
    const second = serve('data');
    expect(await second.exit).not.toBe(0);
    expect(second.err()).toContain(`another Forkbench host already uses the data folder ${join(root, 'data')}`);
    expect(second.err()).toContain(`pid ${first.proc.pid}) at ${origin}`);
    expect(second.out()).not.toContain('Open');

    // another data folder on the same Thread folder: the Thread's open is refused, the socket is not unlinked
    const third = serve('data2');
    expect(await third.exit).not.toBe(0);
    expect(third.err()).toContain(`${project} is open in another Forkbench host`);
    expect(third.err()).toContain(`pid ${first.proc.pid}) at ${origin}`);
    expect(fs.existsSync(sockPath)).toBe(true);
    expect(await socketAnswers(sockPath)).toContain('not JSON');

    // kill -9: lock, Thread lock and socket file stay behind, and none of them blocks the next start
    first.proc.kill('SIGKILL');
    await first.exit;
    expect(fs.existsSync(join(root, 'data', 'host.lock'))).toBe(true);
    const next = serve('data');
    const nextOrigin = await next.serving;
    expect(nextOrigin).toMatch(/^http:\/\/forkbench-[0-9a-f]{32}\.localhost:\d+$/);
    expect(await socketAnswers(sockPath)).toContain('not JSON');
    next.proc.kill('SIGINT');
    expect(await next.exit).toBe(0);
    expect(fs.existsSync(join(root, 'data', 'host.lock'))).toBe(false);
  });
});
