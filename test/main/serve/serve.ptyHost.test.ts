import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { threadKeyOf } from '../../../src-main/thread/threadHost.js';
import { PtyHostClient, PtyHostVersionError } from '../../../src-main/ptyhost/ptyHostClient.js';
import { connectPtyHost } from '../../../src-main/ptyhost/ptyHostLauncher.js';
import { ptyHostPaths } from '../../../src-main/ptyhost/protocol.js';
import { FlowLimits } from '../../../src-shared/terminal/flowLimits.js';
import { readProcStat } from '../../../src-main/base/procStat.js';
import { descendantsOf, listProcesses, readProcFacts } from '../../../src-main/pty/procReader.js';
import { sleep, waitFor } from '../../helpers/pty.js';
import { alive, ptyHostPidOf, serveOn, servedProjectOfThisFile, type ServeProc } from '../../helpers/serveProcess.js';

const { at, start: startServe, killAfter } = servedProjectOfThisFile('fb-ptyhost-serve-');
const start = (args: string[] = []) => startServe({ args });

/** Everything a pane printed to this window (its pushes), as text. Markers are echoed as "X"-Y, so the
 *  echo of the typed line never matches the output X-Y. */
function paneText(s: ServeProc, agentId: string): string {
  return s.window.pushes.map((p) => (p.type === 'pane-data' && p.agentId === agentId ? p.data : '')).join('');
}

const type = (s: ServeProc, agentId: string, line: string) => s.window.call('agent.input', { key: at.key, agentId, data: `${line}\r` });

async function claimsOf(s: ServeProc): Promise<Map<string, { agentId: string; token: number }>> {
  const snap = await s.window.call('thread.snapshot', { key: at.key });
  const m = new Map<string, { agentId: string; token: number }>();
  for (const t of snap.board.tasks) if (t.claim) m.set(t.id, { agentId: t.claim.agentId, token: t.claim.token });
  return m;
}

