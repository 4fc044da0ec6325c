/**
 * Issue 18: quitting the app with agents running asks what to do with them, and a pty host of another
 * Forkbench version is offered to be stopped. main.ts runs against a fake `electron` module (the binary
 * cannot be downloaded here) whose message boxes answer with the button a test names, but everything behind
 * it is real: the ThreadManager, the board, the data folder's lock, the pty host process and the agents'
 * ptys. Each load of main.ts is a new app start on the same data folder (vi.resetModules; the fake is
 * cleared, as the mocked module outlives the reset).
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
// Loaded here, before any reset: the mock is made once, from the same fake this file reads.
import * as electron from 'electron';
import type { AgentInfo, ThreadSnapshot } from '../../../src-shared/protocol/windowApi.js';
import { PROJECT_ROOT } from '../../../src-main/thread/cliShim.js';
import { threadKeyOf } from '../../../src-main/thread/threadHost.js';
import { PtyHostClient, PtyHostVersionError } from '../../../src-main/ptyhost/ptyHostClient.js';
import { connectPtyHost } from '../../../src-main/ptyhost/ptyHostLauncher.js';
import { ptyHostPaths } from '../../../src-main/ptyhost/protocol.js';
import { fake, resetFake } from '../../helpers/fakeElectron.js';
import { waitFor } from '../../helpers/pty.js';
import { alive, ptyHostPidOf } from '../../helpers/serveProcess.js';

vi.mock('electron', async () => (await import('../../helpers/fakeElectron.js')).fake.electron);
vi.mock('electron-store', async () => (await import('../../helpers/fakeElectron.js')).fakeStore);

const linux = process.platform === 'linux';
const PAGE_URL = pathToFileURL(join(PROJECT_ROOT, 'dist-renderer', 'index.html')).href;
const root = fs.mkdtempSync(join(tmpdir(), 'fb-electron-quit-'));
const project = join(root, 'project');
fs.mkdirSync(project);
const key = threadKeyOf(project);
// The app opens the folder named on its command line; its agents' sockets go under the runtime folder.
process.argv.push(project);
process.env.XDG_RUNTIME_DIR = join(root, 'run');
fs.mkdirSync(process.env.XDG_RUNTIME_DIR, { mode: 0o700 });
const pids: number[] = [];
afterAll(() => {
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  for (const d of fs.readdirSync(root)) {
    const pid = d.startsWith('data') ? ptyHostPidOf(join(root, d)) : null;
    if (pid && alive(pid)) process.kill(pid, 'SIGTERM');
  }
  fs.rmSync(root, { recursive: true, force: true });
});

/** A start of the app on `dataDir`: main.ts loaded afresh against a fresh fake Electron. */
async function startApp(dataDir: string, o: { answers?: string[]; window?: boolean } = {}) {
  vi.resetModules();
  resetFake();
  expect(electron.app).toBe(fake.electron.app);
  fake.dataDir.path = dataDir;
  fake.answers.push(...(o.answers ?? []));
  await import('../../../src-main/electron/main.js');
  if (o.window !== false) await vi.waitFor(() => expect(fake.windows.length).toBe(1), { timeout: 30_000 });
  const handler = () => fake.electron.ipcMain.handle.mock.calls[0]![1] as (e: unknown, m: string, p: unknown) => Promise<{ ok: boolean; value?: unknown; error?: { message: string } }>;
  /** A call from the Thread's (newest) window, as its page makes it. */
  const call = async <T>(method: string, params: Record<string, unknown>): Promise<T> => {
    const win = fake.windows[fake.windows.length - 1]!;
    const r = await handler()({ sender: win.webContents, senderFrame: { parent: null, url: `${PAGE_URL}?thread=${key}` } }, method, { key, ...params });
    if (!r.ok) throw new Error(`${method}: ${r.error?.message}`);
    return r.value as T;
  };
  /** As Cmd+Q: Electron's app.quit, which asks the before-quit listeners first. */
  const quit = () => fake.electron.app.quit();
  return { fake, call, quit };
}

type App = Awaited<ReturnType<typeof startApp>>;

/** An agent that claims T-1 and prints a line, then waits at a prompt. */
async function claimingAgent(app: App): Promise<AgentInfo> {
  await app.call('task.add', { title: 'kept across a quit' });
  const a = await app.call<AgentInfo>('agent.launch', { profile: 'custom', command: 'forkbench claim T-1 && echo "BEFORE"-QUIT; exec sh -i', cols: 80, rows: 24 });
  pids.push(a.pid!);
  await vi.waitFor(async () => expect(await holderOf(app)).toMatchObject({ agentId: a.id }), { timeout: 20_000 });
  await vi.waitFor(async () => expect(await app.call<string>('agent.screen', { agentId: a.id })).toContain('BEFORE-QUIT'), { timeout: 10_000 });
  return a;
}

