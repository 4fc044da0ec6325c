/**
 * The host process as serve and Electron's main both run it (src-main/process): its windows (which Thread
 * each shows, what each hears, letting go when one switches or goes) and its stop, in its one order. Plain
 * Node with the real parts: the data folder's lock, a real pty host process, agents in real ptys, the board.
 * A window here is what a transport registers: a name for flow control and a function that carries pushes.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { AgentInfo, ThreadSnapshot, WindowPush } from '../../../src-shared/protocol/windowApi.js';
import { dataLockPath } from '../../../src-main/base/hostLock.js';
import { HostProcess } from '../../../src-main/process/hostProcess.js';
import { PtyHostLink } from '../../../src-main/ptyhost/ptyHostLink.js';
import { waitFor } from '../../helpers/pty.js';
import { alive } from '../../helpers/processes.js';

/** A flood far past the high watermark a window holds a pane at (flowControl.ts), so a window that never
 *  acks and is still attached stops it for good; small enough to pass in a moment once nothing holds it. */
const FLOOD_BYTES = 4_000_000;

const roots: string[] = [];
const started: HostProcess[] = [];
const pids: number[] = [];
afterEach(async () => {
  for (const h of started.splice(0)) await h.stop({ keepAgents: false }).catch(() => h.abandon());
});
afterAll(() => {
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  for (const r of roots) fs.rmSync(r, { recursive: true, force: true });
});

/** A host process on a fresh data folder with its own pty host, and two project folders to open. */
async function hostProcess() {
  const root = fs.mkdtempSync(join(tmpdir(), 'fb-host-process-'));
  roots.push(root);
  const dataRoot = join(root, 'data');
  const folders = [join(root, 'one'), join(root, 'two')];
  for (const f of folders) fs.mkdirSync(f);
  const log: string[] = [];
  const claimed = HostProcess.claim({ dataRoot, runtimeRoot: join(root, 'run'), liveness: false, kind: 'host process test', name: 'test', warn: (m) => log.push(m) });
  if (!claimed.ok) throw new Error(claimed.message);
  const host = claimed.host;
  started.push(host);
  const link = await PtyHostLink.open(dataRoot, { warn: (m) => log.push(m) });
  pids.push(link.hostPid);
  host.usePtyHost(link);
  return { host, dataRoot, folders, link, log, root };
}

/** A window as a transport registers it: what it was sent, its calls, and (if it acks) its page's acks. */
function windowOf(host: HostProcess, consumer: string, o: { ack: boolean; shows?: string }) {
  const pushes: WindowPush[] = [];
  const call = async <T>(method: string, params: Record<string, unknown>): Promise<T> => {
    const r = await host.windows.call(method, params, consumer);
    if (!r.ok) throw new Error(`${method}: ${r.error.message}`);
    return r.value as T;
  };
  const registration = host.windows.add(
    consumer,
    (push) => {
      pushes.push(push);
      // A page acks what its terminal parsed; a frozen one never does.
      if (o.ack && push.type === 'pane-data') void call('agent.ack', { key: push.key, agentId: push.agentId, chars: push.data.length }).catch(() => undefined);
    },
    o.shows ?? null,
  );
  const paneText = (key: string, agentId: string) =>
    pushes
      .filter((p): p is Extract<WindowPush, { type: 'pane-data' }> => p.type === 'pane-data' && p.key === key && p.agentId === agentId)
      .map((p) => p.data)
      .join('');
  return { pushes, call, paneText, go: () => registration.dispose() };
}

const shell = (w: ReturnType<typeof windowOf>, key: string) => w.call<AgentInfo>('agent.launch', { key, profile: 'shell', cols: 100, rows: 30 });