describe('agents outlive serve in the pty host', () => {
  it('kill -9 of serve mid-flood: the next serve has the same agents, pids, screens, claims and tokens; renew is accepted; an agent gone meanwhile lost its claim as agent-exited', async () => {
    const { root, key } = at;
    const first = await start();
    for (const title of ['flood work', 'quiet work', 'doomed work']) await first.window.call('task.add', { key, title });
    const launch = () => first.window.call('agent.launch', { key, profile: 'shell', cols: 100, rows: 30 });
    const a: AgentInfo = await launch();
    const b: AgentInfo = await launch();
    const c: AgentInfo = await launch();
    for (const [agent, task] of [[a, 'T-1'], [b, 'T-2'], [c, 'T-3']] as const) {
      await type(first, agent.id, `forkbench claim ${task} && echo "CLAIMED"-${task}`);
      await waitFor(() => paneText(first, agent.id).includes(`CLAIMED-${task}\r`), 20_000, `${task} claimed`).catch((e: Error) => {
        throw new Error(`${e.message}; pane: ${JSON.stringify(paneText(first, agent.id).slice(-600))}; serve: ${first.err()}`);
      });
    }
    await type(first, b.id, 'echo "BEFORE"-MARK-B');
    await waitFor(() => paneText(first, b.id).includes('BEFORE-MARK-B\r'), 10_000, 'B mark');
    // A floods in the background (its shell still takes input): ~40 MB, still running when serve dies.
    await type(first, a.id, '(yes flood-line-of-a | head -c 40000000; echo; echo "FLOOD"-DONE) &');
    await waitFor(() => paneText(first, a.id).split('flood-line-of-a').length > 1000, 20_000, 'the flood to run');
    const before = await claimsOf(first);
    expect([...before.keys()].sort()).toEqual(['T-1', 'T-2', 'T-3']);
    const ptyHost = ptyHostPidOf(join(root, 'data'));
    expect(ptyHost).not.toBeNull();

    expect(paneText(first, a.id), 'the flood is still running when serve dies').not.toContain('FLOOD-DONE');
    first.proc.kill('SIGKILL');
    await first.exit;
    // While no board host runs: the pty host and the agents live on; C is killed.
    expect(alive(ptyHost!)).toBe(true);
    expect(alive(a.pid!) && alive(b.pid!)).toBe(true);
    process.kill(c.pid!, 'SIGKILL');
    await waitFor(() => !alive(c.pid!), 5000, 'C to die');

    const second = await start();
    const snap = await second.window.call('thread.snapshot', { key });
    const agents = new Map(snap.agents.map((x) => [x.id, x]));
    expect(agents.get(a.id)).toMatchObject({ status: 'running', pid: a.pid, name: a.name });
    expect(agents.get(b.id)).toMatchObject({ status: 'running', pid: b.pid, name: b.name });
    // C, dead while no board host ran, has no tab: it is listed as ended, found gone (issue 32: the window
    // lists the agents the last run ended, with Relaunch).
    expect(agents.get(c.id)).toMatchObject({ status: 'exited', pid: null, lastRun: { how: 'found-gone' } });
    // Claims kept, same holders and tokens; C's ended once, as agent-exited.
    const after = await claimsOf(second);
    expect(after.get('T-1')).toEqual(before.get('T-1'));
    expect(after.get('T-2')).toEqual(before.get('T-2'));
    expect(after.has('T-3')).toBe(false);
    const ends = snap.log.filter((e: BoardEvent) => e.kind === 'claim-ended' && e.taskId === 'T-3');
    expect(ends).toMatchObject([{ agentId: c.id, reason: 'agent-exited' }]);
    const graced = snap.log.filter((e: BoardEvent) => e.kind === 'renew' && e.via === 'grace').map((e) => (e as { taskId: string }).taskId);
    expect(graced.sort()).toEqual(['T-1', 'T-2']);
    expect(snap.log.some((e: BoardEvent) => e.kind === 'claim-ended' && e.reason === 'host-restarted')).toBe(false);

    // Screens come back from the pty host's mirrors.
    expect(await second.window.call('agent.screen', { key, agentId: b.id })).toContain('BEFORE-MARK-B');
    expect(await second.window.call('agent.screen', { key, agentId: a.id })).toContain('flood-line-of-a');

    // Their next board calls are accepted under the same secret (the same socket path serves them again).
    await type(second, b.id, 'forkbench renew T-2 && echo "RENEWED"-B');
    await waitFor(() => paneText(second, b.id).includes('RENEWED-B\r'), 20_000, 'B renew');
    await waitFor(() => paneText(second, a.id).includes('FLOOD-DONE'), 60_000, 'the flood to end');
    await type(second, a.id, 'forkbench renew T-1 && echo "RENEWED"-A');
    await waitFor(() => paneText(second, a.id).includes('RENEWED-A\r'), 20_000, 'A renew');
    const renewed = await second.window.call('thread.snapshot', { key });
    const writes = renewed.log.filter((e: BoardEvent) => e.kind === 'renew' && e.via === 'write').map((e) => (e as { agentId: string }).agentId);
    expect(writes).toEqual(expect.arrayContaining([a.id, b.id]));

    // Ctrl-C without --keep-agents stops as before: agents ended, claims released, the pty host gone.
    second.proc.kill('SIGINT');
    expect(await second.exit).toBe(0);
    await waitFor(() => !alive(a.pid!) && !alive(b.pid!) && !alive(ptyHost!), 10_000, 'agents and pty host to end');
  });
});

describe('serve --keep-agents and the idle pty host', () => {
  it('Ctrl-C with --keep-agents leaves agents and claims; with no board host for the idle time the pty host ends them and exits', async () => {
    const idleRoot = fs.mkdtempSync(join(tmpdir(), 'fb-ptyhost-idle-'));
    const proj = join(idleRoot, 'project');
    fs.mkdirSync(proj);
    const k = threadKeyOf(proj);
    try {
      // 3 s: long enough to see the agent outlive serve, short enough for a test.
      const env = { FORKBENCH_PTY_HOST_IDLE_MS: '3000' };
      const s = await serveOn({ root: idleRoot, project: proj, key: k, env, args: ['--keep-agents'] });
      killAfter(s);
      await s.window.call('task.add', { key: k, title: 'kept' });
      const a = await s.window.call('agent.launch', { key: k, profile: 'shell', cols: 80, rows: 24 });
      await s.window.call('agent.input', { key: k, agentId: a.id, data: 'forkbench claim T-1 && echo "CLAIMED"-1\r' });
      const text = () => s.window.pushes.map((p) => (p.type === 'pane-data' && p.agentId === a.id ? p.data : '')).join('');
      await waitFor(() => text().includes('CLAIMED-1\r'), 20_000, 'the claim');
      const ptyHost = ptyHostPidOf(join(idleRoot, 'data'))!;
      s.proc.kill('SIGINT');
      expect(await s.exit).toBe(0);
      expect(s.err()).toContain(`agents keep running in the pty host (pid ${ptyHost})`);
      expect(alive(a.pid!)).toBe(true);
      // Its claim was not released on the way out.
      // The board's files (the Thread's folder also holds the agents' own folders, which are not its journal).
      const threadDir = join(idleRoot, 'data', 'threads', k);
      const journal = fs.readdirSync(threadDir, { withFileTypes: true }).filter((f) => f.isFile()).map((f) => fs.readFileSync(join(threadDir, f.name), 'utf8')).join('');
      expect(journal).not.toContain('host-stopped');
      await waitFor(() => !alive(a.pid!) && !alive(ptyHost), 15_000, 'the idle pty host to end its agent and exit');
      expect(fs.readFileSync(join(idleRoot, 'data', 'ptyhost', 'ptyhost.log'), 'utf8')).toContain('stopping: no board host for 3 s');
    } finally {
      fs.rmSync(idleRoot, { recursive: true, force: true });
    }
  });
});

