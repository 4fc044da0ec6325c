import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureRendererBuilt } from '../../../e2e/harness.js';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { threadKeyOf } from '../../../src-main/thread/threadHost.js';
import { PtyHostClientConstants } from '../../../src-main/ptyhost/ptyHostClient.js';
import { sleep, waitFor } from '../../helpers/pty.js';
import { alive, ptyHostPidOf, serveOn, type ServeProc } from '../../helpers/serveProcess.js';
import { readProcStat } from '../../../src-main/base/procStat.js';

/**
 * Faults in the middle of an operation between serve and its pty host, with real processes: the pty host
 * stopped (SIGSTOP) while a launch waits on it, and serve killed -9 while its spawn is in the pty host's
 * socket, unread.
 */

const linux = process.platform === 'linux';
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});
beforeAll(() => ensureRendererBuilt());

async function folders() {
  const root = fs.mkdtempSync(join(tmpdir(), 'fb-ptyhost-faults-'));
  const project = join(root, 'project');
  fs.mkdirSync(project);
  const key = threadKeyOf(project);
  const serves: ServeProc[] = [];
  cleanups.push(() => {
    for (const s of serves) if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
    const pid = ptyHostPidOf(join(root, 'data'));
    if (pid && alive(pid)) {
      process.kill(pid, 'SIGCONT');
      process.kill(pid, 'SIGTERM');
    }
    fs.rmSync(root, { recursive: true, force: true });
  });
  const start = async () => {
    const s = await serveOn({ root, project, key });
    serves.push(s);
    return s;
  };
  return { root, key, start, ptyHost: () => ptyHostPidOf(join(root, 'data'))! };
}

const paneText = (s: ServeProc, agentId: string) => s.window.pushes.map((p) => (p.type === 'pane-data' && p.agentId === agentId ? p.data : '')).join('');
const type = (s: ServeProc, key: string, agentId: string, line: string) => s.window.call('agent.input', { key, agentId, data: `${line}\r` });
const launch = (s: ServeProc, key: string): Promise<AgentInfo> => s.window.call('agent.launch', { key, profile: 'shell', cols: 100, rows: 30 });

/** The processes whose parent is `pid`: a pty host's panes. */
function childrenOf(pid: number): number[] {
  const kids: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    // A process gone meanwhile reads as undefined.
    if (/^\d+$/.test(d) && readProcStat(Number(d))?.ppid === pid) kids.push(Number(d));
  }
  return kids.sort((a, b) => a - b);
}