async function holderOf(app: App): Promise<{ agentId: string; token: number } | null> {
  const snap = await app.call<ThreadSnapshot>('thread.snapshot', {});
  const claim = snap.board.tasks.find((t) => t.id === 'T-1')?.claim;
  return claim ? { agentId: claim.agentId, token: claim.token } : null;
}

/** The board's own files for the Thread (not the agents' folders beside them). */
function journal(dataDir: string): string {
  const dir = join(dataDir, 'threads', key);
  return fs.readdirSync(dir, { withFileTypes: true }).filter((f) => f.isFile()).map((f) => fs.readFileSync(join(dir, f.name), 'utf8')).join('');
}

const lockFile = (dataDir: string) => fs.readdirSync(dataDir).filter((f) => f.endsWith('.lock'));

describe.runIf(linux)('quitting the app with agents running', () => {
  it('asks; Cancel quits nothing, Keep leaves agents and claims in the pty host, the next start takes them back, Stop ends them; with none running it does not ask', async () => {
    const data = join(root, 'data');
    const first = await startApp(data);
    const a = await claimingAgent(first);
    const claimed = (await holderOf(first))!;
    const ptyHost = ptyHostPidOf(data)!;
    expect(ptyHost).toBeGreaterThan(0);

    // Cancel: no quit; the agent, its claim and the window go on.
    first.fake.answers.push('Cancel');
    first.quit();
    await vi.waitFor(() => expect(first.fake.messageBoxes.length).toBe(1));
    const box = first.fake.messageBoxes[0]!;
    expect(box.message).toBe('1 agent is still running');
    expect(box.buttons).toEqual(['Stop agents', 'Keep running in background', 'Cancel']);
    expect(box.buttons[box.cancelId!]).toBe('Cancel');
    expect(box.detail).toContain('If it does not start within 1 h, they are stopped then');
    await vi.waitFor(() => expect(first.fake.answers.length).toBe(0));
    expect(first.fake.quit.done).toBe(false);
    expect(await holderOf(first)).toEqual(claimed);
    expect(alive(a.pid!)).toBe(true);

    // The last window closed makes a quit too; Cancel then brings the Thread's window back.
    first.fake.answers.push('Cancel');
    first.fake.windows[0]!.close();
    for (const l of first.fake.listeners.get('window-all-closed') ?? []) l();
    await vi.waitFor(() => expect(first.fake.windows.length).toBe(2), { timeout: 10_000 });
    expect(first.fake.messageBoxes.length).toBe(2);
    expect(first.fake.quit.done).toBe(false);
    expect(await first.call<string>('agent.screen', { agentId: a.id })).toContain('BEFORE-QUIT');

    // Keep: the app quits, the agent runs on in the pty host holding its claim, the data folder is free.
    first.fake.answers.push('Keep running in background');
    first.quit();
    await vi.waitFor(() => expect(first.fake.quit.done).toBe(true), { timeout: 20_000 });
    expect(alive(a.pid!)).toBe(true);
    expect(alive(ptyHost)).toBe(true);
    expect(journal(data)).not.toContain('host-stopped');
    expect(lockFile(data)).toEqual([]);

    // The next start: no question on the way in; the same agent (same pid) holds the same claim and screen.
    const second = await startApp(data);
    const back = (await second.call<ThreadSnapshot>('thread.snapshot', {})).agents.find((x) => x.id === a.id);
    expect(back).toMatchObject({ status: 'running', pid: a.pid });
    expect(await holderOf(second)).toEqual(claimed);
    expect(await second.call<string>('agent.screen', { agentId: a.id })).toContain('BEFORE-QUIT');
    expect(ptyHostPidOf(data)).toBe(ptyHost);
    expect(second.fake.messageBoxes).toEqual([]);

    // Stop: the agent ends, its claim is released as host-stopped, the pty host exits.
    second.fake.answers.push('Stop agents');
    second.quit();
    await vi.waitFor(() => expect(second.fake.quit.done).toBe(true), { timeout: 20_000 });
    expect(second.fake.messageBoxes.map((b) => b.message)).toEqual(['1 agent is still running']);
    await waitFor(() => !alive(a.pid!) && !alive(ptyHost), 10_000, 'the agent and the pty host to end');
    expect(journal(data)).toContain('host-stopped');

    // Nothing running: no question, straight out.
    const third = await startApp(data);
    third.quit();
    await vi.waitFor(() => expect(third.fake.quit.done).toBe(true), { timeout: 20_000 });
    expect(third.fake.messageBoxes).toEqual([]);
  }, 120_000);
});