describe('the host process’s windows', () => {
  it('two windows on one Thread both get its pane output; one switches Threads and gets none of the Thread it left, which no longer waits on its acks', async () => {
    const { host, folders } = await hostProcess();
    // The switching window never acks: any pane it is still attached to stops at the high watermark.
    const switching = windowOf(host, 'win-switching', { ack: false });
    const staying = windowOf(host, 'win-staying', { ack: true });
    const one = (await switching.call<{ key: string }>('threads.open', { folder: folders[0] })).key;
    const two = (await switching.call<{ key: string }>('threads.open', { folder: folders[1] })).key;
    expect(host.windows.shownBy('win-switching')).toBe(one);
    await staying.call<ThreadSnapshot>('thread.snapshot', { key: one });
    const a = await shell(staying, one);
    pids.push(a.pid!);
    for (const w of [switching, staying]) await w.call('agent.screen', { key: one, agentId: a.id });
    await staying.call('agent.input', { key: one, agentId: a.id, data: 'echo "BOTH"-SEE\r' });
    await waitFor(() => switching.paneText(one, a.id).includes('BOTH-SEE') && staying.paneText(one, a.id).includes('BOTH-SEE'), 20_000, 'both windows to see the first line');

    await switching.call<ThreadSnapshot>('thread.snapshot', { key: two });
    expect(host.windows.shownBy('win-switching')).toBe(two);
    const seen = switching.paneText(one, a.id).length;
    // In the Thread's folder: a contained pane has a private /tmp, and writes the folder of a Thread without git.
    const done = join(folders[0]!, 'flood-done');
    await staying.call('agent.input', { key: one, agentId: a.id, data: `yes flood-after-the-switch | head -c ${FLOOD_BYTES}; touch '${done}'; echo "FLOOD"-OVER\r` });
    // Finishes only if the window that left no longer holds the pane back.
    await waitFor(() => fs.existsSync(done) && staying.paneText(one, a.id).includes('FLOOD-OVER'), 60_000, 'the flood in the Thread the window left to finish');
    expect(switching.paneText(one, a.id).slice(seen)).not.toContain('flood-after-the-switch');
    // It still hears the Thread it left (its agent list, board events): only pane output is for the shown Thread.
    await staying.call('task.add', { key: one, title: 'heard by both' });
    expect(switching.pushes.some((p) => p.type === 'board-event' && p.key === one && p.event.kind === 'task-added')).toBe(true);
  }, 120_000);

  it('a window that goes is let go everywhere: the pane it held back runs on, and it is sent nothing more', async () => {
    const { host, folders } = await hostProcess();
    const frozen = windowOf(host, 'win-frozen', { ack: false });
    const other = windowOf(host, 'win-other', { ack: true });
    const one = (await frozen.call<{ key: string }>('threads.open', { folder: folders[0] })).key;
    await other.call<ThreadSnapshot>('thread.snapshot', { key: one });
    const a = await shell(other, one);
    pids.push(a.pid!);
    for (const w of [frozen, other]) await w.call('agent.screen', { key: one, agentId: a.id });
    // In the Thread's folder: a contained pane has a private /tmp, and writes the folder of a Thread without git.
    const done = join(folders[0]!, 'flood-done');
    await other.call('agent.input', { key: one, agentId: a.id, data: `yes flood-while-frozen | head -c ${FLOOD_BYTES}; touch '${done}'; echo "FLOOD"-OVER\r` });
    // The frozen window is sent the pane's output up to the point the pane stops for it.
    await waitFor(() => frozen.paneText(one, a.id).includes('flood-while-frozen'), 20_000, 'the frozen window to be sent the flood');
    frozen.go();
    const sent = frozen.pushes.length;
    await waitFor(() => fs.existsSync(done) && other.paneText(one, a.id).includes('FLOOD-OVER'), 60_000, 'the flood to finish once the frozen window went');
    expect(frozen.pushes.length).toBe(sent);
    expect(host.windows.shownBy('win-frozen')).toBeNull();
  }, 120_000);

  it('a window opened on its Thread (Electron’s window per Thread) hears that Thread only, pane output included', async () => {
    const { host, folders } = await hostProcess();
    const one = (await host.openThread(folders[0]!)).key;
    const two = (await host.openThread(folders[1]!)).key;
    const w = windowOf(host, 'ipc-1', { ack: true, shows: one });
    const b = await shell(w, two);
    pids.push(b.pid!);
    const a = await shell(w, one);
    pids.push(a.pid!);
    await w.call('agent.screen', { key: one, agentId: a.id });
    await w.call('agent.input', { key: one, agentId: a.id, data: 'echo "ONE"-SHOWN\r' });
    await waitFor(() => w.paneText(one, a.id).includes('ONE-SHOWN'), 20_000, "the shown Thread's output");
    expect(w.pushes.filter((p) => p.key === two)).toEqual([]);
  }, 60_000);
});