describe('a pty host of another Forkbench version', () => {
  it('serve refuses it and names --replace-pty-host; with it, the old pty host and its agents end and serve runs on a new one', async () => {
    const otherRoot = fs.mkdtempSync(join(tmpdir(), 'fb-ptyhost-other-'));
    const proj = join(otherRoot, 'project');
    fs.mkdirSync(proj);
    const k = threadKeyOf(proj);
    const data = join(otherRoot, 'data');
    let oldPid = 0;
    try {
      // The other version's pty host, holding an agent its own board host started.
      const refused = (await connectPtyHost(data, { ptyHostVersion: '0.0.0-other' }).catch((e: unknown) => e)) as PtyHostVersionError;
      expect(refused).toBeInstanceOf(PtyHostVersionError);
      oldPid = refused.theirs.pid;
      const theirs = await PtyHostClient.connect(ptyHostPaths(data).socket, '0.0.0-other');
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), LANG: 'C.UTF-8' };
      const meta = { threadKey: k, agentId: 'old-agent', secretDigest: 'd'.repeat(64), socketPath: '/tmp/nowhere.sock', profile: 'shell', name: 'shell 1' };
      const oldAgent = await theirs.spawn('/bin/sh', ['-c', 'exec sleep 300'], { cwd: proj, env, cols: 80, rows: 24 }, meta);
      theirs.leave();

      // Without the flag: refused, with the way out named; nothing is stopped.
      const err = await serveOn({ root: otherRoot, project: proj, key: k }).then(
        () => null,
        (e: Error) => e.message,
      );
      expect(err).toMatch(/^serve exited 1: forkbench serve: cannot use the pty host: a pty host of Forkbench 0\.0\.0-other/);
      expect(err).toContain('forkbench serve --replace-pty-host');
      expect(alive(oldPid) && alive(oldAgent.pid)).toBe(true);

      // With it: the old one ends with its agent, serve starts its own and runs agents there.
      const s = await serveOn({ root: otherRoot, project: proj, key: k, args: ['--replace-pty-host'] });
      killAfter(s);
      expect(s.err()).toContain(`stopped the pty host of Forkbench 0.0.0-other (pid ${oldPid}) and its agents; starting this version's`);
      expect(alive(oldPid)).toBe(false);
      expect(alive(oldAgent.pid)).toBe(false);
      const newPid = ptyHostPidOf(data);
      expect(newPid).not.toBe(oldPid);
      const a = await s.window.call('agent.launch', { key: k, profile: 'custom', command: 'exec sleep 300', cols: 80, rows: 24 });
      expect(alive(a.pid!)).toBe(true);
      // It is the new pty host's child.
      expect(readProcStat(a.pid!)?.ppid).toBe(newPid);
      s.proc.kill('SIGINT');
      expect(await s.exit).toBe(0);
      await waitFor(() => !alive(a.pid!) && !alive(newPid!), 10_000, 'serve to end its agent and its pty host');
    } finally {
      if (oldPid && alive(oldPid)) process.kill(oldPid, 'SIGKILL');
      const pid = ptyHostPidOf(data);
      if (pid && alive(pid)) process.kill(pid, 'SIGTERM');
      fs.rmSync(otherRoot, { recursive: true, force: true });
    }
  });
});