describe.runIf(linux)('a quit nobody is there to answer', () => {
  it("the system's shutdown asks nothing, delays the shutdown while it leaves, and keeps the agents and their claims for the next start", async () => {
    const data = join(root, 'data-shutdown');
    const first = await startApp(data);
    const a = await claimingAgent(first);
    const claimed = (await holderOf(first))!;
    const onShutdown = first.fake.electron.powerMonitor.on.mock.calls.filter((c) => c[0] === 'shutdown').map((c) => c[1] as (e: { preventDefault(): void }) => void);
    expect(onShutdown.length).toBe(1);
    const delayed = vi.fn();
    onShutdown[0]!({ preventDefault: delayed });
    await vi.waitFor(() => expect(first.fake.quit.done).toBe(true), { timeout: 20_000 });
    expect(delayed).toHaveBeenCalled();
    // No question: a dialog here would hold the quit until the session killed the app.
    expect(first.fake.messageBoxes).toEqual([]);
    expect(alive(a.pid!)).toBe(true);
    expect(journal(data)).not.toContain('host-stopped');

    const second = await startApp(data);
    expect(await holderOf(second)).toEqual(claimed);
    second.fake.answers.push('Stop agents');
    second.quit();
    await vi.waitFor(() => expect(second.fake.quit.done).toBe(true), { timeout: 20_000 });
    await waitFor(() => !alive(a.pid!), 10_000, 'the agent to end');
  }, 120_000);
});

describe.runIf(linux)('a pty host of another Forkbench version at start', () => {
  it('Quit leaves it and its agents running; "Stop it and its agents" ends them and the app runs on a new pty host', async () => {
    const data = join(root, 'data-other');
    const refused = (await connectPtyHost(data, { ptyHostVersion: '0.0.0-other' }).catch((e: unknown) => e)) as PtyHostVersionError;
    expect(refused).toBeInstanceOf(PtyHostVersionError);
    const oldPid = refused.theirs.pid;
    pids.push(oldPid);
    const theirs = await PtyHostClient.connect(ptyHostPaths(data).socket, '0.0.0-other');
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), LANG: 'C.UTF-8' };
    const meta = { threadKey: key, agentId: 'old-agent', secretDigest: 'd'.repeat(64), socketPath: '/tmp/nowhere.sock', profile: 'shell', name: 'shell 1' };
    const oldAgent = await theirs.spawn('/bin/sh', ['-c', 'exec sleep 300'], { cwd: project, env, cols: 80, rows: 24 }, meta);
    pids.push(oldAgent.pid);
    theirs.leave();

    // Quit: nothing is stopped, no error box, the app exits and frees the data folder.
    const declined = await startApp(data, { answers: ['Quit'], window: false });
    await vi.waitFor(() => expect(declined.fake.electron.app.exit).toHaveBeenCalledWith(1), { timeout: 20_000 });
    const box = declined.fake.messageBoxes[0]!;
    expect(box.message).toBe("Forkbench 0.0.0-other still runs agents for this data folder");
    expect(box.buttons).toEqual(['Stop it and its agents', 'Quit']);
    expect(box.detail).toContain(`pid ${oldPid}`);
    expect(declined.fake.electron.dialog.showErrorBox).not.toHaveBeenCalled();
    expect(alive(oldPid) && alive(oldAgent.pid)).toBe(true);
    expect(lockFile(data)).toEqual([]);

    // Stop it: the old pty host and its agent end; the app's agents run in its own new pty host.
    const app = await startApp(data, { answers: ['Stop it and its agents'] });
    await waitFor(() => !alive(oldPid) && !alive(oldAgent.pid), 10_000, 'the old pty host and its agent to end');
    const a = await app.call<AgentInfo>('agent.launch', { profile: 'custom', command: 'exec sleep 300', cols: 80, rows: 24 });
    pids.push(a.pid!);
    const ppid = Number(fs.readFileSync(`/proc/${a.pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1]);
    const newPid = ptyHostPidOf(data)!;
    expect(newPid).not.toBe(oldPid);
    expect(ppid).toBe(newPid);
    app.fake.answers.push('Stop agents');
    app.quit();
    await vi.waitFor(() => expect(app.fake.quit.done).toBe(true), { timeout: 20_000 });
    await waitFor(() => !alive(a.pid!) && !alive(newPid), 10_000, 'the agent and the new pty host to end');
  }, 120_000);
});