describe('the host process’s stop', () => {
  it('runs in its one order: windows told, claims ended and agents stopped, the transport closed, the data folder freed last; the pty host ends', async () => {
    const { host, dataRoot, folders, link } = await hostProcess();
    const w = windowOf(host, 'win', { ack: true });
    const key = (await w.call<{ key: string }>('threads.open', { folder: folders[0] })).key;
    await w.call('task.add', { key, title: 'held across the stop' });
    const a = await w.call<AgentInfo>('agent.launch', { key, profile: 'custom', command: 'forkbench claim T-1 && exec sh -i', cols: 80, rows: 24 });
    pids.push(a.pid!);
    const holder = async () => (await w.call<ThreadSnapshot>('thread.snapshot', { key })).board.tasks.find((t) => t.id === 'T-1')?.claim?.agentId;
    await waitFor(async () => (await holder()) === a.id, 20_000, 'the agent to claim T-1');
    const ptyHostPid = link.hostPid;

    const steps: string[] = [];
    const ended = () => w.pushes.some((p) => p.type === 'board-event' && p.event.kind === 'claim-ended' && p.event.reason === 'host-stopped');
    await host.stop({
      keepAgents: false,
      tellWindows: () => {
        // Nothing has ended yet: the pages hear the stop before it takes its time.
        steps.push(`told: agent ${alive(a.pid!) ? 'alive' : 'gone'}, claim ${ended() ? 'ended' : 'held'}, lock ${fs.existsSync(dataLockPath(dataRoot)) ? 'held' : 'free'}`);
      },
      closeTransport: async () => {
        steps.push(`closed: agent ${alive(a.pid!) ? 'alive' : 'gone'}, claim ${ended() ? 'ended' : 'held'}, lock ${fs.existsSync(dataLockPath(dataRoot)) ? 'held' : 'free'}`);
      },
    });
    steps.push(`stopped: lock ${fs.existsSync(dataLockPath(dataRoot)) ? 'held' : 'free'}`);
    expect(steps).toEqual([
      'told: agent alive, claim held, lock held',
      'closed: agent gone, claim ended, lock held',
      'stopped: lock free',
    ]);
    // The pty host held no other agents: it was told to end, and does.
    await waitFor(() => !alive(ptyHostPid), 10_000, 'the pty host to exit');
    // Freed: the next host process takes the folder.
    const next = HostProcess.claim({ dataRoot, kind: 'the next host', name: 'next', warn: () => undefined });
    expect(next.ok).toBe(true);
    if (next.ok) await next.host.abandonStart();
  }, 60_000);

  it('with keepAgents the agent and its claim stay in the pty host, and a second host is refused until the stop freed the folder', async () => {
    const { host, dataRoot, folders, link } = await hostProcess();
    const refused = HostProcess.claim({ dataRoot, kind: 'a second host', name: 'second', warn: () => undefined });
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.message).toContain('another Forkbench host already uses the data folder');
    const w = windowOf(host, 'win', { ack: true });
    const key = (await w.call<{ key: string }>('threads.open', { folder: folders[0] })).key;
    const a = await shell(w, key);
    pids.push(a.pid!);
    await host.stop({ keepAgents: true });
    expect(alive(a.pid!)).toBe(true);
    expect(alive(link.hostPid)).toBe(true);
    expect(w.pushes.some((p) => p.type === 'board-event' && p.event.kind === 'claim-ended')).toBe(false);
    const next = HostProcess.claim({ dataRoot, kind: 'the next host', name: 'next', warn: () => undefined });
    expect(next.ok).toBe(true);
    if (next.ok) {
      // The next start takes the agent back.
      const back = await PtyHostLink.open(dataRoot, {});
      next.host.usePtyHost(back);
      started.push(next.host);
      const thread = await next.host.openThread(folders[0]!);
      expect(thread.snapshot().agents.map((x) => [x.id, x.status])).toEqual([[a.id, 'running']]);
    }
  }, 60_000);
});