/** Bytes the process `pid` has not read yet on its connected Unix sockets (ss's Recv-Q). */
function unread(pid: number): number {
  return execFileSync('ss', ['-xpn'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.startsWith('u_str') && l.includes(' ESTAB ') && l.includes(`pid=${pid},`))
    .reduce((sum, l) => sum + Number(l.trim().split(/\s+/)[2]), 0);
}

describe.runIf(linux)('serve and its pty host, faults in flight', () => {
  it('a pty host stopped (SIGSTOP) during a launch: the launch fails in the request bound saying so, the board answers meanwhile, and after SIGCONT the same link works and the late pane is ended', async () => {
    const f = await folders();
    const s = await f.start();
    const a = await launch(s, f.key);
    await type(s, f.key, a.id, 'echo "A"-READY');
    await waitFor(() => paneText(s, a.id).includes('A-READY\r'), 20_000, 'A to answer');
    const closing = await launch(s, f.key);
    const host = f.ptyHost();
    expect(childrenOf(host)).toEqual([a.pid, closing.pid].sort((x, y) => x! - y!));

    process.kill(host, 'SIGSTOP');
    const t0 = performance.now();
    const launching = launch(s, f.key).then(
      () => null,
      (err: Error) => ({ err, after: performance.now() - t0 }),
    );
    // The board and the window's other calls do not wait on the pty host.
    const tSnap = performance.now();
    const snap = await s.window.call('thread.snapshot', { key: f.key });
    expect(performance.now() - tSnap).toBeLessThan(2_000);
    expect(snap.agents.find((x: AgentInfo) => x.id === a.id)?.status).toBe('running');
    await s.window.call('task.add', { key: f.key, title: 'added while the pty host is stopped' });
    await type(s, f.key, a.id, 'echo "TYPED"-WHILE-STOPPED');
    const screen = s.window.call('agent.screen', { key: f.key, agentId: a.id }).then(() => performance.now() - t0);
    // Closing a pane waits for its exit, which a stopped pty host cannot report: it fails in the bound too.
    const closed = s.window.call('agent.close', { key: f.key, agentId: closing.id }).then(
      () => null,
      (err: Error) => ({ err, after: performance.now() - t0 }),
    );

    const failed = await launching;
    expect(failed, 'the launch must fail while the pty host is stopped').not.toBeNull();
    const bound = PtyHostClientConstants.requestTimeoutMs;
    expect(failed!.err.message).toContain(`did not answer spawn within ${bound / 1000} s`);
    // It waited the bound, and not much more (a loaded machine adds a little).
    expect(failed!.after).toBeGreaterThan(bound - 500);
    expect(failed!.after).toBeLessThan(bound + 5_000);
    expect(await screen).toBeLessThan(bound + 5_000);
    const closeFailed = await closed;
    expect(closeFailed?.err.message).toContain(`did not answer kill within ${bound / 1000} s`);
    expect(closeFailed!.after).toBeLessThan(bound + 5_000);
    expect(alive(host)).toBe(true);

    // Resumed: the spawn it reads now makes a pane nobody launched any more, which serve ends.
    process.kill(host, 'SIGCONT');
    // The kill it was asked for is carried out now.
    await waitFor(() => !alive(closing.pid!), 10_000, 'the closed pane to end');
    const late = await waitFor(() => /started pane \d+ \(pid (\d+)\) after its spawn was given up; ending it/.exec(s.err()), 10_000, 'serve to end the late pane');
    const latePid = Number(late![1]);
    await waitFor(() => !alive(latePid), 10_000, 'the late pane to end');
    // The same link: what was typed while stopped arrives, new input too, and a launch works.
    await waitFor(() => paneText(s, a.id).includes('TYPED-WHILE-STOPPED\r'), 10_000, 'the input typed while stopped');
    await type(s, f.key, a.id, 'echo "A"-AFTER');
    await waitFor(() => paneText(s, a.id).includes('A-AFTER\r'), 10_000, 'A after SIGCONT');
    const b = await launch(s, f.key);
    expect(b.status).toBe('running');
    expect(f.ptyHost()).toBe(host);
    expect(childrenOf(host)).toEqual([a.pid, b.pid].sort((x, y) => x! - y!));
    expect(s.err()).not.toMatch(/the pty host \(pid \d+\) is gone/);
  }, 90_000);

  it('serve killed -9 while its spawn is in the pty host, unread: the next serve takes the agent back as the one launched, says so, and its secret works', async () => {
    const f = await folders();
    const first = await f.start();
    await first.window.call('task.add', { key: f.key, title: 'for the agent nobody saw start' });
    const a = await launch(first, f.key);
    const host = f.ptyHost();
    await waitFor(() => paneText(first, a.id).length > 0, 20_000, 'A to print its prompt');
    // The prompt comes in several writes (its OSC 133 mark, then the prompt); serve reads them all before the
    // kill. A Unix socket closed with data still unread in it resets its peer: the pty host's next read is
    // ECONNRESET, and the spawn queued to it is lost with the connection (measured: 2,000 bytes sent, 0 read).
    // That is a launch lost as its board host dies, nothing of it acknowledged; this test is the spawn read.
    await waitFor(
      async () => {
        const seen = paneText(first, a.id).length;
        await sleep(250);
        return paneText(first, a.id).length === seen;
      },
      10_000,
      "serve to have read all of A's prompt",
    );

    process.kill(host, 'SIGSTOP');
    const before = unread(host);
    void launch(first, f.key).catch(() => undefined);
    // A spawn carries the agent's whole environment: kilobytes, where an ack is tens of bytes.
    await waitFor(() => unread(host) > before + 1_000, 10_000, "serve's spawn to reach the pty host's socket");
    first.proc.kill('SIGKILL');
    await first.exit;
    process.kill(host, 'SIGCONT');
    // The pty host reads the spawn (a pane no board host recorded), then the connection's end.
    await waitFor(() => childrenOf(host).length === 2, 10_000, 'the pty host to make the pane').catch((e: Error) => {
      const log = fs.readFileSync(join(f.root, 'data', 'ptyhost', 'ptyhost.log'), 'utf8').trimEnd().split('\n').slice(-12).join('\n');
      throw new Error(`${e.message}; its children: ${childrenOf(host).join(', ')} (A is ${a.pid}); unread ${unread(host)}; its log ends:\n${log}`);
    });
    const orphan = childrenOf(host).find((p) => p !== a.pid)!;

    const second = await f.start();
    const snap = await second.window.call('thread.snapshot', { key: f.key });
    const found = snap.agents.find((x: AgentInfo) => x.pid === orphan);
    expect(found, `the pane ${orphan} is nobody's agent: ${JSON.stringify(snap.agents)}`).toMatchObject({ status: 'running', profile: 'shell', name: 'shell 2' });
    expect(second.err()).toContain(`shell 2 (pid ${orphan})`);
    // It is the agent it was launched as: its secret and socket, in its environment, are accepted.
    await type(second, f.key, found!.id, 'forkbench claim T-1 && echo "CLAIMED"-ORPHAN');
    await waitFor(() => paneText(second, found!.id).includes('CLAIMED-ORPHAN\r'), 20_000, 'its claim').catch((e: Error) => {
      throw new Error(`${e.message}; pane: ${JSON.stringify(paneText(second, found!.id).slice(-400))}; serve: ${second.err()}`);
    });
    const claims = await second.window.call('thread.snapshot', { key: f.key });
    expect(claims.board.tasks.find((t: { id: string }) => t.id === 'T-1')?.claim?.agentId).toBe(found!.id);

    second.proc.kill('SIGINT');
    expect(await second.exit).toBe(0);
    await waitFor(() => !alive(orphan) && !alive(a.pid!) && !alive(host), 10_000, 'agents and pty host to end');
  }, 90_000);
});