describe('flow control from a window through serve and the pty host', () => {
  /** The child has stopped: asleep and no CPU gained over three polls in a row (it blocked in write(2)). A
   *  flood also blocks for moments while its reader catches up; the checks after this one tell the two apart. */
  async function blocked(pid: number): Promise<void> {
    const deadline = performance.now() + 15_000;
    let last = (await readProcFacts(pid)).cpuMs;
    let still = 0;
    while (still < 3) {
      if (performance.now() > deadline) throw new Error('the flooding child never blocked');
      await sleep(100);
      const f = await readProcFacts(pid);
      still = f.state === 'sleeping' && f.cpuMs === last ? still + 1 : 0;
      last = f.cpuMs;
    }
  }

  async function running(pid: number): Promise<void> {
    const cpu0 = (await readProcFacts(pid)).cpuMs;
    // `yes` at full speed uses a core; 200 ms of CPU is far past what a blocked one could gather.
    const deadline = performance.now() + 10_000;
    for (;;) {
      const f = await readProcFacts(pid);
      if (f.cpuMs - cpu0 > 200) return;
      if (performance.now() > deadline) throw new Error(`the child stayed blocked (state ${f.state}, +${f.cpuMs - cpu0} ms CPU)`);
      await sleep(20);
    }
  }

  /** The pane's `yes`. A pane's pid is its sandbox's (bwrap, which only waits), and the agent's command runs
   *  below it: the one that writes, blocks and runs again is that process. */
  async function flooderOf(pane: number): Promise<number> {
    return waitFor(async () => descendantsOf(await listProcesses(), pane).find((p) => p.comm === 'yes')?.pid, 10_000, "the pane's yes to start");
  }

  it('a window that never acks blocks a flooding agent held in the pty host; its ack, then its going, release it', async () => {
    const flowRoot = fs.mkdtempSync(join(tmpdir(), 'fb-ptyhost-flow-serve-'));
    const proj = join(flowRoot, 'project');
    fs.mkdirSync(proj);
    const k = threadKeyOf(proj);
    try {
      const s = await serveOn({ root: flowRoot, project: proj, key: k, ack: false });
      killAfter(s);
      const a = await s.window.call('agent.launch', { key: k, profile: 'custom', command: 'exec yes flood', cols: 80, rows: 24 });
      // Counted from the screen's answer on: output pushed before it is inside the screen (pushes and answers
      // share one ordered channel), the window drops it as its page does (paneFeed.ts), and the pty host never
      // counted it for this window, which was not yet one of its consumers. Counting it too measured how far
      // the flood got between the launch and the screen (104,192 chars over the bound once, on a loaded run).
      const paneChars = (from: number) => s.window.pushes.slice(from).reduce((n, p) => n + (p.type === 'pane-data' && p.agentId === a.id ? p.data.length : 0), 0);
      // The window shows the pane (it becomes one of its consumers) and then never acks.
      const { pushesBefore } = await s.window.callPlaced('agent.screen', { key: k, agentId: a.id });
      let chars = paneChars(pushesBefore);
      s.window.onPush((p) => {
        if (p.type === 'pane-data' && p.agentId === a.id) chars += p.data.length;
      });
      const yes = await flooderOf(a.pid!);
      await blocked(yes);
      const cpu0 = (await readProcFacts(yes)).cpuMs;
      await sleep(500);
      const facts = await readProcFacts(yes);
      expect(facts.state).toBe('sleeping');
      expect(facts.cpuMs - cpu0).toBeLessThanOrEqual(20);
      // What reached a window that acked nothing is bounded by the window it may be behind, plus the read chunk
      // of the pty (64 KiB) taken before the pause. Not "little arrived after the block": what serve and the
      // socket still held then arrives later on a loaded machine (379,108 chars in one CI run at load 11),
      // without the agent writing a byte more.
      expect(chars).toBeLessThanOrEqual(FlowLimits.highWatermarkChars + 64 * 1024);

      // Its ack lets the flood on for another window's worth.
      const acked = chars;
      await s.window.call('agent.ack', { key: k, agentId: a.id, chars: acked });
      await waitFor(() => chars > acked + FlowLimits.lowWatermarkChars, 15_000, 'output after the ack');
      await blocked(yes);
      // The page goes away (its WebSocket closes): the pane runs on, paced by the mirrors alone.
      s.window.close();
      await running(yes);
      s.proc.kill('SIGINT');
      expect(await s.exit).toBe(0);
    } finally {
      // A failure above leaves serve to afterAll's kill -9, which leaves its pty host: end it here.
      const pid = ptyHostPidOf(join(flowRoot, 'data'));
      if (pid && alive(pid)) process.kill(pid, 'SIGTERM');
      fs.rmSync(flowRoot, { recursive: true, force: true });
    }
  });
});
